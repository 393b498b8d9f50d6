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

Within `disk_cache(store)` (what `catalog serve` builds its market in), each text's value is also kept on disk, in
the user's cache folder (generator/core/diskcache.py, `chart-data/`), by the sha256 of the text and of the readers'
versions, as JSON: a second start of an unchanged store reads JSON instead of YAML. The values of one store are kept
in one file (its pack, read whole: one read instead of one per chart file, ~8,000 at 1,000 apps). Only a value JSON
gives back exactly (mappings with string keys, lists, strings, finite numbers, booleans, null) is kept; a pack that
is damaged or not sealed for its store is ignored and written again, as is one holding a value that is not JSON;
the folder holds at most MAX_PACKS packs (the oldest go first) of at most MAX_PACK_BYTES. An edited file is
another text, so another key: a stale value cannot be read.
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
from pathlib import Path
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
MAX_PACKS = 32  # stores (or chart folders) whose values are kept
MAX_PACK_BYTES = 256 * 2**20  # ~10 MB for 1,000 apps
_MAGIC = b"catalog-chart-data"
# in every key: what the value depends on besides the text (this reader's rules, ruamel's and PyYAML's versions)
_SALT = f"chartdata 1; ruamel.yaml {ruamel.yaml.__version__}; PyYAML {yaml.__version__}\0".encode()


@dataclass
class Stats:
    """What one `disk_cache()` read from the cache and wrote to it."""

    hits: int = 0  # values read back from the pack
    written: int = 0  # values added to the pack on the way out
    dropped: int = 0  # values of texts the build did not read, left out of the pack written again
    pruned: int = 0  # other stores' packs removed to keep the folder within MAX_PACKS


@dataclass
class _Store:
    pack: dict[str, str]  # key -> the value's JSON, as read
    used: set[str] = field(default_factory=set)  # keys read or made by this build
    new: dict[str, str] = field(default_factory=dict)  # key -> JSON, added on the way out
    stale: bool = False  # the pack held a value that is not JSON: written again
    stats: Stats = field(default_factory=Stats)


_STORE: ContextVar[_Store | None] = ContextVar("chartdata_store", default=None)


def pack_name(store: Path) -> tuple[str, str]:
    """(file name, key) of the pack of the store whose charts are under `store`."""
    key = hashlib.sha256(str(store.absolute()).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"pack-{key}.json", key


def _read_pack(dir_fd: int, name: str, key: str) -> dict[str, str]:
    body = diskcache.read_entry(dir_fd, name, _MAGIC, key, MAX_PACK_BYTES)
    try:
        pack = json.loads(body) if body is not None else {}
    except ValueError:
        return {}
    if not isinstance(pack, dict) or not all(isinstance(v, str) for v in pack.values()):
        return {}
    return pack


@contextlib.contextmanager
def disk_cache(store: Path) -> Iterator[Stats | None]:
    """`load` keeps values on disk while inside (this thread only), in one pack per store (`store`: its charts
    folder): read whole on the way in, written again on the way out when the build added values, and the folder
    pruned to MAX_PACKS. Yields what was read and written (None, and nothing happens, when the cache is off or its
    folder is not trusted)."""
    where = diskcache.folder(KIND)
    dir_fd = None if where is None else diskcache.open_folder(where, create=True)
    if dir_fd is None:
        yield None
        return
    name, key = pack_name(store)
    kept = _Store(_read_pack(dir_fd, name, key))
    token = _STORE.set(kept)
    try:
        yield kept.stats
    finally:
        _STORE.reset(token)
        try:
            _write_pack(dir_fd, name, key, kept)
            kept.stats.pruned = diskcache.prune(dir_fd, {name}, MAX_PACKS)
        finally:
            os.close(dir_fd)


def _write_pack(dir_fd: int, name: str, key: str, kept: _Store) -> None:
    """The pack again when the build added values: what it read or made, and the others while they are not most of
    the pack (a store edited many times does not keep every old text)."""
    if not kept.new and not kept.stale:
        return
    unused = [k for k in kept.pack if k not in kept.used]
    drop = len(unused) > len(kept.used)
    pack = {k: v for k, v in kept.pack.items() if not drop or k in kept.used} | kept.new
    body = json.dumps(pack, separators=(",", ":")).encode("ascii")
    if len(body) <= MAX_PACK_BYTES and diskcache.write_entry(dir_fd, name, _MAGIC, key, body):
        kept.stats.written, kept.stats.dropped = len(kept.new), len(unused) if drop else 0


def load(text: str) -> Any:
    """`ruamel.yaml.YAML(typ="safe").load(text)`, the same value or the same error (see the module docstring)."""
    kept = _STORE.get()
    if kept is None:
        return _load(text)
    key = hashlib.sha256(_SALT + text.encode("utf-8", "surrogatepass")).hexdigest()
    kept.used.add(key)
    body = kept.new.get(key) or kept.pack.get(key)
    if body is not None:
        try:
            value = json.loads(body)
            kept.stats.hits += 1
            return value
        except ValueError:
            kept.stale = True  # not JSON after all: read the YAML, and the pack is written again
    value = _load(text)
    if _json_exact(value):
        kept.new[key] = json.dumps(value, separators=(",", ":"))
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


__all__ = ["KIND", "MAX_PACKS", "Stats", "disk_cache", "load", "pack_name"]
