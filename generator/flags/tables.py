"""Flag tables: what one pinned engine image accepts on its command line (catalog/flags/<id>.yaml).

A table lists every flag with its aliases, how many values it takes, the values the engine allows, flags
and values that were removed or renamed (with the replacement), the keys of JSON-typed flags, and the
environment variables the image reads. Tables are generated from the real engine (scripts/flags/) or
curated from cited sources; `provenance` says which, from what exact input, and what is approximate.
Tables load lazily by id (`FlagTables(root).get(id)`), with `file:line: field: message` errors.
"""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError, model_validator
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from generator.core import InputError, Problem
from generator.flags import cache as table_cache
from generator.schema import Engine  # the one list of engine names (the registry)
from generator.schema import Fork  # the fork names
from generator.yamlio import load_model, read_bytes, read_document, refuse_aliases
from generator.schema import Date, EnvName, Id, Sources, Strict

FlagName = Annotated[str, StringConstraints(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")]
Nargs = Literal["0", "1", "2", "?", "+", "*"]
"""How many value tokens follow the flag: none (a switch), one, two, optional, one or more, any."""
ValueType = Literal["bool", "int", "float", "str", "path", "json", "choice"]


class Removal(Strict):
    """A flag or value the image rejects because it was removed or renamed."""

    replacement: str | None = None  # what to write instead (a flag, or a flag with its value)
    since: str  # PR, build or version that removed it
    source: str


class JsonKey(Strict):
    """One key of a JSON-typed flag (e.g. `method` in --speculative-config)."""

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    type: ValueType | Literal["list", "any"] = "any"
    choices: tuple[str, ...] = ()
    case_insensitive: bool = False
    renamed: dict[str, str] = Field(default_factory=dict)  # deprecated value -> the value it becomes
    source: str | None = None


class Flag(Strict):
    name: FlagName  # the canonical (long) spelling
    aliases: tuple[FlagName, ...] = ()  # other spellings, short forms and negations (`--no-x`)
    nargs: Nargs = "1"
    type: ValueType = "str"
    choices: tuple[str, ...] = ()
    choices_strict: bool = True  # False: the engine also accepts values registered by plugins
    case_insensitive: bool = False
    list_separator: str | None = None  # the value is a list joined by this (llama.cpp --spec-type a,b)
    renamed_choices: dict[str, Removal] = Field(default_factory=dict)  # old value -> replacement value
    json_keys: tuple[JsonKey, ...] | None = None  # known keys of a JSON-typed flag (None: not checked)
    removed: Removal | None = None
    env: EnvName | None = None  # environment variable that sets the same option (llama.cpp LLAMA_ARG_*)
    default: str | None = None
    note: str | None = None
    source: str | None = None  # required for curated entries (see Provenance.method)

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def takes_value(self) -> bool:
        return self.nargs != "0"

    def json_key(self, name: str) -> JsonKey | None:
        return next((k for k in self.json_keys or () if k.name == name), None)

    @model_validator(mode="after")
    def _consistent(self) -> Flag:
        if self.choices and self.nargs == "0":
            raise ValueError(f"{self.name}: a switch (nargs 0) cannot have choices")
        if self.json_keys is not None and self.type != "json":
            raise ValueError(f"{self.name}: json_keys need type json")
        return self


class EnvVar(Strict):
    name: EnvName
    choices: tuple[str, ...] = ()
    note: str | None = None
    source: str


class Difference(Strict):
    """A flag, value or env var where the table deliberately differs from its generator input."""

    item: str
    change: str  # what differs and why
    source: str


class Provenance(Strict):
    method: Literal["generated", "curated", "generated+curated"]
    generator: str | None = None  # the script that wrote the table
    command: str | None = None  # how to regenerate it
    input: str  # the exact input: wheel file + sha256, binary + build, or the curated sources
    date: Date
    approximation: str | None = None  # set when the input is not the pinned image itself
    differences: tuple[Difference, ...] = ()
    sources: Sources


class Syntax(Strict):
    """How the engine's parser reads argv."""

    equals_values: bool  # `--flag=value` accepted (argparse) or not (llama.cpp)
    underscores: bool  # `--max_model_len` read as `--max-model-len`
    dotted_json: bool  # `--compilation-config.mode 3` (vLLM)
    positionals: int = 0  # how many positional arguments the command takes (vLLM: the model)
    positional_name: str | None = None
    attached_values: tuple[FlagName, ...] = ()  # short flags that take their value glued on (vLLM -O3)


class FlagTable(Strict):
    id: Id
    engine: Engine
    fork: Fork
    image: str
    version: str
    provenance: Provenance
    syntax: Syntax
    flags: tuple[Flag, ...]
    env: tuple[EnvVar, ...] = ()
    # Env names under these prefixes must be known (listed in `env` or as a flag's `env`): a misspelt one is
    # silently ignored by the engine.
    env_prefixes: tuple[Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*_$")], ...] = ()

    @model_validator(mode="after")
    def _unique(self) -> FlagTable:
        seen: dict[str, str] = {}
        for flag in self.flags:
            for spelling in flag.spellings:
                if spelling in seen:
                    raise ValueError(f"{spelling} is listed twice (in {seen[spelling]} and {flag.name})")
                seen[spelling] = flag.name
        if self.provenance.method != "generated":
            unsourced = [f.name for f in self.flags if f.source is None]
            if unsourced and self.provenance.method == "curated":
                raise ValueError(f"curated flags need a source: {', '.join(unsourced[:5])}")
        return self

    @cached_property
    def index(self) -> dict[str, Flag]:
        return {spelling: flag for flag in self.flags for spelling in flag.spellings}

    def lookup(self, spelling: str) -> Flag | None:
        return self.index.get(spelling)

    def all_spellings(self) -> list[str]:
        return sorted(self.index)

    @cached_property
    def env_names(self) -> dict[str, EnvVar | None]:
        """Every env name the table knows: its `env` entries and the env of each flag."""
        names: dict[str, EnvVar | None] = {f.env: None for f in self.flags if f.env}
        names.update({e.name: e for e in self.env})
        return names


_PARSED: dict[str, FlagTable] = {}  # sha256 of the file's bytes -> the valid table


def _tuples(value: Any) -> Any:
    """Plain YAML data -> the immutable shapes the strict models take (sequences as tuples)."""
    if isinstance(value, dict):
        return {str(k): _tuples(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _fast(raw: bytes) -> FlagTable | None:
    """The C YAML parser + validation; None on any problem (the slow path then reports file:line)."""
    try:
        data = YAML(typ="safe").load(raw.decode("utf-8"))
        return FlagTable.model_validate(_tuples(data)) if isinstance(data, dict) else None
    except (YAMLError, ValidationError, UnicodeDecodeError, ValueError):
        return None


def load_table(path: Path, display: str | None = None) -> FlagTable:
    """Read and validate one table; CatalogError with `file:line: field: message` when invalid.

    Tables are large (hundreds of flags): a valid one is parsed with the C YAML parser and kept by content
    hash, in this process and in the cache on disk (generator/flags/cache.py); only an invalid one is re-read
    with the line-tracking loader for its message.
    """
    name = display or str(path)
    raw = read_bytes(path, name)  # a regular file under the size cap
    key = hashlib.sha256(raw).hexdigest()
    table = _PARSED.get(key) or table_cache.get(key, FlagTable)
    if table is None:
        refuse_aliases(raw.decode("utf-8", "replace"), name)  # the fast parser would expand an alias bomb
        table = _fast(raw)
        if table is None:
            table = load_model(FlagTable, read_document(path, name), name)
        table_cache.put(key, table)
    _PARSED[key] = table
    if table.id != path.stem:
        raise InputError([Problem(name, 1, "id", f"table id {table.id!r} must equal the file name {path.stem!r}")])
    return table


class FlagTables:
    """The catalog's flags/ folder; each table is read on first use and kept."""

    def __init__(self, root: Path):
        self.folder = Path(root) / "flags"
        self._cache: dict[str, FlagTable] = {}

    def path(self, table_id: str) -> Path:
        return self.folder / f"{table_id}.yaml"

    def exists(self, table_id: str) -> bool:
        return self.path(table_id).is_file()

    def get(self, table_id: str) -> FlagTable:
        if table_id not in self._cache:
            from generator.catalog import display_path

            path = self.path(table_id)
            if not path.is_file():
                raise InputError([Problem(display_path(path), None, None, f"no flag table {table_id!r}")])
            root = os.path.realpath(self.folder.parent)
            if os.path.commonpath([os.path.realpath(path), root]) != root:
                raise InputError([Problem(display_path(path), None, None, "a symbolic link to a file outside the "
                                          "catalog; refused, not read (copy the table into catalog/flags/)")])
            self._cache[table_id] = load_table(path, display_path(path))
        return self._cache[table_id]

    def ids(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.yaml")) if self.folder.is_dir() else []
