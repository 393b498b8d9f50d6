"""The emitter's set of characters that force a double-quoted scalar (generator/yamlio/yamlout.py `_SPECIAL`) is,
code point by code point, the complement of the ranges it is safe to emit raw."""

import re

from generator.yamlio.yamlout import _SPECIAL

SAFE = re.compile("[\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def test_special_is_every_code_point_outside_the_safe_ranges() -> None:
    every = "".join(map(chr, range(0x110000)))
    special = {m.start() for m in _SPECIAL.finditer(every)}
    safe = {m.start() for m in SAFE.finditer(every)}
    assert special.isdisjoint(safe)
    assert len(special) + len(safe) == 0x110000
    assert {0x0D, 0x7F, 0x85, 0x2028, 0xFEFF, 0xD800, 0xFFFE} <= special and {0x09, 0x0A, 0x20, 0xA0} <= safe
