"""`<catalog>/releases.yaml`: which content each released app version had (written by `catalog bump`).

    apps:
      <app>:
        <x.y.z>:                 # newest first
          content: sha256:...    # versioning.content_hash of the rendered chart
          date: 2026-11-29
          state: {...}           # only on the newest version: what the next bump diffs against
          formats:               # optional: the same version rendered in the catalog's other profiles
            olares-v2: sha256:...   # (generator/versions/formats.py; packaged as <x.y.z>-v2)

Older versions keep `content`, `date` and `formats`; their state lives in git history.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from generator.yamlio import yamlout
from generator.core import InputError, Problem
from generator.core import atomic_write_text
from generator.yamlio import Document, read_document
from generator.versions.state import HASH_PREFIX, ReleaseState, parse_version

FILE_NAME = "releases.yaml"
HEADER = (
    "# Written by `catalog bump` (docs/versioning.md): the content hash each released app version had.\n"
    "# Review it like code; never edit a recorded hash by hand (a changed chart needs a new version).\n"
)


@dataclass(frozen=True)
class Release:
    version: str
    content: str
    date: str
    state: ReleaseState | None = None
    formats: tuple[tuple[str, str], ...] = ()  # (profile, content hash) of the variants, by profile name

    def format_content(self, profile: str) -> str | None:
        """The recorded content of this version written in `profile` (a variant), if recorded."""
        return dict(self.formats).get(profile)


@dataclass
class Releases:
    path: Path
    apps: dict[str, dict[str, Release]] = field(default_factory=dict)

    def latest(self, app: str) -> Release | None:
        versions = self.apps.get(app, {})
        if not versions:
            return None
        return versions[max(versions, key=parse_version)]

    def get(self, app: str, version: str) -> Release | None:
        return self.apps.get(app, {}).get(version)

    def record(self, app: str, release: Release) -> None:
        """Add or replace `release`; older versions of the app drop their state."""
        versions = self.apps.setdefault(app, {})
        versions[release.version] = release
        newest = max(versions, key=parse_version)
        for version, rel in list(versions.items()):
            if version != newest and rel.state is not None:
                versions[version] = Release(rel.version, rel.content, rel.date, formats=rel.formats)

    def dump(self) -> str:
        apps: dict[str, Any] = {}
        for app in sorted(self.apps):
            entries = {}
            for version in sorted(self.apps[app], key=parse_version, reverse=True):
                rel = self.apps[app][version]
                entry: dict[str, Any] = {"content": rel.content, "date": rel.date}
                if rel.state is not None:
                    entry["state"] = rel.state.to_data()
                if rel.formats:
                    entry["formats"] = dict(rel.formats)
                entries[version] = entry
            apps[app] = entries
        return HEADER + yamlout.dump({"apps": apps})

    def save(self) -> None:
        atomic_write_text(self.path, self.dump())


def releases_path(catalog_root: Path) -> Path:
    return catalog_root / FILE_NAME


MAX_BYTES = 64 * 2**20  # about 20 000 app versions with their state; far above any real store


def _problem(path: Path, line: int | None, where: str | None, message: str) -> InputError:
    return InputError([Problem(os.path.relpath(path), line, where, message)])


def _plain(value: Any) -> Any:
    """The loader's immutable sequences (tuples) as lists: a recorded state compares equal to a fresh one."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _release(doc: Document, app: str, version: str, entry: Any) -> Release:
    path = doc.path
    where = f"apps.{app}.{version}"
    line = doc.line_of(("apps", app, version))
    try:
        parse_version(version)
    except ValueError:
        raise _problem(path, line, where, f"{version!r} is not a version X.Y.Z; restore the file from git") from None
    if not isinstance(entry, dict) or not str(entry.get("content", "")).startswith(HASH_PREFIX):
        raise _problem(path, line, where, f"needs `content: {HASH_PREFIX}...` and `date`; restore the file from git")
    date = entry.get("date")
    date = date.isoformat() if isinstance(date, dt.date) else str(date)
    state = entry.get("state")
    recorded = _state(path, line, where, _plain(state)) if isinstance(state, dict) else None
    formats = entry.get("formats", {})
    if not isinstance(formats, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.startswith(HASH_PREFIX) for k, v in formats.items()):
        raise _problem(path, line, f"{where}.formats",
                       f"expected `formats: {{<profile>: {HASH_PREFIX}...}}`; restore the file from git")
    return Release(version, str(entry["content"]), date, recorded, tuple(sorted(formats.items())))


def _state(path: Path, line: int | None, where: str, data: dict[str, Any]) -> ReleaseState:
    try:
        return ReleaseState.from_data(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise _problem(path, line, f"{where}.state.{field}", f"{error['msg']}; restore the file from git") from None


def load_releases(catalog_root: Path) -> Releases:
    """Read releases.yaml; a missing file is an empty record. Every problem names `file:line:`."""
    path = releases_path(catalog_root)
    releases = Releases(path)
    if not path.is_file():
        return releases
    doc = read_document(path, os.path.relpath(path), max_bytes=MAX_BYTES)
    data = doc.data if doc.data is not None else {}
    apps = data.get("apps") if isinstance(data, dict) else None
    if not isinstance(apps, dict):
        raise _problem(path, doc.line_of(("apps",)), "apps",
                       "expected a mapping `apps: {<app>: {<version>: ...}}`; restore the file from git")
    for app, versions in apps.items():
        if not isinstance(versions, dict):
            raise _problem(path, doc.line_of(("apps", str(app))), f"apps.{app}",
                           "expected a mapping of versions; restore the file from git")
        releases.apps[str(app)] = {str(v): _release(doc, str(app), str(v), e) for v, e in versions.items()}
    return releases
