"""Prepare SUSPEND and REMOVE changes in a market repo working tree (the beclab/apps layout).

docs/domain.md#hami:
- SUSPEND: an empty `.suspend` in the app folder (no `.remove`); existing installs keep working. The
  version is bumped (docs/domain.md: observed GitBot practice, e.g. `[SUSPEND][grafana][1.0.16]`), in
  Chart.yaml `version` and OlaresManifest.yaml `metadata.version` together.
- REMOVE: every file deleted except an empty `.remove`; the PR title carries the current version.
  Irreversible: the folder name can never be used again.

Only the version lines are rewritten (the files may hold Helm template syntax a YAML round-trip would
not survive); every other byte stays. Changes are computed first (`plan_suspend`, `plan_remove`) and
written by `apply`, so a dry run and the real run share one code path.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from generator.core import UsageError
from generator.core import atomic_write_text
from generator.core import safe_line

SUSPEND, REMOVE = ".suspend", ".remove"
CHART, MANIFEST = "Chart.yaml", "OlaresManifest.yaml"
_CHART_VERSION = re.compile(r"^version:[ \t]*(['\"]?)([0-9A-Za-z.+-]+)\1[ \t]*(#.*)?$")
_META_VERSION = re.compile(r"^([ \t]+)version:[ \t]*(['\"]?)([0-9A-Za-z.+-]+)\2[ \t]*(#.*)?$")


@dataclass
class MarketChange:
    app: str
    kind: str  # SUSPEND | REMOVE | none
    folder: Path
    version: str  # the version the PR title carries
    writes: dict[Path, str] = field(default_factory=dict)  # path -> new text
    deletes: list[Path] = field(default_factory=list)
    note: str = ""

    @property
    def title(self) -> str:
        return f"[{self.kind}][{self.app}][{self.version}]" if self.kind != "none" else ""


def folder_of(market: Path, app: str) -> Path:
    """The app's folder in the market tree: a real folder inside it, never a symbolic link (REMOVE deletes
    the folder's content: through a link it would delete whatever the link points to)."""
    folder = market / app
    if folder.is_symlink():
        raise UsageError(f"{safe_line(folder)}: a symbolic link; prune changes only real folders of the market tree "
                         "(replace the link with the folder)")
    if not folder.is_dir():
        raise UsageError(f"{safe_line(market)}: no folder {app}/ in this market tree (beclab/apps layout: "
                         "<market>/<app>/)")
    real = os.path.realpath(folder)
    if os.path.commonpath([real, os.path.realpath(market)]) != os.path.realpath(market):
        raise UsageError(f"{safe_line(folder)}: lies outside the market tree {safe_line(market)} (a linked parent "
                         "folder); refused")
    return folder


def _writable(path: Path) -> None:
    """A file the change rewrites: missing or a regular file, never a link (it could point anywhere)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{safe_line(path)}: not a regular file (a symbolic link?); prune rewrites only regular "
                         "files of the market tree")


def chart_version(folder: Path) -> str:
    """The app's current version; Chart.yaml and OlaresManifest.yaml must agree on it."""
    chart = _find(folder / CHART, _CHART_VERSION)
    manifest = _meta_version(folder / MANIFEST)
    if chart[1] != manifest[1]:
        raise UsageError(f"{folder}: {CHART} version {chart[1]} differs from {MANIFEST} metadata.version "
                         f"{manifest[1]}; fix the market folder first")
    return chart[1]


def plan_suspend(market: Path, app: str, bump: Callable[[str], str]) -> MarketChange:
    folder = folder_of(market, app)
    if (folder / REMOVE).exists():
        raise UsageError(f"{folder} is already removed (.remove); it cannot be suspended")
    current = chart_version(folder)
    if (folder / SUSPEND).exists():
        return MarketChange(app, "none", folder, current, note=f"already suspended at {current}")
    new = bump(current)
    for path in (folder / CHART, folder / MANIFEST, folder / SUSPEND):
        _writable(path)
    writes = {folder / CHART: _set_chart_version(folder / CHART, new),
              folder / MANIFEST: _set_meta_version(folder / MANIFEST, new),
              folder / SUSPEND: ""}
    return MarketChange(app, "SUSPEND", folder, new, writes, note=f"{current} -> {new}, empty {SUSPEND}")


def plan_remove(market: Path, app: str) -> MarketChange:
    folder = folder_of(market, app)
    if (folder / REMOVE).exists() and [p.name for p in folder.iterdir()] == [REMOVE]:
        return MarketChange(app, "none", folder, "", note="already removed")
    current = chart_version(folder)
    _writable(folder / REMOVE)
    deletes = sorted(p for p in folder.iterdir() if p.name != REMOVE)
    return MarketChange(app, "REMOVE", folder, current, {folder / REMOVE: ""}, deletes,
                        note=f"deletes {len(deletes)} entries, leaves only {REMOVE} (irreversible)")


def apply(change: MarketChange) -> None:
    """Write the planned change: new texts first (each atomic), then deletions."""
    folder_of(change.folder.parent, change.app)  # still a real folder inside the market tree
    for path, text in change.writes.items():
        atomic_write_text(path, text)
    for path in change.deletes:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # rmtree never follows a link inside the folder
        else:
            path.unlink(missing_ok=True)  # a link itself goes, not what it points to


def _find(path: Path, pattern: re.Pattern[str]) -> tuple[int, str]:
    lines = _lines(path)
    for index, line in enumerate(lines):
        match = pattern.match(line.rstrip("\n"))
        if match:
            return index, match.group(2)
    raise UsageError(f"{path}: no top-level `version:` line")


def _meta_version(path: Path) -> tuple[int, str]:
    """The `version:` line inside the top-level `metadata:` block."""
    lines = _lines(path)
    inside = False
    for index, line in enumerate(lines):
        if line.startswith("metadata:"):
            inside = True
        elif inside and line.strip() and not line[0].isspace() and not line.startswith("#"):
            break
        elif inside and (match := _META_VERSION.match(line.rstrip("\n"))):
            return index, match.group(3)
    raise UsageError(f"{path}: no metadata.version line")


def _set_chart_version(path: Path, new: str) -> str:
    index, old = _find(path, _CHART_VERSION)
    return _replace_line(path, index, old, new)


def _set_meta_version(path: Path, new: str) -> str:
    index, old = _meta_version(path)
    return _replace_line(path, index, old, new)


def _replace_line(path: Path, index: int, old: str, new: str) -> str:
    lines = _lines(path)
    head, _, tail = lines[index].partition("version:")
    lines[index] = head + "version:" + tail.replace(old, new, 1)
    return "".join(lines)


def _lines(path: Path) -> list[str]:
    _writable(path)
    if not path.is_file():
        raise UsageError(f"{path}: missing; a market app folder has {CHART} and {MANIFEST}")
    return path.read_text(encoding="utf-8").splitlines(keepends=True)
