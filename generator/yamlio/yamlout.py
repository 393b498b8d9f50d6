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
# emitter escapes it: raw, a reader rejects it or turns it into a line break.
_SPECIAL = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
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


def dump(data: Any) -> str:
    text = yaml.serialize(_node(data), Dumper=_Dumper, width=4096, allow_unicode=True)
    return _escape_braces(text)


_LOADER = YAML(typ="safe")


def load(text: str) -> Any:
    return _LOADER.load(text)
