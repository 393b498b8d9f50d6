"""The escapes of generator/core/terminal.py and generator/core/text.py skip their regex for a printable text: every
character their classes escape must be unprintable, or a printable text would keep one."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from generator.core import terminal, text


@pytest.mark.parametrize("pattern", [terminal._UNSAFE, terminal._UNSAFE[:-1] + "\n]", text._UNSAFE])
def test_every_escaped_character_is_unprintable(pattern: str) -> None:
    every = "".join(map(chr, range(0x110000)))
    assert all(not every[m.start()].isprintable() for m in re.finditer(pattern, every))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \t\n\r\x1b\x7f\x85\u200e\u2028\u202e\u2066\ufeff\ud800é中"), max_size=12))
def test_the_escapes_match_their_regex(value: str) -> None:
    assert terminal.printable(value) == re.sub(terminal._UNSAFE[:-1] + "\n]", terminal._visible, value)
    assert terminal.printable(value, newlines=True) == re.sub(terminal._UNSAFE, terminal._visible, value)
    assert text.safe_line(value) == re.sub(text._UNSAFE, text._escape, value)
