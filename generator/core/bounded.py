"""One bounded reader for files and streams: nothing the tool reads can make it hold more than a stated number of
bytes, block on a FIFO or a device, or follow a link out of where it was pointed.

- `read_regular_file(path, limit)` opens the path itself (`O_NOFOLLOW`: a symbolic link is refused, not followed;
  `O_NONBLOCK`: a FIFO never blocks the open), checks on the open descriptor that it is a regular file (so
  `/dev/zero`, a FIFO or a socket is refused whatever its name), and reads at most `limit` bytes: a file that
  grows past the cap while it is read is refused as well, not truncated silently.
- `read_stream(stream, limit)` reads a binary stream (standard input, a pipe from `kubectl logs -f`) in chunks and
  stops with an error once more than `limit` bytes arrived; `iter_lines(stream, limit)` does the same line by line
  for parsers that need only one line at a time.

Every cap is a number a caller names (docs/security.md lists them with their reasons); an overrun is an
`InputError` naming the path and the cap, so the CLI prints `path: what, how to fix` and exits non-zero.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from generator.core.errors import InputError, Problem, translate_os_error
from generator.core.text import safe_line

_CHUNK = 1 << 16


def _too_large(name: str, limit: int, what: str) -> InputError:
    return InputError([Problem(name, None, None,
                               f"{what} is larger than {limit:,} bytes, the most catalog reads; "
                               "point it at a smaller file")])


def read_regular_file(path: Path | str, limit: int, what: str = "the file") -> bytes:
    """The bytes of a regular file of at most `limit` bytes; a link, a FIFO, a device or a larger file is an
    InputError (a missing file or a permission problem is the FileSystemError `translate_os_error` gives)."""
    name = safe_line(str(path))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise InputError([Problem(name, None, None, f"{what} is a symbolic link; catalog reads only regular "
                                      "files, never through a link (replace the link with the file)")]) from exc
        raise translate_os_error(exc, path, "read") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError([Problem(name, None, None, f"{what} is not a regular file (a device, FIFO or "
                                      "socket); replace it with a regular file")])
        if info.st_size > limit:
            raise _too_large(name, limit, what)
        parts: list[bytes] = []
        got = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
            if got > limit:
                raise _too_large(name, limit, what)
        return b"".join(parts)
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from exc
    finally:
        os.close(fd)


def read_sized(fh: BinaryIO, size: int, cap: int) -> bytes:
    """At most `cap + 1` bytes of an open file whose stat said `size`: read by that size (+1, to see that it grew),
    then on up to the cap where it did. Not by the cap: `read(n)` allocates n bytes first, and 16 MiB for each of a
    store's ~8,000 chart files was seconds of `catalog serve`'s start. The caller refuses a result over `cap`."""
    want = min(size, cap) + 1
    data = fh.read(want)
    if len(data) == want and want <= cap:  # it grew since the stat: read on, up to the cap
        data += fh.read(cap + 1 - want)
    return data


def read_stream(stream: BinaryIO, limit: int, name: str = "<stdin>", what: str = "the input") -> bytes:
    """At most `limit` bytes of a binary stream; more is an InputError (the rest is never read)."""
    parts: list[bytes] = []
    got = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - got))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        got += len(chunk)
        if got > limit:
            raise _too_large(safe_line(name), limit, what)


def iter_lines(stream: BinaryIO, limit: int, name: str = "<stdin>", what: str = "the input",
               max_line: int = 1 << 20) -> Iterator[bytes]:
    """The stream's lines (without their end), reading at most `limit` bytes in all; a line longer than
    `max_line` is cut to `max_line` bytes (the rest of it is skipped, still counted against `limit`)."""
    got = 0
    while True:
        line = stream.readline(max_line + 1)
        if not line:
            return
        got += len(line)
        if got > limit:
            raise _too_large(safe_line(name), limit, what)
        if len(line) > max_line and not line.endswith(b"\n"):
            while True:  # skip the rest of an over-long line, still within the total cap
                rest = stream.readline(_CHUNK)
                got += len(rest)
                if got > limit:
                    raise _too_large(safe_line(name), limit, what)
                if not rest or rest.endswith(b"\n"):
                    break
            yield line[:max_line]
            continue
        yield line.rstrip(b"\r\n")


__all__ = ["iter_lines", "read_regular_file", "read_stream"]
