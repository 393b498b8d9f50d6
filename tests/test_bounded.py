"""core/bounded.py: the one bounded reader refuses links, FIFOs, devices and anything over its cap."""

from __future__ import annotations

import io
import os

import pytest

from generator.core.bounded import iter_lines, read_regular_file, read_stream
from generator.core.errors import InputError


def test_a_regular_file_under_the_cap_is_read_whole(tmp_path):
    f = tmp_path / "a.png"
    f.write_bytes(b"x" * 100)
    assert read_regular_file(f, 100) == b"x" * 100


def test_a_file_over_the_cap_is_refused(tmp_path):
    f = tmp_path / "a.png"
    f.write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="larger than 100 bytes"):
        read_regular_file(f, 100)


def test_a_link_is_refused_even_to_a_small_regular_file(tmp_path):
    (tmp_path / "real.png").write_bytes(b"ok")
    (tmp_path / "link.png").symlink_to(tmp_path / "real.png")
    with pytest.raises(InputError, match="symbolic link"):
        read_regular_file(tmp_path / "link.png", 100)


def test_a_device_and_a_fifo_are_refused_without_blocking(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        read_regular_file("/dev/zero", 1 << 20)
    fifo = tmp_path / "icon.png"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_regular_file(fifo, 100)


def test_a_stream_stops_past_its_cap():
    assert read_stream(io.BytesIO(b"a" * 10), 10) == b"a" * 10
    with pytest.raises(InputError, match="larger than 10 bytes"):
        read_stream(io.BytesIO(b"a" * 11), 10)


def test_lines_are_bounded_in_all_and_each():
    assert list(iter_lines(io.BytesIO(b"one\ntwo\r\nthree"), 100)) == [b"one", b"two", b"three"]
    cut = list(iter_lines(io.BytesIO(b"x" * 50 + b"\nnext\n"), 1000, max_line=8))
    assert cut == [b"x" * 8, b"next"]
    with pytest.raises(InputError):
        list(iter_lines(io.BytesIO(b"line\n" * 100), 50))


def test_read_sized_reads_by_the_stated_size_and_on_up_to_the_cap_when_the_file_grew():
    """read_sized asks for the size the stat gave (+1); where more came (the file grew), it reads on to cap + 1, so
    the caller still sees an overrun; it never reads past cap + 1."""
    import io

    from generator.core.bounded import read_sized

    assert read_sized(io.BytesIO(b"abcd"), 4, 10) == b"abcd"
    assert read_sized(io.BytesIO(b"abcdefgh"), 4, 10) == b"abcdefgh"  # grew from 4 to 8 bytes: read whole
    assert read_sized(io.BytesIO(b"x" * 20), 4, 10) == b"x" * 11  # grew past the cap: cap + 1, refused by the caller
    assert read_sized(io.BytesIO(b"x" * 20), 15, 10) == b"x" * 11  # stated past the cap: cap + 1 at most
    assert read_sized(io.BytesIO(b"x" * 10), 10, 10) == b"x" * 10
