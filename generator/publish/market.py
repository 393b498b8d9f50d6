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
from pathlib import Path

from generator.adapters.helm import Helm
from pydantic import JsonValue

from generator.chart.writer import Tree
from generator.core.errors import InputError, Problem, translate_os_error
from generator.core.fileio import atomic_write_text
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
from generator.versions.state import content_hash, parse_version

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SRC = "src"


@dataclass(frozen=True)
class Released:
    """One released chart version: its files, its release date and its Helm package."""

    app: str
    version: str
    tree: Tree
    date: str  # YYYY-MM-DD
    package: bytes

    @property
    def file_name(self) -> str:
        return f"{self.app}-{self.version}.tgz"


@dataclass(frozen=True)
class MarketBuild:
    """Everything a Market Source serves, built once from released charts."""

    hash: str
    entries: tuple[AppEntry, ...]  # one per listed app, in the script's order
    latest: tuple[str, ...]
    last_updated: str  # the newest release date of a listed app, ISO (what `hash` answers as last_updated)
    charts: dict[str, bytes] = field(default_factory=dict)  # every downloadable package, by file name
    icons: dict[str, bytes] = field(default_factory=dict)  # PNG by app name

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
                 listed: Collection[str] | None = None, where: str = "charts") -> MarketBuild:
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
        charts={rel.file_name: rel.package for rel in releases}, icons=dict(icons),
    )


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


def read_icons(folder: Path) -> dict[str, bytes]:
    """The PNG files of `folder` by name (no extension), as build-catalog.js reads icons/; {} without the folder."""
    if not folder.is_dir():
        return {}
    icons: dict[str, bytes] = {}
    try:
        for path in sorted(folder.glob("*.png")):
            data = path.read_bytes()
            if not data.startswith(PNG_SIGNATURE):
                raise InputError([Problem(str(path), None, None, "not a PNG image; icons are PNG files")])
            icons[path.stem] = data
    except OSError as exc:
        raise translate_os_error(exc, folder, "read") from exc
    return icons


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
        self.charts = read_charts_json(self.src / "charts.json")

    def decide(self, item: Item) -> Decision:
        name = f"{item.app}-{item.version}.tgz"
        existing = self.charts.get(name)
        if existing is None:
            return Decision("publish", f"new package {name}")
        theirs = content_hash(released_from_package(name, existing, f"{self.label}/{SRC}/charts.json").tree)
        if theirs != item.content:
            return refuse_other_content(item, self.label, theirs)
        return Decision("skipped", f"{name} already in {SRC}/charts.json with this content")

    def publish(self, item: Item, decision: Decision) -> str:
        name = f"{item.app}-{item.version}.tgz"
        self.charts[name] = package_bytes(item.tree, item.app, item.version, item.date, helm=self.helm)
        return f"added {name} to {SRC}/charts.json"

    def finish(self, published: list[Item]) -> None:
        """Write the three files from charts.json and DIR/icons/, each only when its text changed."""
        where = f"{self.label}/{SRC}/charts.json"
        build = build_market([released_from_package(n, d, where) for n, d in sorted(self.charts.items())],
                             read_icons(self.path / "icons"), where=where)
        for name, text in (("charts.json", build.charts_json()), ("icons.json", build.icons_json()),
                           ("catalog.json", build.catalog_json())):
            write_if_changed(self.src / name, text)

    def close(self) -> None:
        pass


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` atomically unless the file already holds it; True when written."""
    try:
        if path.is_file() and path.read_bytes() == text.encode("utf-8"):
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    except OSError as exc:
        raise translate_os_error(exc, path, "write") from None
    return True


__all__ = ["MarketBuild", "MarketTarget", "Released", "build_market", "package_bytes", "payload_hash",
           "read_charts_json", "read_icons", "released_from_package", "write_if_changed"]
