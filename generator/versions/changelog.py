"""The apps section of CHANGELOG.md (beside the catalog folder), newest entry first.

    ## Apps

    ### vllmqwen36turbo27bone 2.5.7 — 2026-11-29
    - Removed `--prefix-caching-hash-algo xxhash`
"""

from __future__ import annotations

import re
from pathlib import Path

from generator.core import atomic_write_text
from generator.core import safe_line

SECTION = "## Apps"
INTRO = "Entries written by `catalog bump` (docs/versioning.md), newest first."
NEW_FILE = "# Changelog\n\nAll notable changes are recorded here ([Keep a Changelog](https://keepachangelog.com/en/1.1.0/)).\n"


def changelog_path(catalog_root: Path) -> Path:
    return catalog_root.resolve().parent / "CHANGELOG.md"


def heading(app: str, version: str, date: str) -> str:
    return f"### {app} {version} — {date}"


def has_entry(text: str, app: str, version: str) -> bool:
    return re.search(rf"^### {re.escape(app)} {re.escape(version)} — ", text, re.MULTILINE) is not None


def _section_insert_point(text: str) -> tuple[str, int]:
    """The text (with an apps section added when missing) and where the newest entry goes."""
    match = re.search(rf"^{re.escape(SECTION)}[ \t]*$", text, re.MULTILINE)
    if match is None:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{INTRO}\n\n"
        return text, len(text)
    start = match.end()
    nxt = re.compile(r"^#{2,3} ", re.MULTILINE).search(text, start)
    if nxt is None:
        text = text.rstrip("\n") + "\n\n"
        return text, len(text)
    return text, nxt.start()


def add_entry(text: str, app: str, version: str, date: str, bullets: list[str]) -> str:
    """`text` with the entry inserted first in the apps section; unchanged when the entry exists."""
    if has_entry(text, app, version):
        return text
    text, at = _section_insert_point(text or NEW_FILE)
    entry = heading(app, version, date) + "\n" + "".join(f"{safe_line(b)}\n" for b in bullets) + "\n"
    return text[:at] + entry + text[at:]


def write_entries(path: Path, entries: list[tuple[str, str, str, list[str]]]) -> None:
    text = path.read_text(encoding="utf-8") if path.is_file() else NEW_FILE
    new = text
    for app, version, date, bullets in reversed(entries):  # each goes first: keep the given order
        new = add_entry(new, app, version, date, bullets)
    if new != text:
        atomic_write_text(path, new)
