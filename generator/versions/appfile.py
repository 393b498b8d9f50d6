"""Edit an app file in place: its `version` line and the newest line of `upgrade_description`, nothing else.

A full ruamel round-trip dump re-wraps flow sequences written over several lines (the catalog's
`extra_args: [...]`), so the file is not re-emitted: ruamel's round-trip loader gives the line and
column of the two nodes, only those lines are replaced, and the result is parsed again and compared
with the expected data before it is written (comments, key order, quoting and flow style of every
other line stay byte-identical).
"""

from __future__ import annotations

import os
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

from generator.core import InputError, Problem
from generator.core import atomic_write_text
from generator.yamlio import parse_document, read_document

NOTE_FIELD = "upgrade_description"
AFTER_KEYS = ("removed_on", "reason", "replaced_by", "status", "version")  # where a new note goes


def _load(text: str) -> CommentedMap:
    doc: CommentedMap = YAML(typ="rt").load(text)
    return doc


def _fail(path: Path, line: int | None, field: str | None, message: str) -> InputError:
    return InputError([Problem(os.path.relpath(path), line, field, message)])


def _set_version(path: Path, lines: list[str], doc: CommentedMap, new: str) -> None:
    row, col = doc.lc.value("version")
    old = str(doc["version"])
    line = lines[row]
    quote = line[col] if line[col] in "'\"" else ""
    token = f"{quote}{old}{quote}"
    if not line.startswith(token, col):
        raise _fail(path, row + 1, "version", "cannot find the version value on its line; write it as `version: X.Y.Z`")
    lines[row] = line[:col] + f"{quote}{new}{quote}" + line[col + len(token):]


def _value_end(doc: CommentedMap, key: str, total: int) -> int:
    """First line after `key`'s value: the next top-level key's line, or the end of the file."""
    keys = list(doc)
    index = keys.index(key)
    return doc.lc.key(keys[index + 1])[0] if index + 1 < len(keys) else total


def _note_lines(note: str, existing: object) -> list[str]:
    """A `>-` block whose first line is the new note, followed by the old text."""
    out = [f"{NOTE_FIELD}: >-\n", f"  {note}\n"]
    if existing is not None and str(existing).strip():
        out += [f"  {part}\n" for part in str(existing).strip().splitlines() if part.strip()]
    return out


def _add_note(lines: list[str], doc: CommentedMap, note: str) -> None:
    if NOTE_FIELD not in doc:
        anchor = next(k for k in AFTER_KEYS if k in doc)
        at = _value_end(doc, anchor, len(lines))
        while at > 0 and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
            at -= 1  # keep a comment with the key it introduces
        lines[at:at] = _note_lines(note, None)
        return
    value = doc[NOTE_FIELD]
    row = doc.lc.key(NOTE_FIELD)[0]
    if isinstance(value, (FoldedScalarString, LiteralScalarString)):
        first = row + 1
        while first < len(lines) and not lines[first].strip():
            first += 1
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())] if first < len(lines) else "  "
        lines.insert(row + 1, f"{indent or '  '}{note}\n")
        return
    end = _value_end(doc, NOTE_FIELD, len(lines))
    while end > row + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    lines[row:end] = _note_lines(note, value)


def edit_app_file(path: Path, *, version: str, note: str | None) -> str:
    """The new text of the app file (not written); raises CatalogError when it cannot be done safely."""
    text = path.read_text(encoding="utf-8")
    doc = _load(text)
    if not isinstance(doc, CommentedMap) or "version" not in doc:
        raise _fail(path, 1, "version", "no top-level `version:`; add `version: 1.0.0`")
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    _set_version(path, lines, doc, version)
    existing = doc.get(NOTE_FIELD)
    if note and not str(existing or "").startswith(f"{version}: "):
        _add_note(lines, doc, note)
    new_text = "".join(lines)
    _verify(path, text, new_text, version, note)
    return new_text


def _verify(path: Path, old_text: str, new_text: str, version: str, note: str | None) -> None:
    """Everything but `version` and `upgrade_description` must read back unchanged. The new text is parsed in
    memory: no scratch file (a fixed scratch name beside the app file could be a planted symbolic link)."""
    after = parse_document(new_text, str(path), path).data
    before = read_document(path, str(path)).data
    if path.read_text(encoding="utf-8") != old_text:
        raise _fail(path, None, None, "the file changed while it was being edited; run the command again")
    rest_before = {k: v for k, v in before.items() if k not in ("version", NOTE_FIELD)}
    rest_after = {k: v for k, v in after.items() if k not in ("version", NOTE_FIELD)}
    noted = not note or str(after.get(NOTE_FIELD, "")).startswith(f"{version}: ")
    if rest_before != rest_after or after.get("version") != version or not noted:
        raise _fail(path, None, "version", "editing the version would change other fields; edit the file by hand")


def write_app_file(path: Path, *, version: str, note: str | None) -> None:
    atomic_write_text(path, edit_app_file(path, version=version, note=note))
