"""Untrusted text on one line: the one escaper for everything printed to a terminal or a CI log.

Catalog values, YAML keys, file names and server answers reach messages. A raw newline in one of them
starts a new line of the CI log, where `::warning file=...::` or `::error ...` is read as a GitHub
Actions workflow command (https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions);
an ESC byte starts a terminal control sequence. `safe_line` makes such text inert and still readable:
every control character (C0, DEL, C1), the Unicode line and paragraph separators, and the bidirectional
overrides (which reorder what the reader sees, CVE-2021-42574 "Trojan Source") are written as Python-style
escapes (`\\n`, `\\x1b`, `\\u2028`); everything else, including non-ASCII letters, stays as it is.
"""

from __future__ import annotations

import re
from functools import cache

# C0 controls, DEL, C1 controls (NEL U+0085 included), the line/paragraph separators, the bidi embeddings,
# overrides and isolates, the directional marks, BOM, and lone surrogates (unprintable, and a UnicodeEncodeError
# on a UTF-8 terminal).
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@cache
def _unsafe() -> re.Pattern[str]:
    """`_UNSAFE` compiled on first use (only a line that is not `isprintable` needs it)."""
    return re.compile(_UNSAFE)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_line(text: object, limit: int | None = None) -> str:
    """`text` as one inert line: control characters and line breaks escaped; cut to `limit` characters
    (with `…`) when given. Plain text comes back unchanged (the common case costs one `isprintable`)."""
    value = text if isinstance(text, str) else str(text)
    if not value.isprintable():
        value = _unsafe().sub(_escape, value)
    if limit is not None and len(value) > limit:
        value = value[: max(limit - 1, 0)] + "…"
    return value


__all__ = ["safe_line"]


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 app`, `2 apps`, `0 apps`: a count with its noun (`words`: an irregular plural)."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"
