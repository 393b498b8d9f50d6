"""`market:DIR`: the files the maintainer's Cloudflare Worker serves, as his build script writes them.

The worker (github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 `src/index.ts`)
imports three JSON files and serves the Olares Market Source API from them:

    DIR/src/catalog.json   {hash, summaries, details, latest}   JSON.stringify(_, null, 2)
    DIR/src/charts.json    {"<app>-<version>.tgz": base64}      JSON.stringify(_)
    DIR/src/icons.json     {"<app>": base64 PNG}                JSON.stringify(_, null, 2)

`charts.json` keeps every package it ever held (each released version stays downloadable); a version already
there with the same content is skipped, with other content refused. `catalog.json` lists the newest package of
each app, read back from `charts.json`, so the folder always describes itself. Icons are the PNG files of
DIR/icons/ (the layout of the maintainer's repository). Every file is written only when its text changes,
atomically: a second publish of the same releases changes nothing, and `wrangler dev` is not re-triggered.

`build_market` is also what `catalog serve` answers from (generator/market/), so both give the same bytes.

One catalog, two formats (docs/market-source.md): every package is read back with its manifest profile
(`olares-v2` 0.10.0 or `olares-v3` 0.12.0), and one build is made per profile (`build_markets`). A device asks
with its Olares version (`?version=X`, beclab/market@8cfabaae002b92598a86ba410149e9002bb47276
internal/v2/appinfo/syncerfn/hash_comparison_step.go, data_fetch_step.go; `version` in the body of
detail_fetch_step.go) and gets the newest format its version installs (`format_for`): the minimum Olares
version of each profile is its own `olares_dependency`. The worker serves one `catalog.json` whatever the
version; `src/catalog.json` is the newest format's, and `src/catalog.<profile>.json` holds each format's for a
worker that answers by version. Packages of both formats share `charts.json`: their versions differ
(`1.0.6`, `1.0.6-v2`, generator/versions/formats.py), so their file names never collide.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import re
import stat
from generator.adapters import Helm
from pydantic import JsonValue

from generator.chart import PROFILES, Profile
from generator.chart import Tree
from generator.core import read_regular_file
from generator.core import CatalogError, InputError, Problem, translate_os_error
from generator.core import atomic_write_text
from generator.core import Lazy, Maker
from generator.core import safe_line
from generator.publish.core import Decision, Item, refuse_other_content
from generator.publish.market_entry import (
    AppEntry,
    ChartView,
    entries_for,
    js_iso,
    latest_order,
    read_chart,
)
from generator.publish.package import PackageRefused, package, tree_of_package
from generator.publish.secrets import Redactor
from generator.versions import content_hash, parse_version

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SRC = "src"
MAX_ICON_BYTES = 1 << 20  # one icon; Olares shows icons at 256 px and the maintainer's are under 100 KiB
MAX_ICONS = 2000  # PNG files read from one icons folder


# ---- which format a device gets -----------------------------------------------------------------------------

_TRIPLE = re.compile(r"^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:[-+][0-9A-Za-z.+-]*)?$")


def olares_triple(text: str | None) -> tuple[int, int, int] | None:
    """An Olares version `1.12.6` (also `v1.12.6`, `1.12.6-rc.1`, `1.12.6+build`) as numbers; None when it is
    missing or not one. A pre-release of X.Y.Z counts as X.Y.Z, as the profiles' constraints `>=X.Y.Z-0` say."""
    match = _TRIPLE.match((text or "").strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def min_olares(profile: Profile) -> tuple[int, int, int]:
    """The first Olares version that installs `profile`, from its own dependency constraint (`>=1.12.6-0`)."""
    found = olares_triple(profile.olares_dependency.removeprefix(">="))
    assert found is not None, f"profile {profile.name}: {profile.olares_dependency!r} is not `>=X.Y.Z[-0]`"
    return found


def formats_newest_first() -> list[str]:
    """Every profile, the one of the newest Olares first."""
    return [p.name for p in sorted(PROFILES.values(), key=min_olares, reverse=True)]


def format_for(device_version: str | None) -> str:
    """The format a device of `device_version` installs: the newest profile whose first Olares version is not
    above it; the newest profile when no version is given or it is not one; the oldest for an older device."""
    ordered = formats_newest_first()
    device = olares_triple(device_version)
    if device is None:
        return ordered[0]
    return next((name for name in ordered if min_olares(PROFILES[name]) <= device), ordered[-1])


@dataclass(frozen=True)
class Released:
    """One released chart version: its files, its release date and its Helm package (the bytes, or how to make
    them: the market server packages a version when a device first downloads it, core/lazy.py)."""

    app: str
    version: str
    tree: Tree
    date: str  # YYYY-MM-DD
    made: bytes | Maker = field(compare=False, repr=False)
    profile: str = ""  # the manifest profile of `tree` ("" : read from the tree when needed)

    @property
    def file_name(self) -> str:
        return f"{self.app}-{self.version}.tgz"

    @cached_property
    def package(self) -> bytes:
        return self.made if isinstance(self.made, bytes) else self.made()


def packages_of(releases: Iterable[Released]) -> Lazy:
    """Every package of `releases` by file name, each made on first read."""
    return Lazy({rel.file_name: lambda rel=rel: rel.package for rel in releases})  # type: ignore[misc]


@dataclass(frozen=True)
class MarketBuild:
    """Everything a Market Source serves, built once from released charts."""

    hash: str
    entries: tuple[AppEntry, ...]  # one per listed app, in the script's order
    latest: tuple[str, ...]
    last_updated: str  # the newest release date of a listed app, ISO (what `hash` answers as last_updated)
    charts: Mapping[str, bytes] = field(default_factory=dict)  # every downloadable package, by file name
    icons: dict[str, bytes] = field(default_factory=dict)  # PNG by app name
    profile: str = ""  # the manifest profile of the listed entries ("" : not split by format)

    def summaries(self) -> dict[str, dict[str, JsonValue]]:
        return {e.app_id: e.summary.as_json() for e in self.entries}

    def details(self) -> dict[str, dict[str, JsonValue]]:
        return {e.app_id: e.detail.as_json() for e in self.entries}

    def catalog_json(self) -> str:
        """src/catalog.json as build-catalog.js writes it (two-space indent, no final newline)."""
        data = {"hash": self.hash, "summaries": self.summaries(), "details": self.details(),
                "latest": list(self.latest)}
        return json.dumps(data, indent=2, ensure_ascii=False)

    def charts_json(self) -> str:
        return json.dumps({name: base64.b64encode(self.charts[name]).decode("ascii") for name in sorted(self.charts)},
                          ensure_ascii=False, separators=(",", ":"))

    def icons_json(self) -> str:
        return json.dumps({name: base64.b64encode(self.icons[name]).decode("ascii") for name in sorted(self.icons)},
                          indent=2, ensure_ascii=False)


def payload_hash(summaries: object, details: object, latest: list[str]) -> str:
    """build-catalog.js: md5 of JSON.stringify({summaries, details, latest})."""
    text = json.dumps({"summaries": summaries, "details": details, "latest": latest}, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def newest_per_app(releases: Iterable[Released], listed: Collection[str] | None = None) -> dict[str, Released]:
    newest: dict[str, Released] = {}
    for rel in releases:
        if listed is not None and rel.app not in listed:
            continue
        if rel.app not in newest or parse_version(rel.version) > parse_version(newest[rel.app].version):
            newest[rel.app] = rel
    return newest


def build_market(releases: Iterable[Released], icons: Mapping[str, bytes], *,
                 listed: Collection[str] | None = None, where: str = "charts", profile: str = "") -> MarketBuild:
    """The Market Source of `releases`: every package downloadable; the newest version of each app (of the
    `listed` ones, default all) described by its summary and detail entry."""
    releases = list(releases)
    newest = newest_per_app(releases, listed)
    views: dict[str, tuple[ChartView, str]] = {
        app: (read_chart(rel.tree, app, f"{where}/{app} {rel.version}"), rel.date) for app, rel in newest.items()}
    entries = entries_for(views)
    latest = latest_order(entries)
    summaries = {e.app_id: e.summary.as_json() for e in entries}
    details = {e.app_id: e.detail.as_json() for e in entries}
    dates = [rel.date for rel in newest.values()]
    return MarketBuild(
        hash=payload_hash(summaries, details, latest), entries=tuple(entries), latest=tuple(latest),
        last_updated=js_iso(max(dates)) if dates else js_iso("1970-01-01"),
        charts=packages_of(releases), icons=dict(icons), profile=profile,
    )


def profile_of(rel: Released, where: str = "charts") -> str:
    return rel.profile or read_chart(rel.tree, rel.app, f"{where}/{rel.app} {rel.version}").profile


def build_markets(releases: Iterable[Released], icons: Mapping[str, bytes], *,
                  listed: Mapping[str, Collection[str]] | None = None, where: str = "charts") -> dict[str, MarketBuild]:
    """One build per manifest profile, newest format first: each lists the apps (of `listed[profile]`, default
    all) that have a release in that profile. Every build can download every package (file names are unique)."""
    releases = list(releases)
    by_profile: dict[str, list[Released]] = {name: [] for name in formats_newest_first()}
    for rel in releases:
        by_profile.setdefault(profile_of(rel, where), []).append(rel)
    out: dict[str, MarketBuild] = {}
    for name, rels in by_profile.items():
        build = build_market(rels, icons, listed=None if listed is None else listed.get(name, ()), where=where,
                             profile=name)
        out[name] = MarketBuild(build.hash, build.entries, build.latest, build.last_updated,
                                packages_of(releases), build.icons, name)
    return out


# ---- packages and folders ----------------------------------------------------------------------------------


def package_bytes(tree: Tree, app: str, version: str, date: str, *, helm: Helm) -> bytes:
    """The reproducible Helm package of a chart (publish/package.py: same tree and date, same bytes)."""
    work = Path(tempfile.mkdtemp(prefix="catalog-market-"))
    try:
        return package(tree, app, version, date, work, helm=helm).read_bytes()
    except OSError as exc:
        raise translate_os_error(exc, work, "package") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def package_date(data: bytes, where: str) -> str:
    """The release date a package was made with (publish/package.py stamps every file with its midnight UTC)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            first = tar.next()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise PackageRefused(f"{where}: not a Helm package (.tgz): {exc}; remove or replace it") from None
    if first is None:
        raise PackageRefused(f"{where}: an empty Helm package; remove or replace it")
    return dt.datetime.fromtimestamp(first.mtime, dt.UTC).date().isoformat()


def released_from_package(file_name: str, data: bytes, where: str = "charts.json") -> Released:
    """A package of charts.json read back, within Helm's size limits (publish/package.py): name and version
    from its Chart.yaml, date from its file times."""
    label = f"{where}: {file_name}"
    fd, tmp = tempfile.mkstemp(prefix="catalog-market-", suffix=".tgz")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        tree = tree_of_package(Path(tmp), label)
    except OSError as exc:
        raise translate_os_error(exc, tmp, "write") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    date = package_date(data, label)
    view = read_chart(tree, file_name, label)
    app, version = view.name, view.chart_version
    if file_name != f"{app}-{version}.tgz":
        raise PackageRefused(f"{label} holds chart {app} {version}; its key must be {app}-{version}.tgz")
    return Released(app, version, tree, date, data)


@dataclass(frozen=True)
class IconSet:
    icons: dict[str, bytes]  # PNG by app name
    problems: tuple[str, ...] = ()  # icons not served, and why


def read_icons(folder: Path) -> IconSet:
    """The PNG files of `folder` by name (no extension), as build-catalog.js reads icons/; empty without the folder.

    Each is read by the bounded reader (generator/core/bounded.py): a symbolic link (wherever it points), a
    FIFO, a device or a file over MAX_ICON_BYTES is not served and is named in `problems`, as is a file that is
    not a PNG; so is a linked icons folder. At most MAX_ICONS files are read."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return IconSet({})
    except OSError as exc:
        raise translate_os_error(exc, folder, "read") from exc
    if stat.S_ISLNK(info.st_mode):
        return IconSet({}, (f"{safe_line(str(folder))}: a symbolic link; icons are read only from a real folder "
                            "(replace the link with the folder)",))
    if not stat.S_ISDIR(info.st_mode):
        return IconSet({}, (f"{safe_line(str(folder))}: not a folder; icons are PNG files in a folder icons/",))
    icons: dict[str, bytes] = {}
    problems: list[str] = []
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".png"))
    except OSError as exc:
        raise translate_os_error(exc, folder, "read") from exc
    if len(names) > MAX_ICONS:
        problems.append(f"{safe_line(str(folder))}: {len(names)} PNG files, more than {MAX_ICONS}; only the first "
                        f"{MAX_ICONS} by name are served")
    for name in names[:MAX_ICONS]:
        path = folder / name
        try:
            data = read_regular_file(path, MAX_ICON_BYTES, "the icon")
        except CatalogError as exc:
            problems.append(f"icon {safe_line(name)} not served: {exc}")
            continue
        if not data.startswith(PNG_SIGNATURE):
            problems.append(f"icon {safe_line(name)} not served: {safe_line(str(path))} is not a PNG image; icons "
                            "are PNG files")
            continue
        icons[name.removesuffix(".png")] = data
    return IconSet(icons, tuple(problems))


def _bad(path: Path, message: str, line: int | None = None) -> InputError:
    return InputError([Problem(str(path), line, None, f"{message}; restore it from git or delete it")])


def _read_json_map(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from None
    except UnicodeDecodeError as exc:
        raise _bad(path, f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise _bad(path, f"is not JSON ({exc.msg})", exc.lineno) from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise _bad(path, "expected an object of base64 strings")
    return data


def read_charts_json(path: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, text in _read_json_map(path).items():
        try:
            out[name] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _bad(path, f"{name} is not base64 ({exc})") from None
    return out


class MarketTarget:
    """`catalog publish --to market:DIR`."""

    def __init__(self, path: Path, *, helm: Helm):
        self.path = path
        self.helm = helm
        self.label = f"market:{path}"
        self.redact = Redactor()
        self.charts: dict[str, bytes] = {}

    @property
    def src(self) -> Path:
        return self.path / SRC

    def open(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise InputError([Problem(str(self.path), None, None,
                                      "not a folder; market:DIR names the worker's folder")])
        refuse_links_below(self.path, self.src)
        self.charts = read_charts_json(self.src / "charts.json")

    def _packages(self, item: Item) -> list[tuple[str, str, Tree, str]]:
        """(file name, version, tree, content) of the item and of each recorded variant."""
        assert item.content is not None
        return [(f"{item.app}-{item.version}.tgz", item.version, item.tree, item.content)] + [
            (f"{item.app}-{v.version}.tgz", v.version, v.tree, v.content) for v in item.variants]

    def decide(self, item: Item) -> Decision:
        missing = []
        for name, version, _tree, content in self._packages(item):
            existing = self.charts.get(name)
            if existing is None:
                missing.append(name)
                continue
            theirs = content_hash(released_from_package(name, existing, f"{self.label}/{SRC}/charts.json").tree)
            if theirs != content:
                if version == item.version:
                    return refuse_other_content(item, self.label, theirs)
                return Decision("refused", f"{item.app} {version} is already published at {self.label} with content "
                                f"{theirs}, but the catalog renders {content}; run `catalog bump {item.app}`")
        notes = "".join(f"; {n}" for n in item.variant_notes)
        if missing:
            return Decision("publish", f"new package{'s' if len(missing) > 1 else ''} {', '.join(missing)}{notes}")
        names = ", ".join(name for name, *_ in self._packages(item))
        return Decision("skipped", f"{names} already in {SRC}/charts.json with this content{notes}")

    def publish(self, item: Item, decision: Decision) -> str:
        added = []
        for name, version, tree, _content in self._packages(item):
            if name not in self.charts:
                self.charts[name] = package_bytes(tree, item.app, version, item.date, helm=self.helm)
                added.append(name)
        notes = "".join(f"; {n}" for n in item.variant_notes)
        return f"added {', '.join(added)} to {SRC}/charts.json{notes}"

    def finish(self, published: list[Item]) -> None:
        """Write the files from charts.json and DIR/icons/, each only when its text changed: charts.json,
        icons.json, catalog.json (the newest format) and catalog.<profile>.json per format."""
        where = f"{self.label}/{SRC}/charts.json"
        icons = read_icons(self.path / "icons")
        if icons.problems:
            raise InputError([Problem(str(self.path / "icons"), None, None, p) for p in icons.problems])
        released = [released_from_package(n, d, where) for n, d in sorted(self.charts.items())]
        builds = build_markets(released, icons.icons, where=where)
        newest = next(iter(builds.values()))
        files = [("charts.json", newest.charts_json()), ("icons.json", newest.icons_json()),
                 ("catalog.json", newest.catalog_json())]
        files += [(f"catalog.{name}.json", build.catalog_json()) for name, build in builds.items()]
        for name, _text in files:
            writable_below(self.path, self.src / name)
        for name, text in files:
            write_if_changed(self.src / name, text)

    def close(self) -> None:
        pass


def refuse_links_below(root: Path, folder: Path) -> None:
    """`folder` and every folder between `root` and it must be real folders (or missing): a link there would let
    the files be written elsewhere (an InputError naming it; nothing is written)."""
    try:
        rel = folder.relative_to(root)
    except ValueError:
        rel = Path(folder.name)
        root = folder.parent
    here = root
    for part in rel.parts:
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise translate_os_error(exc, here, "write") from exc
        if stat.S_ISLNK(info.st_mode):
            raise InputError([Problem(safe_line(str(here)), None, None, "a symbolic link; catalog never writes "
                                      "through a link (replace it with a real folder)")])
        if not stat.S_ISDIR(info.st_mode):
            raise InputError([Problem(safe_line(str(here)), None, None, "not a folder; remove it or choose "
                                      "another output folder")])


def writable_below(root: Path, path: Path) -> None:
    """`path` may be written: no link on the way from `root`, and itself a regular file or missing."""
    from generator.core import writable

    refuse_links_below(root, path.parent)
    writable(path)


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` atomically unless the file already holds it; True when written."""
    try:
        if path.is_file() and not path.is_symlink() and path.read_bytes() == text.encode("utf-8"):
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    except OSError as exc:
        raise translate_os_error(exc, path, "write") from None
    return True


__all__ = ["IconSet", "MarketBuild", "MarketTarget", "Released", "build_market", "build_markets", "format_for",
           "formats_newest_first", "min_olares", "olares_triple", "package_bytes", "packages_of", "payload_hash",
           "profile_of",
           "read_charts_json", "read_icons", "refuse_links_below", "released_from_package", "writable_below",
           "write_if_changed"]
