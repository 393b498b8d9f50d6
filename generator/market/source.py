"""The released versions a Market Source may serve, and nothing else.

An app version is served when `releases.yaml` records it and a chart with exactly the recorded content is
found: the chart in `charts/<app>/` (what `catalog render` wrote), else a commit of the charts folder's git
history whose `Chart.yaml` has that version (older versions: git keeps what releases.yaml only hashes).
Content is compared with generator/versions/state.py `content_hash`, the hash `catalog bump` recorded.

Listed apps are those with a chart folder now; each is described by its newest served version. Released
versions of apps without a folder (removed) stay downloadable, unlisted. A chart folder at a version that is
not recorded, or with other content, is reported and its newest released version is served instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from generator.adapters.git import Git
from generator.adapters.helm import Helm
from generator.chart.writer import Tree, read_tree
from generator.core.errors import CatalogError, translate_os_error
from generator.publish.market import Released, package_bytes
from generator.versions.gitbase import GitCharts, chart_version
from generator.versions.releases import Release, load_releases
from generator.versions.state import content_hash, parse_version


@dataclass
class PackageCache:
    """Packages already made, by (app, version, content): a released version never changes, so a server
    packages each one once. Packages are made by the Helm engine; git history is read through the Git adapter."""

    helm: Helm = field(default_factory=Helm)
    git: Git = field(default_factory=Git)
    made: dict[tuple[str, str, str], Released] = field(default_factory=dict)

    def get(self, app: str, rec: Release, tree: Tree) -> Released:
        key = (app, rec.version, rec.content)
        if key not in self.made:
            self.made[key] = Released(app, rec.version, tree, rec.date,
                                      package_bytes(tree, app, rec.version, rec.date, helm=self.helm))
        return self.made[key]


@dataclass(frozen=True)
class Collected:
    releases: tuple[Released, ...]  # every released version found, oldest first per app
    listed: frozenset[str]  # apps with a chart folder and a served version
    problems: tuple[str, ...]  # what is not served, and why


def chart_folders(charts_dir: Path) -> list[Path]:
    try:
        return sorted(p for p in charts_dir.iterdir() if (p / "Chart.yaml").is_file()) if charts_dir.is_dir() else []
    except OSError as exc:
        raise translate_os_error(exc, charts_dir, "read") from exc


class _History:
    """Chart versions in the git history of the charts folder (none when it is not in a git repository)."""

    def __init__(self, charts_dir: Path, git: Git):
        self.gc: GitCharts | None
        try:
            self.gc = GitCharts.locate(charts_dir, git)
            git.run(self.gc.repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        except (CatalogError, OSError, ValueError):
            self.gc = None  # no git, not a repository, no commit yet, or the folder outside its work tree

    def _chart_path(self, app: str) -> str:
        assert self.gc is not None
        return f"{self.gc.folder}/{app}/Chart.yaml" if self.gc.folder else f"{app}/Chart.yaml"

    def commits_with(self, app: str) -> dict[str, list[str]]:
        """{version: commits of `app`'s chart folder whose Chart.yaml has it, newest first}."""
        if self.gc is None:
            return {}
        path = self._chart_path(app)
        # every commit that touched the chart folder: a version keeps its number while other files change
        commits = self.gc.git.text(self.gc.repo, "log", "--format=%H", "HEAD", "--", path.rsplit("/", 1)[0]).split()
        if not commits:
            return {}
        out = self.gc.git.run(self.gc.repo, "cat-file", "--batch",
                              stdin="".join(f"{c}:{path}\n" for c in commits).encode())
        found: dict[str, list[str]] = {}
        pos = 0
        for commit in commits:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if header[-1] == b"missing":
                continue
            size = int(header[2])
            text = out[pos:pos + size].decode("utf-8", "replace")
            pos += size + 1
            version = chart_version({"Chart.yaml": text})
            if version:
                found.setdefault(version, []).append(commit)
        return found

    def tree(self, commit: str, app: str) -> Tree:
        assert self.gc is not None
        return self.gc.tree(commit, app)


def _from_history(history: _History, cache: PackageCache, app: str,
                  wanted: list[Release]) -> list[Released | Release]:
    """Each wanted release packaged from the newest commit holding its recorded content, or itself when none does."""
    by_version = history.commits_with(app)
    out: list[Released | Release] = []
    for rec in wanted:
        made = cache.made.get((app, rec.version, rec.content))
        if made is None:
            trees = (history.tree(commit, app) for commit in by_version.get(rec.version, []))
            tree = next((t for t in trees if content_hash(t) == rec.content), None)
            made = cache.get(app, rec, tree) if tree is not None else None
        out.append(made if made is not None else rec)
    return out


def collect(catalog_root: Path, charts_dir: Path, cache: PackageCache | None = None) -> Collected:
    """Every released version that can be served from `charts_dir` and its git history."""
    cache = cache or PackageCache()
    releases = load_releases(catalog_root)
    problems: list[str] = []
    found: dict[str, dict[str, Released]] = {}
    folders = {p.name: p for p in chart_folders(charts_dir)}
    for app, folder in folders.items():
        tree = read_tree(folder)
        version = chart_version(tree) or "?"
        rec = releases.get(app, version)
        if rec is None:
            problems.append(f"charts/{app} is at {version}, which releases.yaml does not record (run `catalog bump "
                            f"{app}`); serving its newest released version")
        elif content_hash(tree) != rec.content:
            problems.append(f"charts/{app} {version} differs from the content releases.yaml records for it (run "
                            f"`catalog bump {app}`); serving its newest released version")
        else:
            found.setdefault(app, {})[version] = cache.get(app, rec, tree)
    history = _History(charts_dir, cache.git)
    for app, versions in sorted(releases.apps.items()):
        missing = [versions[v] for v in versions if v not in found.get(app, {})]
        for got in (_from_history(history, cache, app, missing) if missing else []):
            if isinstance(got, Released):
                found.setdefault(app, {})[got.version] = got
            elif app in folders:
                problems.append(f"{app} {got.version} is recorded in releases.yaml but no chart with its content was "
                                f"found in {charts_dir.name}/ or its git history; it cannot be downloaded")
    for app in folders:
        if app not in found:
            problems.append(f"{app}: no released version can be served; it is not listed")
    ordered = [found[app][v] for app in sorted(found) for v in sorted(found[app], key=parse_version)]
    return Collected(tuple(ordered), frozenset(a for a in folders if a in found), tuple(problems))


def signature(*folders: Path) -> frozenset[tuple[str, int, int]]:
    """(path, mtime_ns, size) of every file under `folders` (git internals skipped): a change of any file the
    market is built from changes it."""
    seen: set[tuple[str, int, int]] = set()
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith(".catalog-")]
            for name in files:
                path = os.path.join(top, name)
                try:
                    st = os.stat(path)
                except FileNotFoundError:
                    continue  # removed while walking: the next poll sees the new state
                seen.add((path, st.st_mtime_ns, st.st_size))
    return frozenset(seen)


__all__ = ["Collected", "PackageCache", "chart_folders", "collect", "signature"]
