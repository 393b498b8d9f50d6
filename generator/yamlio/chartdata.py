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

Within `disk_cache()` (what `catalog serve` builds its market in), each text's value is also kept on disk, in the
user's cache folder (generator/core/diskcache.py, `chart-data/`), by the sha256 of the text and of the readers'
versions, as JSON: a second start of an unchanged store reads JSON instead of YAML. Only a value JSON gives back
exactly (mappings with string keys, lists, strings, finite numbers, booleans, null) is kept; an entry that is
damaged or not sealed for its text is ignored and written again; the folder holds at most MAX_ENTRIES entries (the
oldest that the last build did not read go first). An edited file is another text, so another entry: a stale value
cannot be read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import ruamel.yaml
import yaml
from ruamel.yaml.error import YAMLError as RuamelYAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from generator.core import diskcache
from generator.yamlio import yamlout
from generator.yamlio.loader import _Loader, _scalar

_TAG = "tag:yaml.org,2002:"
_SCALARS = {f"{_TAG}{kind}" for kind in ("str", "int", "float", "bool", "null")}
_MAP, _SEQ, _STR = f"{_TAG}map", f"{_TAG}seq", f"{_TAG}str"
_BREAKS = ("\x85", "\u2028", "\u2029")


class _Unsure(Exception):
    """The fast path cannot promise ruamel's value for this text: ruamel reads it."""


KIND = "chart-data"
MAX_ENTRIES = 100_000  # ~15 documents a chart in two formats: a few thousand charts' files
MAX_ENTRY_BYTES = 4 * 2**20
_MAGIC = b"catalog-chart-data"
# in every key: what the value depends on besides the text (this reader's rules, ruamel's and PyYAML's versions)
_SALT = f"chartdata 1; ruamel.yaml {ruamel.yaml.__version__}; PyYAML {yaml.__version__}\0".encode()


@dataclass
class Stats:
    """What one `disk_cache()` read from the cache and wrote to it."""

    hits: int = 0  # values read back from an entry
    written: int = 0  # entries written on the way out
    pruned: int = 0  # entries removed to keep the folder within MAX_ENTRIES


@dataclass
class _Store:
    dir_fd: int
    used: set[str] = field(default_factory=set)  # entry names read or written by this build
    new: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # name -> (key, body), written at the end
    stats: Stats = field(default_factory=Stats)


_STORE: ContextVar[_Store | None] = ContextVar("chartdata_store", default=None)


@contextlib.contextmanager
def disk_cache() -> Iterator[Stats | None]:
    """`load` keeps values on disk while inside (this thread only); the new entries are written, and the folder
    pruned, on the way out. Yields what was read and written (None, and nothing happens, when the cache is off or
    its folder is not trusted)."""
    where = diskcache.folder(KIND)
    dir_fd = None if where is None else diskcache.open_folder(where, create=True)
    if dir_fd is None:
        yield None
        return
    store = _Store(dir_fd)
    token = _STORE.set(store)
    try:
        yield store.stats
    finally:
        _STORE.reset(token)
        try:
            for name, (key, body) in store.new.items():
                store.stats.written += diskcache.write_entry(dir_fd, name, _MAGIC, key, body)
            store.stats.pruned = diskcache.prune(dir_fd, store.used, MAX_ENTRIES)
        finally:
            os.close(dir_fd)


def load(text: str) -> Any:
    """`ruamel.yaml.YAML(typ="safe").load(text)`, the same value or the same error (see the module docstring)."""
    store = _STORE.get()
    if store is None:
        return _load(text)
    key = hashlib.sha256(_SALT + text.encode("utf-8", "surrogatepass")).hexdigest()
    name = f"{key}.json"
    store.used.add(name)
    body = store.new[name][1] if name in store.new else diskcache.read_entry(
        store.dir_fd, name, _MAGIC, key, MAX_ENTRY_BYTES)
    if body is not None:
        try:
            value = json.loads(body)
            store.stats.hits += 1
            return value
        except ValueError:
            pass  # not JSON after all: read the YAML, and the entry is written again
    value = _load(text)
    if _json_exact(value):
        body = json.dumps(value, separators=(",", ":")).encode("ascii")
        if len(body) <= MAX_ENTRY_BYTES:
            store.new[name] = (key, body)
    return value


def _json_exact(value: Any, depth: int = 0) -> bool:
    """Whether JSON gives `value` back with the same types and order (what a cache entry may hold)."""
    if depth > 200:
        return False
    if isinstance(value, str) or value is None or type(value) in (bool, int):
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is dict:
        return all(type(k) is str and _json_exact(v, depth + 1) for k, v in value.items())
    if type(value) is list:
        return all(_json_exact(v, depth + 1) for v in value)
    return False


def _load(text: str) -> Any:
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


__all__ = ["KIND", "MAX_ENTRIES", "Stats", "disk_cache", "load"]
