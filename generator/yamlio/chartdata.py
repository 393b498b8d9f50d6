"""Chart files as ruamel.yaml's safe loader reads them, composed by libyaml: the same values, several times faster.

`load(text)` returns exactly what `ruamel.yaml.YAML(typ="safe").load(text)` returns (dicts, lists, str, int,
float, bool, None; key order kept) for the YAML a rendered chart holds, and hands every other text to ruamel
itself, so its value, or its error, is ruamel's by construction. libyaml composes the nodes and resolves plain
scalars with YAML 1.2's core schema as the catalog loader does (generator/yamlio/loader.py `_Loader`, ruamel's own
resolver table); the few scalars that are not plain strings, digits, lowercase booleans or decimals are built by
ruamel's constructor (loader.py `_scalar`). A text goes to ruamel whole when it holds:

- a directive (`%YAML 1.1` switches ruamel to YAML 1.1's scalars) or a character libyaml treats as a line break
  where YAML 1.2 does not (NEL, LS, PS);
- anything libyaml refuses (ruamel then raises its own error, with its own line);
- a node reached twice (an alias: ruamel's data shares it, and the callers refuse it by ruamel's value);
- a key that is not a string, a duplicate key, a merge key (`<<`), a timestamp, or any tag outside
  str/int/float/bool/null/map/seq (ruamel builds dates, sets, omaps, binaries; libyaml would not).

Why: `catalog serve` hashes every chart file (generator/versions/state.py `canonical`) and reads every manifest
(generator/publish/market_entry.py); ruamel's Python constructor took ~1.7 ms a document, ~20 s for the
~12,000 documents of 1,000 apps (bench/RESULTS.md "`catalog serve` start-up").
"""

from __future__ import annotations

from typing import Any

import yaml
from ruamel.yaml.error import YAMLError as RuamelYAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from generator.yamlio import yamlout
from generator.yamlio.loader import _Loader, _scalar

_TAG = "tag:yaml.org,2002:"
_SCALARS = {f"{_TAG}{kind}" for kind in ("str", "int", "float", "bool", "null")}
_MAP, _SEQ, _STR = f"{_TAG}map", f"{_TAG}seq", f"{_TAG}str"
_BREAKS = ("\x85", "\u2028", "\u2029")


class _Unsure(Exception):
    """The fast path cannot promise ruamel's value for this text: ruamel reads it."""


def load(text: str) -> Any:
    """`ruamel.yaml.YAML(typ="safe").load(text)`, the same value or the same error (see the module docstring)."""
    if "%" in text and (text.startswith("%") or "\n%" in text) or any(c in text for c in _BREAKS):
        return yamlout.load(text)
    try:
        node = yaml.compose(text, Loader=_Loader)
        return None if node is None else _value(node, set())
    except (yaml.YAMLError, RuamelYAMLError, RecursionError, _Unsure):
        return yamlout.load(text)


def _value(node: Node, seen: set[int]) -> Any:
    if isinstance(node, ScalarNode):
        if node.tag not in _SCALARS or node.value == "=" and not node.style:  # 1.1's `value`: ruamel refuses it
            raise _Unsure
        return _scalar(node)
    if id(node) in seen:
        raise _Unsure
    seen.add(id(node))
    if isinstance(node, MappingNode):
        if node.tag != _MAP:
            raise _Unsure
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag != _STR or key_node.value in out:
                raise _Unsure
            out[key_node.value] = _value(value_node, seen)
        return out
    if isinstance(node, SequenceNode) and node.tag == _SEQ:
        return [_value(item, seen) for item in node.value]
    raise _Unsure


__all__ = ["load"]
