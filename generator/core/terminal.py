"""Untrusted text on a terminal: no escape sequence, no control character, no rich markup gets through.

Text from outside the tool (a catalog value, a server's answer, an error of git or Helm) may hold an
ESC sequence that recolours, retitles or clears the terminal (ECMA-48 CSI/OSC,
https://ecma-international.org/publications-and-standards/standards/ecma-48/), a carriage return that
overwrites the line before it, a bidirectional override that reorders what the reader sees
(Unicode TR #9, https://www.unicode.org/reports/tr9/), a lone surrogate that cannot be encoded, or a
`[bold]`-style tag that rich would interpret (https://rich.readthedocs.io/en/stable/markup.html) and
that raises `MarkupError` when unbalanced (`[/bold] x`). `printable()` shows each of those characters
as a visible escape (`\\x1b`, `\\r`, `\\u202e`); `markup()` also escapes rich markup, for text placed
inside a markup string or a table cell.

The CI-log half (a newline that starts a `::warning` workflow command) is a different output with its
own escaping; this module is for the terminal.
"""

from __future__ import annotations

import re
from functools import cache

# C0 controls but tab and newline, DEL, C1 controls, the bidi embeddings/overrides/isolates, line and
# paragraph separators, and lone surrogates: every one of them unprintable (`str.isprintable`).
_UNSAFE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ud800-\udfff]"


@cache
def _unsafe(newlines: bool) -> re.Pattern[str]:
    """The characters `printable` escapes (with the newline unless `newlines`), compiled on first use: a class
    holding the surrogates costs millions of instructions to compile, and most runs print only plain text."""
    return re.compile(_UNSAFE if newlines else _UNSAFE[:-1] + "\n]")


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` with every control character shown as an escape; newlines kept only when `newlines`."""
    if text.isprintable():  # nothing `_unsafe` finds is printable: plain text comes back unchanged
        return text
    return _unsafe(newlines).sub(_visible, text)


def markup(text: str, *, newlines: bool = False) -> str:
    """`printable(text)` with rich markup escaped: safe inside `console.print(f"[bold]{...}[/]")` and cells."""
    from rich.markup import escape

    return escape(printable(text, newlines=newlines))


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    named = {"\n": "\\n", "\r": "\\r"}
    if char in named:
        return named[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


__all__ = ["markup", "printable"]
