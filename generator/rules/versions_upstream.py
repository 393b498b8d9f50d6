"""One content per version, versions above upstream's (docs/sync.md).

The market a catalog follows publishes its own charts under the same app names. A user who installed
upstream's chart at version V must get upstream's chart when the store says V: so an app of the catalog at
upstream's version must carry upstream's chart, byte for byte (whitespace aside), and an app whose chart
differs is published above upstream's newest version, never at it and never below it (the Market never rolls
back and takes an update only with a strictly greater version:
github.com/beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd README.md, docs/versioning.md).
`catalog/sync.yaml` (written by `catalog sync`) records upstream's version and chart
hash per app; apps upstream removed are recorded `removed` and may not be listed again.

`load_sync`, `chart_digest` and `version_refusal` are shared with `catalog sync` and `catalog publish`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import semver

from generator.catalog import display_path
from generator.chart.render import render
from generator.core import Finding
from generator.rules import AppContext, rule
from generator.schema import Corrections, SyncFile, SyncRecord
from generator.yamlio import load_model, read_document

SYNC_FILE = "sync.yaml"
CORRECTIONS_FILE = "corrections.yaml"


def chart_digest(tree: Mapping[str, str]) -> str:
    """sha256 over a chart's files ({relative path: text}), line endings and trailing blanks normalised: the
    same for two charts that Olares would install identically from the same bytes."""
    digest = hashlib.sha256()
    for rel in sorted(tree):
        text = "\n".join(line.rstrip() for line in tree[rel].replace("\r\n", "\n").split("\n")).strip("\n")
        digest.update(rel.encode("utf-8") + b"\0" + text.encode("utf-8") + b"\0")
    return "sha256:" + digest.hexdigest()


@lru_cache(maxsize=16)
def _load_sync(path: str, _stamp: tuple[int, int]) -> SyncFile:
    name = display_path(Path(path))
    return load_model(SyncFile, read_document(Path(path), name), name)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_mtime_ns, info.st_size


def load_sync(catalog_root: Path) -> SyncFile | None:
    """catalog/sync.yaml, or None before the first sync; a bad file is an InputError `file:line`."""
    path = catalog_root / SYNC_FILE
    stamp = _stamp(path)
    return None if stamp is None else _load_sync(str(path), stamp)


def load_corrections(catalog_root: Path) -> Corrections:
    """catalog/corrections.yaml (empty when the catalog has none)."""
    path = catalog_root / CORRECTIONS_FILE
    if _stamp(path) is None:
        return Corrections()
    name = display_path(path)
    return load_model(Corrections, read_document(path, name), name)


def _semver(text: str) -> semver.Version | None:
    try:
        return semver.Version.parse(text)
    except ValueError:
        return None


def version_refusal(app: str, version: str, digest: str, record: SyncRecord) -> str | None:
    """Why `app` at `version` with chart `digest` may not be published beside upstream's `record`, or None."""
    ours, theirs = _semver(version), _semver(record.version)
    if ours is None or theirs is None:
        return None  # the schema refuses a bad version of ours; upstream's was checked when recorded
    if ours < theirs:
        return (f"{app} {version} is below upstream's newest {record.version}: a user of upstream's chart would "
                f"never be offered ours (run `catalog sync`, then publish above {record.version})")
    if ours == theirs and record.chart is not None and digest != record.chart:
        return (f"{app} {version} is upstream's version with other content ({digest[:19]}… here, "
                f"{record.chart[:19]}… upstream): one version, one content; publish it above {record.version}")
    return None


def _record(ctx: AppContext) -> SyncRecord | None:
    sync = load_sync(ctx.catalog.root)
    return sync.apps.get(ctx.app.name) if sync else None


@rule("MKT002", "error", "an app at upstream's version carries upstream's chart; a different chart is above "
      "upstream's newest version, never at or below it",
      "a user who installed upstream's chart at that version would be served another chart under the same "
      "version (or never offered ours, below it): one version, two contents",
      "catalog/sync.yaml (written by `catalog sync`, docs/sync.md); the Market takes an update only with a "
      "strictly greater version (github.com/beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd README.md)")
def one_content_per_version(ctx: AppContext) -> Iterable[Finding]:
    record = _record(ctx)
    if record is None or record.status == "removed" or ctx.app.status == "removed":
        return
    digest = chart_digest(render(ctx.chart))
    why = version_refusal(ctx.app.name, ctx.app.version, digest, record)
    if why:
        yield ctx.finding("MKT002", "error", why, f"`catalog bump {ctx.app.name}` to a version above "
                          f"{record.version}, or `catalog sync` to take upstream's chart", "version")


@rule("MKT003", "error", "an app upstream removed is not listed again",
      "upstream retired the app (its chart is gone from the market); listing it again brings back a chart its "
      "maintainer no longer supports",
      "catalog/sync.yaml `status: removed` (written by `catalog sync`, docs/sync.md)")
def removed_upstream(ctx: AppContext) -> Iterable[Finding]:
    record = _record(ctx)
    if record is None or record.status != "removed" or ctx.app.status == "removed":
        return
    yield ctx.finding("MKT003", "error", f"upstream removed {record.upstream_name or ctx.app.name} "
                      f"(last seen at {record.version}); the catalog lists it as {ctx.app.status}",
                      "set `status: removed` with a `reason` (`catalog sync` does)", "status")
