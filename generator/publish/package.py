"""Charts as Helm packages: reproducible `.tgz` files (the Helm adapter's package) and trees read back from them.

Reading a package that a publish target already holds is reading untrusted input: a 2 MB `.tgz` can
expand to gigabytes. `tree_of_package` streams it and stops at Helm's own limits for a chart archive
(helm/helm pkg/chart/loader/archive.go: MaxDecompressedChartSize 100 MiB, MaxDecompressedFileSize 5 MiB),
checking each member's size before reading it and counting every decompressed byte, so memory and time
stay bounded whatever the package holds.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import os
import tarfile
import zlib
from pathlib import Path

from generator.adapters import Helm
from generator.chart import Tree
from generator.core import ExternalError, ToolError, translate_os_error

MAX_TOTAL = 100 * 1024 * 1024  # decompressed bytes of the whole package (headers included)
MAX_FILE = 5 * 1024 * 1024  # one file of the chart
MAX_MEMBERS = 10_000  # tar entries; a chart has tens


def _epoch(date: str) -> float:
    """Midnight UTC of the release date: every file of the package carries it, so same content = same bytes."""
    day = dt.date.fromisoformat(date)
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()


def stage(tree: Tree, folder: Path, date: str) -> Path:
    """Write `tree` into `folder` with fixed file times."""
    stamp = _epoch(date)
    for rel, text in sorted(tree.items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    for path in sorted(folder.rglob("*"), reverse=True) + [folder]:
        os.utime(path, (stamp, stamp))
    return folder


def package(tree: Tree, app: str, version: str, date: str, workdir: Path, *, helm: Helm) -> Path:
    """`<workdir>/dist/<app>-<version>.tgz`, packaged by the Helm engine from a staged copy of `tree`."""
    src = stage(tree, workdir / "src" / app, date)
    dist = workdir / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    path = helm.package(src, dist)
    expected = dist / f"{app}-{version}.tgz"
    if path != expected:
        raise ToolError(f"helm packaged {path.name}, expected {expected.name}: Chart.yaml name/version mismatch")
    return path


class PackageRefused(ExternalError):
    """A package at a publish target is not one we will read: corrupt, or past Helm's size limits."""


class _Budget(io.RawIOBase):
    """A read-only stream that refuses to give more than `limit` bytes of what it wraps."""

    def __init__(self, inner: io.BufferedIOBase, limit: int, where: str):
        self.inner, self.limit, self.where, self.count = inner, limit, where, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer)[: max(0, min(len(buffer), self.limit - self.count + 1))]
        size = self.inner.readinto(view)
        self.count += size
        if self.count > self.limit:
            raise PackageRefused(f"{self.where}: the package expands to more than {self.limit // 2**20} MiB "
                                 "(Helm's limit for a chart archive); not reading it: remove or replace it")
        return size


def tree_of_package(path: Path, where: str | None = None) -> Tree:
    """The chart files of a Helm package ({path inside the chart folder: text}), read within Helm's limits."""
    where = where or str(path)
    out: Tree = {}
    try:
        with path.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            budget = io.BufferedReader(_Budget(unzipped, MAX_TOTAL, where))
            with tarfile.open(fileobj=budget, mode="r|") as tar:
                for count, member in enumerate(tar, 1):
                    _admit(member, count, where)
                    if member.isfile() and "/" in member.name:
                        handle = tar.extractfile(member)
                        if handle is not None:
                            out[member.name.split("/", 1)[1]] = handle.read().decode("utf-8", "replace")
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise PackageRefused(f"{where}: not a Helm package (.tgz): {exc}; remove or replace it") from None
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from None
    return out


def _admit(member: tarfile.TarInfo, count: int, where: str) -> None:
    if count > MAX_MEMBERS:
        raise PackageRefused(f"{where}: the package has more than {MAX_MEMBERS} entries; not reading it: "
                             "remove or replace it")
    if member.size > MAX_FILE:
        raise PackageRefused(f"{where}: {member.name} is {member.size} bytes, above Helm's {MAX_FILE // 2**20} MiB "
                             "limit for one chart file; not reading it: remove or replace it")
