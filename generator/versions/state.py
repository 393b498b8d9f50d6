"""Content identity of a rendered chart, and the release state `catalog bump` diffs against.

`content_hash(tree)` is a sha256 over the chart's *parsed* data: YAML files are loaded and re-serialised
as canonical JSON (sorted keys), so quoting, key order, comments or line wrapping cannot change it; Helm
templates are hashed as text (line endings and trailing blanks normalised). The fields that change with
every release are left out: Chart.yaml `version` and `appVersion`, OlaresManifest.yaml `metadata.version`,
`spec.versionName` (both the app's version: generator/chart/plan.py) and `spec.upgradeDescription` (it gains a
line at each bump). Two charts with the same hash differ at most
in those fields.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from functools import lru_cache

import semver
from pydantic import BaseModel, ConfigDict

from generator.catalog import Resolved
from generator.chart import Data, key_paths
from generator.core import InputError, Problem
from generator.chart import ChartSpec
from generator.chart import Tree
from generator.yamlio import chartdata

HASH_PREFIX = "sha256:"
LEVELS = ("patch", "minor", "major")
# Per file name: the dotted paths that move with each release and are left out of the hash.
VOLATILE: dict[str, tuple[tuple[str, ...], ...]] = {
    "Chart.yaml": (("version",), ("appVersion",)),
    "OlaresManifest.yaml": (("metadata", "version"), ("spec", "versionName"), ("spec", "upgradeDescription")),
}


def _is_data_file(rel: str) -> bool:
    """Chart files read as data (YAML); everything under templates/ is a Helm template (text)."""
    if rel.startswith("templates/"):
        return False
    return rel.endswith((".yaml", ".yml")) or rel == "owners"


def _drop(data: object, path: tuple[str, ...]) -> None:
    node = data
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(path[-1], None)


@lru_cache(maxsize=16384)  # every file of 1,000 charts: a market server hashes each chart more than once
def canonical(rel: str, text: str) -> str:
    """The form of one chart file that the hash reads (see the module docstring)."""
    if not _is_data_file(rel):
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
        return "\n".join(lines).strip("\n")
    data = chartdata.load(text)  # ruamel's YAML 1.2 safe value, composed by libyaml (yamlio/chartdata.py)
    if "*" in text and _shared(data):  # a chart from a PR, a market, a package is input from outside
        raise InputError([Problem(rel, None, None, "an alias (`*name`) is not supported in chart data files (each "
                                                   "alias copies its anchor: the hash would expand it); write the "
                                                   "value out")])
    for path in VOLATILE.get(rel.rsplit("/", 1)[-1], ()):
        _drop(data, path)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _shared(data: object) -> bool:
    """Whether a mapping or list occurs twice in the loaded data (what the loader makes of an alias); one pass,
    each container visited once, before anything expands it (issue 40 cause 1)."""
    seen: set[int] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                return True
            seen.add(id(node))
            stack += node.values() if isinstance(node, dict) else node
    return False


def file_hash(rel: str, text: str) -> str:
    return HASH_PREFIX + hashlib.sha256(canonical(rel, text).encode("utf-8")).hexdigest()


def content_hash(tree: Tree) -> str:
    """sha256 of a chart tree ({relative path: text}) without its own version fields."""
    digest = hashlib.sha256()
    for rel in sorted(tree):
        digest.update(rel.encode("utf-8") + b"\0" + canonical(rel, tree[rel]).encode("utf-8") + b"\0")
    return HASH_PREFIX + digest.hexdigest()


def is_flag(token: str) -> bool:
    """An option name (`--x`, `-c`), not a value such as `-1`."""
    return token.startswith("-") and len(token) > 1 and not token[1].isdigit() and token[1] != "."


def option_groups(argv: list[str]) -> list[list[str]]:
    """Split argv into units a reader recognises: a flag with its values, or a leading positional."""
    groups: list[list[str]] = []
    for token in argv:
        if is_flag(token) or not groups or not is_flag(groups[-1][0]):
            groups.append([token])
        else:
            groups[-1].append(token)
    return groups


class ModelRef(BaseModel):
    """Which weights the app serves."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    id: str
    quantization: str
    repo: str | None
    revision: str | None


class ReleaseState(BaseModel):
    """What `catalog bump` compares between the recorded release and now; kept in releases.yaml under `state`.

    Fields are in the order releases.yaml has always written them (`to_data` keeps it).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    status: str
    stack: str
    engine: str
    image: str
    command: list[str]
    model: ModelRef
    context: int
    args: list[str]  # one entry per option group (`--flag value`), shell-quoted
    env: dict[str, str]
    resources: dict[str, str]  # the manifest's accelerator reservations by key
    entrances: dict[str, int]  # entrance name -> port
    workloads: list[str]
    values_keys: list[str]  # dotted paths of values.yaml leaves
    metadata: dict[str, str]  # title, description, icon
    files: dict[str, str]  # chart file -> file_hash

    @classmethod
    def from_data(cls, data: object) -> ReleaseState:
        """Read a recorded state (raises pydantic.ValidationError naming the bad field)."""
        return cls.model_validate(data)

    def to_data(self) -> dict[str, Data]:
        """Plain data for the YAML emitter, in field order."""
        return self.model_dump(mode="python")


def release_state(r: Resolved, spec: ChartSpec, tree: Tree) -> ReleaseState:
    """What `catalog bump` compares between the recorded release and now (kept in releases.yaml)."""
    engine = spec.engine
    weight = r.model.weight(r.app.quantization)
    manifest = spec.manifest
    meta = manifest.metadata
    return ReleaseState(
        status=r.app.status,
        stack=r.stack.id,
        engine=r.stack.engine,
        image=engine.image,
        command=list(engine.command),
        model=ModelRef(id=r.model.id, quantization=r.app.quantization,
                       repo=weight.repo if weight else None, revision=weight.revision if weight else None),
        context=r.app.context_length,
        args=[shlex.join(group) for group in option_groups(engine.argv)],
        env=dict(engine.env_map),
        resources=manifest.spec.accelerator[0].resources(),
        entrances={e.name: e.port for e in manifest.entrances},
        workloads=sorted(manifest.workload_replicas),
        values_keys=sorted(key_paths(spec.values.to_data())),
        metadata={"title": meta.title, "description": meta.description, "icon": meta.icon},
        files={rel: file_hash(rel, text) for rel, text in sorted(tree.items())},
    )


def parse_version(text: str) -> semver.Version:
    return semver.Version.parse(text)


def next_version(current: str, level: str) -> str:
    """2.5.6 + patch -> 2.5.7, + minor -> 2.6.0, + major -> 3.0.0."""
    version = parse_version(current)
    bumped = {"patch": version.bump_patch, "minor": version.bump_minor, "major": version.bump_major}[level]()
    return str(bumped)


def higher_level(a: str, b: str) -> str:
    return a if LEVELS.index(a) >= LEVELS.index(b) else b
