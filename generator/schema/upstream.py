"""The upstream market a catalog follows (docs/sync.md): what `catalog sync` recorded, the catalog's deliberate
corrections, and the values upstream set on a measured ground. Pure models, no I/O.

- `catalog/sync.yaml` (`SyncFile`): the upstream, portably (a URL less its credentials, or a folder relative to the
  store) and its commit; per app, the upstream version, commit and chart hash the last sync saw, whether upstream
  still lists the app, and upstream's normalized fields then (`fields`: the next sync's merge base).
- `catalog/corrections.yaml` (`Corrections`): rows derived from docs/fidelity.md "Deliberate corrections" (a
  difference the catalog keeps over upstream's value, with its reason and source), and the `measured` grounds:
  upstream values a measurement stands behind, which beat a modeled correction.
"""

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, JsonValue, StringConstraints

from generator.schema.common import MAX_ITEMS, AppName, Name, Note, SemVer, Strict
from generator.schema.measured import FieldPath, Measured, Value

# An app name, or a shell-style pattern of names (`*`, `*qwen35[ai]*`) as docs/fidelity.md writes them.
AppPattern = Annotated[str, StringConstraints(pattern=r"^[a-z0-9*?\[\]]{1,60}$")]
Hash = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,64}$")]
UpstreamName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,62}$")]  # upstream checks no length


def _thaw(value: object) -> object:
    """YAML's read-only sequences and mappings as JSON's lists and objects (the base is JSON-shaped data)."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_thaw(v) for v in value]
    return value


BaseValue = Annotated[JsonValue, BeforeValidator(_thaw)]


class MeasuredGround(Measured):
    app: AppPattern


class Correction(Strict):
    """A deliberate local correction: the catalog keeps `ours` over upstream's value, for `reason`."""

    app: AppPattern
    field: FieldPath
    ours: Value  # the catalog's value, in words where it is computed (`sized by the fit`)
    reason: Annotated[str, StringConstraints(min_length=3, max_length=4000)]
    source: Note


class Corrections(Strict):
    # upstream app name -> the catalog's name (a name Olares refuses, renamed: docs/fidelity.md)
    renamed: dict[UpstreamName, AppName] = Field(default_factory=dict)
    corrections: Annotated[tuple[Correction, ...], Field(max_length=MAX_ITEMS)] = ()
    measured: Annotated[tuple[MeasuredGround, ...], Field(max_length=MAX_ITEMS)] = ()


class SyncRecord(Strict):
    """What the last sync saw of one upstream app."""

    # the base holds upstream's texts as the app does (an upgrade note grows by a line a version: LongText, 32,000)
    model_config = ConfigDict(**{**Strict.model_config, "str_max_length": 32000})

    upstream_name: UpstreamName | None = None  # the app's name upstream, where the catalog renamed it
    version: SemVer  # upstream's version (OlaresManifest metadata.version)
    chart: Hash | None = None  # chart_digest of upstream's chart files at that version
    commit: Commit | None = None  # the upstream repository's commit (a git source)
    status: Literal["listed", "removed"] = "listed"
    # upstream's app at that sync, normalized (the compared fields that are not their default): the merge base
    fields: dict[str, BaseValue] | None = None


class SyncFile(Strict):
    upstream: Name  # the source of the last sync: a URL less its credentials, or a folder relative to the store
    commit: Commit | None = None
    path: Name | None = None  # the folder of the repository that holds the charts (None: its root)
    apps: dict[AppName, SyncRecord] = Field(default_factory=dict)


__all__ = ["Correction", "Corrections", "Measured", "MeasuredGround", "SyncFile", "SyncRecord"]
