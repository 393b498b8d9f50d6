"""The released versions a Market Source may serve, and nothing else.

An app version is served when `releases.yaml` records it and a chart with exactly the recorded content is
found: the chart in `charts/<app>/` (what `catalog render` wrote), else a commit of the charts folder's git
history whose `Chart.yaml` has that version (older versions: git keeps what releases.yaml only hashes).
Content is compared with generator/versions/state.py `content_hash`, the hash `catalog bump` recorded.

Listed apps are those with a chart folder now; each is described by its newest served version. Released
versions of apps without a folder (removed) stay downloadable, unlisted. A chart folder at a version that is
not recorded, or with other content, is reported and its newest released version is served instead.

The other manifest formats (generator/versions/formats.py): each listed app's catalog version is rendered in
every profile the catalog does not use, and served in that format when releases.yaml records that content for
the version (`formats:`), packaged as `X.Y.Z-<apiVersion>`. A variant made earlier in the life of the server
stays downloadable while its record stays; an app that a profile cannot express is not listed in it.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml.error import YAMLError

from generator.adapters import Git
from generator.adapters import Helm
from generator.catalog import Catalog
from generator.chart import PROFILES
from generator.chart import Tree, read_tree
from generator.core import CatalogError, translate_os_error
from generator.core import Maker
from generator.publish import Released, package_bytes, profile_of
from generator.versions import Variant, variant_version, variants
from generator.versions import GitCharts, chart_version
from generator.versions import Release, Releases, load_releases
from generator.versions import content_hash, parse_version


@dataclass
class PackageCache:
    """Packages by (app, version, content): a released version never changes, so a server packages each one
    once, when a device first downloads it. Packages are made by the Helm engine; git history is read through the
    Git adapter."""

    helm: Helm = field(default_factory=Helm)
    git: Git = field(default_factory=Git)
    made: dict[tuple[str, str, str], Released] = field(default_factory=dict)
    variants: dict[tuple[str, str, str], tuple[str, Released]] = field(default_factory=dict)  # -> (base version, _)
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    hashes: dict[str, str] = field(default_factory=dict)  # content hash by git tree id ("": not a chart)

    def get(self, app: str, rec: Release, tree: Tree) -> Released:
        key = (app, rec.version, rec.content)
        if key not in self.made:
            released = Released(app, rec.version, tree, rec.date, self._maker(tree, app, rec.version, rec.date))
            # profile_of reads the tree: nothing is packaged here
            self.made[key] = dataclasses.replace(released, profile=profile_of(released))
        return self.made[key]

    def variant(self, app: str, rec: Release, made: Variant) -> Released:
        key = (app, made.version, made.content)
        if key not in self.variants:
            self.variants[key] = (rec.version, Released(
                app, made.version, made.tree, rec.date, self._maker(made.tree, app, made.version, rec.date),
                made.profile))
        return self.variants[key][1]

    def _maker(self, tree: Tree, app: str, version: str, date: str) -> Maker:
        """Packages the chart when first downloaded (core/lazy.py), one package at a time: the Helm engine is
        one in-process library shared by the request threads."""
        def make() -> bytes:
            with self.lock:
                return package_bytes(tree, app, version, date, helm=self.helm)
        return make


@dataclass(frozen=True)
class Collected:
    releases: tuple[Released, ...]  # every released version found, oldest first per app and format
    listed: dict[str, frozenset[str]]  # per profile: apps with a chart folder and a served version in it
    problems: tuple[str, ...]  # what is not served, and why
    unexpressed: tuple[str, ...] = ()  # apps a profile cannot express (not listed in it by design), and why
    recorded: frozenset[str] = frozenset()  # every package file name releases.yaml records, served or not
    pending: int = 0  # recorded versions not looked for yet in the git history (collect(history=False))
    waiting: frozenset[str] = frozenset()  # formats not made yet (collect(formats=False)): no device is answered


    @property
    def every_listed(self) -> frozenset[str]:
        return frozenset().union(*self.listed.values()) if self.listed else frozenset()


def _version_of(tree: Tree) -> str | None:
    """The Chart.yaml version of a chart, None when there is none or Chart.yaml is not YAML (reported by the
    caller as a chart that is not served, never an error of the whole market)."""
    try:
        return chart_version(tree)
    except (YAMLError, ValueError):
        return None


def _hash_of(tree: Tree) -> str | None:
    """content_hash, None for a chart whose YAML files do not parse (it cannot have the recorded content)."""
    try:
        return content_hash(tree)
    except (YAMLError, ValueError):
        return None


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
        """{version: the distinct git trees of `app`'s chart folder whose Chart.yaml has it, newest first} (tree
        object ids: two commits with the same folder content are one tree, read and hashed once)."""
        if self.gc is None:
            return {}
        path = self._chart_path(app)
        folder = path.rsplit("/", 1)[0]
        # every commit that touched the chart folder: a version keeps its number while other files change
        commits = self.gc.git.text(self.gc.repo, "log", "--format=%H", "HEAD", "--", folder).split()
        if not commits:
            return {}
        out = self.gc.git.run(self.gc.repo, "cat-file", "--batch",
                              stdin="".join(f"{c}:{path}\n{c}:{folder}\n" for c in commits).encode())
        found: dict[str, list[str]] = {}
        pos = 0
        for _commit in commits:
            texts: list[tuple[bytes, str | None]] = []
            for _ in range(2):  # Chart.yaml, then the folder
                end = out.index(b"\n", pos)
                header = out[pos:end].split()
                pos = end + 1
                if header[-1] == b"missing":
                    texts.append((b"", None))
                    continue
                size = int(header[2])
                texts.append((header[0], out[pos:pos + size].decode("utf-8", "replace")))
                pos += size + 1
            (_, chart), (tree_id, _) = texts
            version = _version_of({"Chart.yaml": chart}) if chart is not None else None
            if version and tree_id and tree_id.decode() not in found.get(version, []):
                found.setdefault(version, []).append(tree_id.decode())
        return found

    def trees(self, tree_ids: list[str]) -> dict[str, Tree]:
        """Every file of each chart folder's git tree, all read at once ({tree id: {relative path: text}})."""
        assert self.gc is not None
        return self.gc.trees(tree_ids)


def _from_history(history: _History, cache: PackageCache,
                  missing: dict[str, list[Release]]) -> dict[str, list[Released | Release]]:
    """Each missing release packaged from the newest commit holding its recorded content, or itself when none does.
    Candidates are read in rounds, newest first (the newest tree of a version is nearly always the recorded one),
    every app's together (gitbase.py `trees`: a few git processes a round); a tree's content hash is kept by its
    object id (git trees never change), so a rebuild reads none again."""
    candidates = {app: history.commits_with(app) for app in missing}
    pending = {(app, rec.version, rec.content): list(candidates[app].get(rec.version, []))
               for app, wanted in missing.items() for rec in wanted}
    found: dict[tuple[str, str, str], Tree] = {}
    while pending:
        for key, left in list(pending.items()):  # known hashes first: no read needed to rule a tree in or out
            while left and left[0] in cache.hashes and cache.hashes[left[0]] != key[2]:
                left.pop(0)
            if not left or (key[0], key[1], key[2]) in cache.made:
                del pending[key]
        wanted = {left[0] for left in pending.values()}
        if not wanted:
            break
        trees = history.trees(sorted(wanted))
        for tree_id, tree in trees.items():
            cache.hashes[tree_id] = _hash_of(tree) or ""
        for key, left in list(pending.items()):
            if cache.hashes.get(left[0]) == key[2]:
                found[key] = trees[left[0]]
                del pending[key]
    out: dict[str, list[Released | Release]] = {}
    for app, recs in missing.items():
        for rec in recs:
            key = (app, rec.version, rec.content)
            made = cache.made.get(key) or (cache.get(app, rec, found[key]) if key in found else None)
            out.setdefault(app, []).append(made if made is not None else rec)
    return out


def _variants(cat: Catalog | None, releases: Releases, folders: set[str], cache: PackageCache,
              problems: list[str], unexpressed: list[str]) -> list[Released]:
    """The recorded variants of each listed app's catalog version, and those made earlier that are still recorded."""
    out: dict[str, Released] = {}
    for (app, _version, content), (base, rel) in sorted(cache.variants.items()):
        rec = releases.get(app, base)
        if rec is not None and rec.format_content(rel.profile) == content:
            out[rel.file_name] = rel
    if cat is None:
        return list(out.values())
    for name in sorted(folders):
        r = cat.apps.get(name)
        rec = releases.get(name, r.app.version) if r is not None and r.app.status != "removed" else None
        if r is None or rec is None:
            continue
        made, refused = variants(r)
        unexpressed += [f"{name}: not listed for {p} devices: {why}" for p, why in sorted(refused.items())]
        for profile, variant in sorted(made.items()):
            want = rec.format_content(profile)
            if want == variant.content:
                rel = cache.variant(name, rec, variant)
                out[rel.file_name] = rel
            elif want is None:
                problems.append(f"{name} {rec.version}: its {profile} chart ({variant.version}) is not recorded in "
                                f"releases.yaml, so {profile} devices do not get it (run `catalog bump {name}`)")
            else:
                problems.append(f"{name} {variant.version}: the {profile} chart differs from the content "
                                f"releases.yaml records for it (run `catalog bump {name}`)")
    return list(out.values())


def recorded_files(releases: Releases) -> frozenset[str]:
    """The package file names of every recorded version and recorded variant."""
    names = set()
    for app, versions in releases.apps.items():
        for version, rec in versions.items():
            names.add(f"{app}-{version}.tgz")
            names.update(f"{app}-{variant_version(version, PROFILES[p])}.tgz" for p, _ in rec.formats if p in PROFILES)
    return frozenset(names)


def collect(catalog_root: Path, charts_dir: Path, cache: PackageCache | None = None,
            catalog: Catalog | None = None, *, history: bool = True, formats: bool = True) -> Collected:
    """Every released version that can be served from `charts_dir` and its git history, and the recorded
    variants of `catalog`'s apps in the other formats (none without a catalog). With `history=False` the git
    history is not read (`catalog serve`'s first answers, a few seconds sooner): the older versions it would
    serve are counted in `pending`, not reported as problems. With `formats=False` no other-format chart is
    rendered (seconds at 1,000 apps): the formats without a chart of charts/ are `waiting`, not empty."""
    cache = cache or PackageCache()
    releases = load_releases(catalog_root)
    problems: list[str] = []
    found: dict[str, dict[str, Released]] = {}
    folders = {p.name: p for p in chart_folders(charts_dir)}
    for app, folder in folders.items():
        tree = read_tree(folder)
        version = _version_of(tree) or "?"
        rec = releases.get(app, version)
        if version == "?":
            problems.append(f"charts/{app}/Chart.yaml has no version or is not YAML (re-render it: `catalog render "
                            f"{app}`); serving its newest released version")
        elif rec is None:
            problems.append(f"charts/{app} is at {version}, which releases.yaml does not record (run `catalog bump "
                            f"{app}`); serving its newest released version")
        elif _hash_of(tree) != rec.content:
            problems.append(f"charts/{app} {version} differs from the content releases.yaml records for it (run "
                            f"`catalog bump {app}`); serving its newest released version")
        else:
            found.setdefault(app, {})[version] = cache.get(app, rec, tree)
    missing = {app: [versions[v] for v in versions if v not in found.get(app, {})]
               for app, versions in sorted(releases.apps.items())}
    missing = {app: recs for app, recs in missing.items() if recs}
    pending = sum(map(len, missing.values())) if not history else 0
    recovered = _from_history(_History(charts_dir, cache.git), cache, missing) if history else {}
    for app, gots in recovered.items():
        for got in gots:
            if isinstance(got, Released):
                found.setdefault(app, {})[got.version] = got
            elif app in folders:
                problems.append(f"{app} {got.version} is recorded in releases.yaml but no chart with its content was "
                                f"found in {charts_dir.name}/ or its git history; it cannot be downloaded")
    for app in folders:
        if app not in found and (history or app not in missing):
            problems.append(f"{app}: no released version can be served; it is not listed")
    unexpressed: list[str] = []
    extra = _variants(catalog, releases, set(folders), cache, problems, unexpressed) if formats else []
    for rel in extra:
        found.setdefault(rel.app, {})[rel.version] = rel
    ordered = [found[app][v] for app in sorted(found) for v in sorted(found[app], key=parse_version)]
    listed = _listed(ordered, set(folders))
    # the formats without an app of charts/ wait for their charts; none when no format has one (an empty store is
    # served empty at once: there is nothing to make)
    empty = frozenset(name for name, apps in listed.items() if not apps)
    waiting = empty if not formats and len(empty) < len(listed) else frozenset()
    return Collected(tuple(ordered), listed, tuple(problems), tuple(unexpressed), recorded_files(releases), pending,
                     waiting)


def _listed(ordered: list[Released], folders: set[str]) -> dict[str, frozenset[str]]:
    """Per profile, the apps with a chart folder that have a served version in it."""
    listed: dict[str, set[str]] = {name: set() for name in PROFILES}
    for rel in ordered:
        if rel.app in folders:
            listed.setdefault(rel.profile, set()).add(rel.app)
    return {k: frozenset(v) for k, v in listed.items()}


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
