"""Deterministic YAML emission that keeps catalog text inert.

Emission goes through PyYAML's libyaml emitter (fast, and a YAML 1.1 representer: `yes`, `on`, `1_000`,
`1:20` come out quoted, so Go's YAML 1.1 readers in Helm and Olares read them as strings too). Strings
holding `{{` or `}}` are written double-quoted with those braces escaped (`\\x7B`, `\\x7D`): the value reads
back unchanged, yet no file we emit contains Helm template syntax (Olares lint rejects `{{` in
OlaresManifest.yaml, and Helm never sees catalog text as a template). Reading uses ruamel.yaml.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml import YAML

from generator.yamlio.resolve import CachedScalarResolve

# Characters safe to emit raw in plain, single-quoted and block scalars. Anything else (C0/C1 controls,
# DEL, the YAML 1.1 line breaks NEL/LS/PS, \r, a BOM, non-characters) goes double-quoted, where the
# emitter escapes it: raw, a reader rejects it or turns it into a line break. Written as the set itself rather than
# as the complement of the safe ranges (`[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd
# \U00010000-\U0010ffff]`), the same characters: compiling that negated class took ~12x longer, on every start.
_SPECIAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_STR = "tag:yaml.org,2002:str"
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_BOOL, _INT, _NULL = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:null"
# What other readers take for a non-string but PyYAML's YAML 1.1 resolver does not: YAML 1.2 numbers
# (`0E0`, `1e5`, `0o17`; ruamel, Go's yaml.v3) and go-yaml v2's one-letter booleans (`y`, `N`: Helm reads
# values with it). Quoted too, so every reader gets the string back.
# ruamel's YAML 1.2 number patterns also take `_` between digits (`1_000`, `._`), so they do here too.
_AMBIGUOUS = re.compile(r"^[-+]?(\.[0-9_]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$|^0o[0-7_]+$"
                        r"|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$|^[yYnN]$")


class _Dumper(CachedScalarResolve, getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


@lru_cache(maxsize=8192)
def _str_style(value: str) -> str | None:
    if _SPECIAL.search(value) or "{{" in value or "}}" in value:
        return '"'
    if "\n" in value:
        return "|"
    if _AMBIGUOUS.match(value):
        return "'"
    return None


def _node(value: Any) -> Node:
    """The representation graph of plain data, built in one pass (PyYAML's representer does the same walk
    with alias bookkeeping we never need: ~2x slower); other types go through PyYAML's safe representer."""
    if isinstance(value, str):
        return ScalarNode(_STR, value, style=_str_style(value))
    if isinstance(value, dict):
        return MappingNode(_MAP, [(_node(k), _node(v)) for k, v in value.items()], flow_style=False)
    if isinstance(value, (list, tuple)):
        return SequenceNode(_SEQ, [_node(v) for v in value], flow_style=False)
    if value is True or value is False:
        return ScalarNode(_BOOL, "true" if value else "false")
    if type(value) is int:
        return ScalarNode(_INT, str(value))
    if value is None:
        return ScalarNode(_NULL, "null")
    return yaml.representer.SafeRepresenter(default_flow_style=False).represent_data(value)


def _escape_braces(text: str) -> str:
    """Every string holding `{{`/`}}` was emitted double-quoted, the only place those pairs can occur in
    our output (empty collections print as `{}`): escaping them there keeps the value and drops the syntax."""
    return text.replace("{{", "\\x7B\\x7B").replace("}}", "\\x7D\\x7D")


_WIDTH = 4096


def _libyaml(data: Any) -> str:
    return yaml.serialize(_node(data), Dumper=_Dumper, width=_WIDTH, allow_unicode=True)


def dump(data: Any) -> str:
    text = _block(data)
    return _escape_braces(_libyaml(data) if text is None else text)


# ---- the same bytes, laid out here ----------------------------------------------------------------------------
# Most of what we emit is a block mapping of mappings, sequences and strings; libyaml's output for it is regular:
# `key: scalar`, `key:` and the nested mapping two spaces in, a sequence under a key at the key's own indent
# (`- item`), a mapping in a sequence starting on the dash's line, `{}` / `[]` for empty collections. What is not
# regular is how each scalar is written (plain, quoted, escaped, a literal block and its header): libyaml decides
# that, once per distinct string, every unseen string of a document in one batch (a sequence of them, the same
# block context as a mapping value). Anything else (other types, a key libyaml writes as `? key`, a line that
# could reach the fold width, nested sequences, a `|+` block) falls back to libyaml for the whole document;
# tests/test_yamlout.py compares the two on generated data.

_MEMO_LIMIT = 16384
_values: dict[str, tuple[str, ...]] = {}  # string -> its lines as a sequence item: (text,) or (header, *lines)
_keys: dict[str, str] = {}  # string -> its text as a block mapping key
_FOLD_SAFE = _WIDTH - 96  # a line shorter than this cannot reach libyaml's fold column
_INLINE = {True: "true", False: "false", None: "null"}


class _Irregular(Exception):
    """The document holds something laid out only by libyaml."""


def _learn(strings: list[str], keys: list[str]) -> None:
    """libyaml's text of each string as a sequence item and of each key, from one emission of each batch."""
    if strings:
        _learn_values(strings)
    if keys:
        _learn_keys(keys)


def _learn_values(strings: list[str]) -> None:
    out = _libyaml(strings).split("\n")
    items: list[list[str]] = []
    for line in out[:-1]:
        if line.startswith("- ") or line == "-":
            items.append([line[2:]])
        elif items and (line.startswith("  ") or line == ""):
            items[-1].append(line[2:])
        else:
            raise _Irregular
    if len(items) != len(strings) or out[-1] != "":
        raise _Irregular
    if len(_values) + len(strings) > _MEMO_LIMIT:
        _values.clear()
    for value, lines in zip(strings, items, strict=True):
        head = lines[0]
        if len(lines) > 1 and not (head[:1] in ("|", ">") and "+" not in head):
            raise _Irregular  # a folded quoted or plain scalar, or a kept block's open end
        _values[value] = tuple(lines)


def _learn_keys(keys: list[str]) -> None:
    out = _libyaml({k: 0 for k in keys}).split("\n")
    if len(out) != len(keys) + 1 or out[-1] != "":
        raise _Irregular
    if len(_keys) + len(keys) > _MEMO_LIMIT:
        _keys.clear()
    for key, line in zip(keys, out[:-1], strict=True):
        if not line.endswith(": 0") or line.startswith("? "):
            raise _Irregular
        _keys[key] = line[:-3]


def _unseen(data: Any, strings: dict[str, None], keys: dict[str, None]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(key, str):
                raise _Irregular
            if key not in _keys:
                keys[key] = None
            _unseen(value, strings, keys)
    elif isinstance(data, (list, tuple)):
        for item in data:
            if isinstance(item, (list, tuple)) and item:
                raise _Irregular  # `- - x`
            _unseen(item, strings, keys)
    elif isinstance(data, str):
        if data not in _values:
            strings[data] = None
    elif not (data is None or data is True or data is False or type(data) is int):
        raise _Irregular


def _scalar(value: Any, column: int, indent: int, out: list[str]) -> None:
    """`value` written after the text already on the line (at `column`); block lines at `indent` + 2."""
    if not isinstance(value, str):
        out.append(_INLINE[value] if value is None or value is True or value is False else str(value))
        out.append("\n")
        return
    lines = _values[value]
    head = lines[0]
    if column + len(head) > _FOLD_SAFE:
        raise _Irregular
    out.append(head)
    out.append("\n")
    if len(lines) > 1:
        pad = " " * (indent + 2)
        for line in lines[1:]:
            out.append(pad + line + "\n" if line else "\n")


def _mapping(data: dict[str, Any], indent: int, first: bool, out: list[str]) -> None:
    """A non-empty block mapping at `indent`; `first`: its first key goes on the current line (after `- `)."""
    pad = " " * indent
    for key, value in data.items():
        text = _keys[key]
        if not first:
            out.append(pad)
        first = False
        out.append(text)
        _value(value, indent, indent + len(text) + 1, out)


def _value(value: Any, indent: int, column: int, out: list[str]) -> None:
    """The value of a mapping key at `indent`, after `key:` (the line is at `column`)."""
    if isinstance(value, dict):
        if value:
            out.append(":\n")
            _mapping(value, indent + 2, False, out)
        else:
            out.append(": {}\n")
    elif isinstance(value, (list, tuple)):
        if value:
            out.append(":\n")
            _sequence(value, indent, out)
        else:
            out.append(": []\n")
    else:
        out.append(": ")
        _scalar(value, column + 2, indent, out)


def _sequence(items: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict):
            if item:
                out.append(pad + "- ")
                _mapping(item, indent + 2, True, out)
            else:
                out.append(pad + "- {}\n")
        elif isinstance(item, (list, tuple)):
            out.append(pad + "- []\n")  # a non-empty one was refused by _unseen
        else:
            out.append(pad + "- ")
            _scalar(item, indent + 2, indent, out)


def _block(data: Any) -> str | None:
    """libyaml's text for a non-empty mapping of plain data, laid out here; None where only libyaml lays it out."""
    if not isinstance(data, dict) or not data:
        return None
    try:
        strings: dict[str, None] = {}
        keys: dict[str, None] = {}
        _unseen(data, strings, keys)
        _learn(list(strings), list(keys))
        out: list[str] = []
        _mapping(data, 0, False, out)
    except (_Irregular, KeyError):  # KeyError: a memo cleared while this document was being laid out
        return None
    return "".join(out)


_LOADER = YAML(typ="safe")


def load(text: str) -> Any:
    return _LOADER.load(text)
