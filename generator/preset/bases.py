"""Olares' engine bases as the project reads them: catalog/bases/<id>.yaml, derived from the bases' own charts.

A base file holds what `catalog preset` needs of one base, in the shape of the base's OlaresManifest.yaml `envs`
(envName, required, type, options {title, value}, multiSelect, splitter, regex —
beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e docs/developer/develop/package/manifest.md "envs"), plus the
engine image the base pins and the flag table of that image (catalog/flags/), each with its source. The embedded
catalog's files cite github.com/beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, StringConstraints

from generator.core import InputError, Problem, UsageError
from generator.core import embedded_catalog
from generator.flags import FlagTable, FlagTables
from generator.schema import Id, Strict
from generator.yamlio import load_model, read_document

EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
BASE_NAMES = ("llamacppllmbasev3", "vllmllmbasev3", "sglangllmbasev3")


class EnvOption(Strict):
    title: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    value: Annotated[str, StringConstraints(max_length=200)]


class BaseEnv(Strict):
    """One manifest env of the base, as published (the fields the preset validates against)."""

    envName: EnvName  # noqa: N815 (the manifest's spelling)
    required: bool = False
    type: str = "string"
    editable: bool | None = None
    default: str | None = None
    options: tuple[EnvOption, ...] = ()
    multiSelect: bool = False  # noqa: N815
    splitter: str | None = None
    regex: Annotated[str, StringConstraints(max_length=500)] | None = None


class Base(Strict):
    id: Id  # the base's app name (metadata.name)
    engine: Annotated[str, StringConstraints(pattern=r"^(llamacpp|vllm|sglang)$")]  # the engine family it runs
    version: Annotated[str, StringConstraints(min_length=1, max_length=40)]  # metadata.version of the chart read
    image: Annotated[str, StringConstraints(min_length=3, max_length=300)]  # the engine image the base pins
    flag_table: Id | None = None  # catalog/flags/<id>.yaml for that image; None: none (said in the preset)
    flag_table_note: Annotated[str, StringConstraints(max_length=2000)] | None = None  # a stand-in table: which, why
    gpu_memory_env: EnvName  # <ENGINE>_REQUIRED_GPU_MEMORY
    drops: tuple[str, ...] = ()  # flags the base's wrapper passes itself (the preset leaves them out)
    source: Annotated[str, StringConstraints(min_length=10, max_length=2000)]
    envs: tuple[BaseEnv, ...] = Field(min_length=1)

    def env(self, name: str) -> BaseEnv | None:
        return next((e for e in self.envs if e.envName == name), None)


def bases_dir(root: Path) -> Path:
    return Path(root) / "bases"


def base_root(root: Path, name: str) -> Path:
    """The catalog whose bases/ holds `name`: the store's own, else the tool's embedded catalog (the bases are the
    platform's facts; `catalog init` does not copy them)."""
    if (bases_dir(root) / f"{name}.yaml").is_file():
        return Path(root)
    embedded = embedded_catalog()
    return embedded if (bases_dir(embedded) / f"{name}.yaml").is_file() else Path(root)


def flag_table(root: Path, table_id: str | None) -> FlagTable | None:
    """The base image's flag table from the store's flags/, else the embedded catalog's; None when neither has it."""
    if table_id is None:
        return None
    for where in (Path(root), embedded_catalog()):
        tables = FlagTables(where)
        if tables.exists(table_id):
            return tables.get(table_id)
    return None


def load_base(root: Path, name: str) -> Base:
    """Base `name` from the store's bases/, else the embedded catalog's (`base_root`)."""
    root = base_root(root, name)
    path = bases_dir(root) / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in bases_dir(root).glob("*.yaml")) if bases_dir(root).is_dir() else []
        raise UsageError(f"no engine base {name!r} in {bases_dir(root)}; known: {', '.join(known) or 'none'}")
    doc = read_document(path)
    base = load_model(Base, doc, str(path))
    if base.id != name:
        raise InputError([Problem(str(path), doc.line_of(("id",)), "id", f"{base.id!r} is not the file's name "
                                  f"{name!r}: name the file <id>.yaml")])
    return base


__all__ = ["BASE_NAMES", "Base", "BaseEnv", "EnvOption", "base_root", "bases_dir", "flag_table", "load_base"]
