"""Attacks on the terminal through catalog text: ESC sequences (retitle, clear screen, recolour) and rich
markup (`[/bold]` crashed `list` with MarkupError) in a title, an env value, a YAML key. The output is not
a terminal here, so rich adds no escape sequence of its own: any ESC on stdout/stderr came from the input.
"""

from __future__ import annotations

from pathlib import Path

from support.catalogs import edit_app
from support.hostile_http import APP, catalog_copy, no_traceback, run_catalog

ESCAPES = "\x1b]0;pw\x07\x1b[2J"  # OSC "set window title", then "clear screen" (ECMA-48)
RAW = ("\x1b", "\x07", "\x9b")


def _clean(text: str) -> None:
    for char in RAW:
        assert char not in text, f"{char!r} reached the terminal:\n{text!r}"


def test_explain_escape_sequences_in_catalog_text_are_shown_as_text(tmp_path: Path):
    cat = catalog_copy(tmp_path)
    edit_app(cat, APP, title="E" + ESCAPES + "[/bold] x", env={"GREETING": "hi" + ESCAPES + "\x9b31m"})
    ran = run_catalog("explain", APP, "--catalog", str(cat))
    no_traceback(ran)
    assert ran.code == 0, ran.err
    _clean(ran.out + ran.err)
    assert "E\\x1b]0;pw\\x07\\x1b[2J[/bold] x" in ran.out
    assert "hi\\x1b]0;pw\\x07\\x1b[2J\\x9b31m" in ran.out


def test_list_rich_markup_in_title_is_shown_not_interpreted(tmp_path: Path):
    cat = catalog_copy(tmp_path)
    edit_app(cat, APP, title="[/bold] x" + ESCAPES)
    ran = run_catalog("list", "--catalog", str(cat), env={"COLUMNS": "400"})
    no_traceback(ran)
    assert ran.code == 0, ran.err
    _clean(ran.out + ran.err)
    assert "[/bold] x\\x1b]0;pw" in ran.out


def test_error_message_escape_sequences_are_shown_as_text(tmp_path: Path):
    """An unknown key holding ESC: the `file:line:` message names it without sending the sequence."""
    cat = catalog_copy(tmp_path)
    path = cat / "apps" / f"{APP}.yaml"
    path.write_text(path.read_text() + '"evil\\e[2J\\e]0;pw\\a": 1\n')
    ran = run_catalog("list", "--catalog", str(cat))
    no_traceback(ran)
    assert ran.code == 1
    _clean(ran.out + ran.err)
    assert "evil\\x1b[2J\\x1b]0;pw\\x07" in ran.err and f"{APP}.yaml:" in ran.err
