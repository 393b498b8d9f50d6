"""Catalog files as people write them (short lists and mappings in flow style, long text as blocks), and
the `--update` edit of an existing app file.

The update does not re-emit the file: ruamel's round-trip loader gives each top-level key's line range,
only the ranges of the fields that differ are replaced (a field that went back to its default is
removed, a new one is inserted after the field that precedes it in the App model), and the result is
read back and compared with the intended data before anything is written. Every other line (comments,
key order, quoting, hand-wrapped flow lists) stays byte-identical; a comment at the end of a replaced
key's line is kept.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from generator.core import Data
from generator.core import InputError, Problem, translate_os_error
from generator.schema import MAX_ITEMS
from generator.yamlio import read_document

FLOW_LISTS = {"owners", "genesis_patches", "extra_args", "tokens", "aliases", "features", "spec_methods", "command",
              "args", "runs"}
FLOW_MAPS = {"speculative", "resources", "full_attention", "sliding_attention", "recurrent"}
WIDTH = 118  # flow collections longer than this are written as blocks; scalars are never wrapped
_PLAIN_BLOCK = re.compile(r"^[^\t\r\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]*$")


def _literal_ok(text: str) -> bool:
    if "\n" not in text or not _PLAIN_BLOCK.match(text):
        return False
    lines = text.split("\n")
    return all(line == line.rstrip(" ") for line in lines) and not text.startswith((" ", "\n"))


def _fits(key: str, node: Any, indent: int) -> bool:
    """Whether `key: [flow collection]` fits on one line of WIDTH characters."""
    buf = io.StringIO()
    probe = CommentedMap()
    probe[key] = node
    _yaml().dump(probe, buf)
    text = buf.getvalue()
    return text.count("\n") == 1 and indent + len(text) - 1 <= WIDTH


def _styled(value: Any, key: str | None = None, indent: int = 0) -> Any:
    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _styled(v, str(k), indent + 2 if key is not None else indent)
        if key in FLOW_MAPS:
            out.fa.set_flow_style()
            if not _fits(key, out, indent):
                out.fa.set_block_style()
        return out
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_styled(v, None, indent + 4) for v in value)
        if key in FLOW_LISTS:
            seq.fa.set_flow_style()
            if not _fits(key, seq, indent):
                seq.fa.set_block_style()
        return seq
    if isinstance(value, str):
        if _literal_ok(value):
            return LiteralScalarString(value)
        if not _PLAIN_BLOCK.match(value) or value != value.strip() or "\n" in value:
            return DoubleQuotedScalarString(value)
    return value


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    return yaml


def _scalar_text(value: Any) -> str:
    """How ruamel writes one scalar inside a flow collection."""
    seq = CommentedSeq([_styled(value)])
    seq.fa.set_flow_style()
    buf = io.StringIO()
    _yaml().dump(seq, buf)
    text = buf.getvalue().strip()[1:-1]
    if len(text) > 1 and text[0] == text[-1] == "'" and not any(c in text[1:-1] for c in "'\\\""):
        text = f'"{text[1:-1]}"'  # the catalog's own quoting: "8", not '8'
    return text


def _wrapped_flow(key: str, value: Any) -> list[str] | None:
    """`key: [a, b,` / `      c]` wrapped under the first item, as the catalog's files are written by hand; None
    when the value is not a flat list or mapping of scalars."""
    if isinstance(value, dict) and key in FLOW_MAPS \
            and all(not isinstance(v, (dict, list, tuple)) for v in value.values()):
        pieces = [f"{_scalar_text(k)}: {_scalar_text(v)}" for k, v in value.items()]
        opening, closing = "{", "}"
    elif isinstance(value, (list, tuple)) and key in FLOW_LISTS and all(not isinstance(v, (dict, list, tuple))
                                                                         for v in value):
        pieces = [_scalar_text(v) for v in value]
        opening, closing = "[", "]"
    else:
        return None
    if any("\n" in p for p in pieces):
        return None
    head = f"{key}: {opening}"
    lines: list[str] = []
    current = head
    for index, piece in enumerate(pieces):
        tail = closing if index == len(pieces) - 1 else ","
        if current.strip() not in (head.strip(),) and len(current) + 1 + len(piece) + len(tail) > WIDTH:
            lines.append(current.rstrip() + "\n")
            current = " " * len(head)
        elif current != head and not current.endswith(" "):
            current += " "
        current += piece + tail
    if not pieces:
        current += closing
    lines.append(current + "\n")
    return lines


def _within_caps(key: str, value: Any) -> None:
    """InputError before any object is built for a list or mapping longer than the schema allows (MAX_ITEMS):
    styling builds a YAML node per item, so a 300,000-word ENGINE_ARGS took 144 s only to be refused later."""
    stack = [(key, value)]
    while stack:
        name, item = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if len(item) > MAX_ITEMS:
                raise InputError([Problem(None, None, name, f"{len(item)} entries; a catalog list or mapping holds "
                                                            f"at most {MAX_ITEMS}: refused before it is written")])
            stack += ((f"{name}.{k}", v) for k, v in item.items()) if isinstance(item, dict) \
                else ((f"{name}[{i}]", v) for i, v in enumerate(item))


def emit_key(key: str, value: Any, flow: bool | None = None) -> list[str]:
    """`key: value` as lines; `flow` False forces a block collection (the replaced value was a block)."""
    _within_caps(key, value)
    if flow is not False:
        wrapped = _wrapped_flow(key, value)
        if wrapped is not None:
            return wrapped
    styled = CommentedMap()
    styled[key] = _styled(value, key)
    inner = styled[key]
    if flow is False and isinstance(inner, (CommentedMap, CommentedSeq)):
        inner.fa.set_block_style()
    buf = io.StringIO()
    _yaml().dump(styled, buf)
    return buf.getvalue().splitlines(keepends=True)


def emit(data: dict[str, Data], header: list[str] | None = None) -> str:
    head = "".join(f"# {line}\n" if line else "#\n" for line in header or ())
    return head + "".join("".join(emit_key(str(k), v)) for k, v in data.items())


def _ranges(doc: CommentedMap, lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each top-level key's [first, end) line range, without the blank and comment lines that follow it."""
    keys = list(doc)
    out: dict[str, tuple[int, int]] = {}
    for index, key in enumerate(keys):
        start = doc.lc.key(key)[0]
        end = doc.lc.key(keys[index + 1])[0] if index + 1 < len(keys) else len(lines)
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        out[str(key)] = (start, end)
    return out


def _eol_comment(doc: CommentedMap, key: str) -> str | None:
    item = doc.ca.items.get(key)
    tokens = [t for t in (item or [])[2:3] if t is not None]
    value = doc.get(key)
    if not tokens and isinstance(value, (CommentedMap, CommentedSeq)) and value.ca.comment:
        tokens = [t for t in value.ca.comment[:1] if t is not None]
    for token in tokens:
        text = getattr(token, "value", "")
        if text.strip().startswith("#") and "\n" in text and text.count("\n") == 1:
            return text.strip()
    return None


def update_text(path: Path, text: str, changes: Mapping[str, object], removals: list[str], order: tuple[str, ...],
                expected: Mapping[str, object]) -> str:
    """The app file with `changes` set and `removals` deleted, everything else byte-identical."""
    doc = YAML(typ="rt").load(text)
    if not isinstance(doc, CommentedMap):
        raise InputError([Problem(str(path), 1, None, "not a YAML mapping; edit it by hand")])
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    ranges = _ranges(doc, lines)
    edits: list[tuple[int, int, list[str]]] = []
    for key, value in changes.items():
        if key in ranges:
            start, end = ranges[key]
            old = doc[key]
            flow = old.fa.flow_style() if isinstance(old, (CommentedMap, CommentedSeq)) else None
            new = emit_key(key, value, flow)
            comment = _eol_comment(doc, key)
            if comment and "#" not in new[0] and not new[0].rstrip().endswith(("|", "|-", ">", ">-")):
                new[0] = new[0].rstrip("\n") + f"  {comment}\n"
            edits.append((start, end, new))
        else:
            position = order.index(key)
            before = [k for k in order[:position] if k in ranges]
            at = ranges[before[-1]][1] if before else _first_key_line(ranges)
            edits.append((at, at, emit_key(key, value, None)))
    for key in removals:
        if key in ranges:
            start, end = ranges[key]
            edits.append((start, end, []))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[start:end] = new
    new_text = "".join(lines)
    _verify(path, new_text, expected)
    return new_text


def _first_key_line(ranges: dict[str, tuple[int, int]]) -> int:
    return min((r[0] for r in ranges.values()), default=0)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def read_back(path: Path, text: str) -> Any:
    """The data `text` reads as through the catalog's own loader (from a temporary file, never the catalog)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix="catalog-import-", suffix=".yaml")
    except OSError as exc:
        raise translate_os_error(exc, tempfile.gettempdir(), "write") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return read_document(Path(tmp), str(path)).data
    except OSError as exc:  # a full disk: the message names the file (`write` errors carry no path)
        raise translate_os_error(exc, tmp, "write") from exc
    finally:
        os.unlink(tmp)


def _verify(path: Path, text: str, expected: Mapping[str, object]) -> None:
    if _plain(read_back(path, text)) != _plain(expected):
        raise InputError([Problem(str(path), None, None, "the edited file would not read back as intended; edit it "
                                                         "by hand (nothing was written)")])


__all__ = ["emit", "emit_key", "read_back", "update_text"]
