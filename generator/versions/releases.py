"""`<catalog>/releases.yaml`: which content each released app version had (written by `catalog bump`).

    apps:
      <app>:
        <x.y.z>:                 # newest first
          content: sha256:...    # versioning.content_hash of the rendered chart
          date: 2026-11-29
          state: {...}           # only on the newest version: what the next bump diffs against

Older versions keep `content` and `date`; their state lives in git history.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError
from pydantic import ValidationError

from generator.yamlio import yamlout
from generator.core.errors import InputError, Problem, translate_os_error
from generator.core.fileio import atomic_write_text
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
                versions[version] = Release(rel.version, rel.content, rel.date)

    def dump(self) -> str:
        apps: dict[str, Any] = {}
        for app in sorted(self.apps):
            entries = {}
            for version in sorted(self.apps[app], key=parse_version, reverse=True):
                rel = self.apps[app][version]
                entry: dict[str, Any] = {"content": rel.content, "date": rel.date}
                if rel.state is not None:
                    entry["state"] = rel.state.to_data()
                entries[version] = entry
            apps[app] = entries
        return HEADER + yamlout.dump({"apps": apps})

    def save(self) -> None:
        atomic_write_text(self.path, self.dump())


def releases_path(catalog_root: Path) -> Path:
    return catalog_root / FILE_NAME


def _problem(path: Path, where: str | None, message: str, line: int | None = None) -> InputError:
    return InputError([Problem(os.path.relpath(path), line, where, message)])


def _release(path: Path, app: str, version: str, entry: Any) -> Release:
    where = f"apps.{app}.{version}"
    try:
        parse_version(version)
    except ValueError:
        raise _problem(path, where, f"{version!r} is not a version X.Y.Z") from None
    if not isinstance(entry, dict) or not str(entry.get("content", "")).startswith(HASH_PREFIX):
        raise _problem(path, where, f"needs `content: {HASH_PREFIX}...` and `date`; restore the file from git")
    date = entry.get("date")
    date = date.isoformat() if isinstance(date, dt.date) else str(date)
    state = entry.get("state")
    recorded = _state(path, where, state) if isinstance(state, dict) else None
    return Release(version, str(entry["content"]), date, recorded)


def _state(path: Path, where: str, data: dict[str, Any]) -> ReleaseState:
    try:
        return ReleaseState.from_data(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise _problem(path, f"{where}.state.{field}", f"{error['msg']}; restore the file from git") from None


def load_releases(catalog_root: Path) -> Releases:
    """Read releases.yaml; a missing file is an empty record."""
    path = releases_path(catalog_root)
    releases = Releases(path)
    if not path.is_file():
        return releases
    try:
        data = yamlout.load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from exc
    except UnicodeDecodeError as exc:
        raise _problem(path, None, f"not UTF-8 text ({exc.reason}); restore the file from git") from exc
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        what = (getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]).strip()
        raise _problem(path, None, f"not valid YAML ({what}); restore the file from git", line) from exc
    apps = data.get("apps") if isinstance(data, dict) else None
    if not isinstance(apps, dict):
        raise _problem(path, "apps", "expected a mapping `apps: {<app>: {<version>: ...}}`")
    for app, versions in apps.items():
        if not isinstance(versions, dict):
            raise _problem(path, f"apps.{app}", "expected a mapping of versions")
        releases.apps[str(app)] = {str(v): _release(path, str(app), str(v), e) for v, e in versions.items()}
    return releases
