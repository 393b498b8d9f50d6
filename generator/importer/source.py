"""Read one Olares application chart, a folder or a Helm package (`.tgz`), into memory, safely.

Nothing from the input is written anywhere or followed: no symlink, no hard link, no device, no member
outside the chart (`../`, an absolute path), and caps on the file count, each file and the whole chart, so
a hostile archive (a gzip bomb, a million members) fails with a message instead of filling the disk.
"""

from __future__ import annotations

import gzip
import io
import os
import posixpath
import re
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from generator.core import InputError, Problem, translate_os_error
from generator.core import safe_line

MAX_FILES = 2000
MAX_FILE_BYTES = 4 * 2**20  # a chart's largest text file is tens of KiB; a subchart package a few hundred
MAX_TOTAL_BYTES = 32 * 2**20
# Every member counts, folders too: a chart has a few dozen entries, and 2,000,000 empty folders took 119 s.
MAX_MEMBERS = 4000
# The whole uncompressed tar stream: the files' bytes plus headers and padding (512 bytes a member at most, and
# the extended headers below), so a gzip bomb of padding or skipped data stops here.
MAX_STREAM_BYTES = MAX_TOTAL_BYTES + MAX_MEMBERS * 2 * 512 + 8 * 2**20
# One GNU long name / long link or PAX extended header: a path is at most PATH_MAX (4096) bytes on Linux, and a PAX
# header holds a few records (path, linkpath, mtime, uid ...). Python's tarfile reads the whole header into memory
# before it looks at it (CPython Lib/tarfile.py `TarInfo._proc_gnulong`, `_proc_pax`): a 512 MB long name in a
# 509 KiB package took 1.1-1.6 GB. Refused above this, before it is read.
MAX_EXTENDED_HEADER_BYTES = 64 * 2**10
MAX_EXTENDED_HEADERS = 2 * MAX_MEMBERS
# Each extended header reads the header it extends recursively: a chain of 20,000 long names is a RecursionError.
# A member has at most a long name, a long link and a PAX header (plus a global PAX header before it).
MAX_HEADER_CHAIN = 8
SKIPPED_DIRS = (".git", "__pycache__")
ROOT_TEXT = ("Chart.yaml", "values.yaml", "OlaresManifest.yaml", "owners")


@dataclass(frozen=True)
class ChartFiles:
    """A chart in memory: `files` maps chart-relative POSIX paths to their bytes."""

    label: str  # the path as the user gave it, for messages
    name: str  # the chart folder's name (the package's top folder)
    files: dict[str, bytes]

    def text(self, rel: str) -> str | None:
        raw = self.files.get(rel)
        if raw is None:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _bad(self.where(rel), f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc

    def where(self, rel: str) -> str:
        """How a chart file is named in messages: `<label>/<rel>` (inside a package: `<label>:<rel>`)."""
        return f"{self.label}:{rel}" if self.label.endswith((".tgz", ".tar.gz")) else f"{self.label.rstrip('/')}/{rel}"


def _bad(where: str, message: str, line: int | None = None) -> InputError:
    return InputError([Problem(where, line, None, message)])


def _safe_rel(name: str, where: str) -> str:
    """A member name as a chart-relative path; refuses absolute paths, `..` components, and control or bidi
    characters (an ESC sequence or a newline in a name would reach the terminal and the CI log, where
    `::error` starts a workflow command). Names are shown escaped (core/text.py `safe_line`)."""
    shown = safe_line(repr(name), 200)
    if "\\" in name or "\x00" in name:
        raise _bad(where, f"member {shown}: a path with a backslash or NUL is refused")
    if safe_line(name) != name:
        raise _bad(where, f"member {shown}: a name with a control character is refused")
    if name.startswith("/"):
        raise _bad(where, f"member {shown}: an absolute path is refused (no member may leave the chart)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise _bad(where, f"member {shown}: a `..` path is refused (no member may leave the chart)")
    return "/".join(parts)


class _Budget:
    def __init__(self, where: str):
        self.where = where
        self.count = 0
        self.total = 0
        self.members = 0

    def member(self) -> None:
        """One entry of any kind (a folder too)."""
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise _bad(self.where, f"more than {MAX_MEMBERS} entries (files and folders); a chart holds a few dozen")

    def take(self, rel: str, size: int) -> None:
        self.count += 1
        self.total += size
        if self.count > MAX_FILES:
            raise _bad(self.where, f"more than {MAX_FILES} files; a chart holds a few dozen")
        if size > MAX_FILE_BYTES:
            raise _bad(self.where, f"{rel}: {size} bytes, over the {MAX_FILE_BYTES}-byte cap per file")
        if self.total > MAX_TOTAL_BYTES:
            raise _bad(self.where, f"more than {MAX_TOTAL_BYTES} bytes in all, over the cap for one chart")


class _Capped(tarfile.TarInfo):
    """A tar header that refuses an oversized or endless extended header before tarfile reads it.

    tarfile builds each member through `TarInfo._proc_member` (CPython Lib/tarfile.py, 3.8-3.13): GNU long
    names/links and PAX headers are read whole, then the header they extend is read recursively; GNU sparse
    members read further headers in a loop. Their size is checked here first; sparse members are refused (a chart
    holds none). `label` names the package in messages (set on a subclass per package)."""

    label = ""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                         tarfile.SOLARIS_XHDTYPE):
            seen = getattr(tarfile_, "catalog_extended", 0) + 1
            chain = getattr(tarfile_, "catalog_chain", 0) + 1
            tarfile_.catalog_extended, tarfile_.catalog_chain = seen, chain  # type: ignore[attr-defined]
            if chain > MAX_HEADER_CHAIN:
                raise _bad(self.label, f"a member with more than {MAX_HEADER_CHAIN} extended tar headers; a damaged "
                                       "or hostile package")
            if self.size > MAX_EXTENDED_HEADER_BYTES:
                raise _bad(self.label,
                           f"an extended tar header (a long name or PAX header) of {self.size:,} bytes, over the "
                           f"cap of {MAX_EXTENDED_HEADER_BYTES:,}; a damaged or hostile package")
            if seen > MAX_EXTENDED_HEADERS:
                raise _bad(self.label,
                           f"more than {MAX_EXTENDED_HEADERS:,} extended tar headers; a damaged or hostile package")
        else:
            tarfile_.catalog_chain = 0  # type: ignore[attr-defined]
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise _bad(self.label,
                       f"member {safe_line(self.name, 200)!r} is a GNU sparse file; refused in a chart package")
        return super()._proc_member(tarfile_)  # type: ignore[misc,no-any-return]


class _CappedStream(io.RawIOBase):
    """The uncompressed bytes of a `.tgz`, read forward only, at most MAX_STREAM_BYTES in all."""

    def __init__(self, gz: gzip.GzipFile, label: str):
        self.gz, self.label, self.count = gz, label, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        want = MAX_STREAM_BYTES + 1 - self.count if size is None or size < 0 else min(size, MAX_STREAM_BYTES + 1)
        data = self.gz.read(want)
        self.count += len(data)
        if self.count > MAX_STREAM_BYTES:
            raise _bad(self.label, f"more than {MAX_STREAM_BYTES:,} bytes uncompressed, over the cap for one chart "
                                   "package")
        return data


def _read_package(path: Path, label: str) -> ChartFiles:
    budget = _Budget(label)
    members: dict[str, bytes] = {}
    try:
        # `r|`: one forward pass over the capped stream; the gzip layer is ours, so every byte counts
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz, \
                tarfile.open(fileobj=_CappedStream(gz, label), mode="r|",
                             tarinfo=type("_CappedHeader", (_Capped,), {"label": label})) as archive:
            for member in archive:  # streamed: a bomb stops at the first cap it crosses
                budget.member()
                rel = _safe_rel(member.name, label)
                if member.isdir():
                    continue
                if member.issym() or member.islnk():
                    raise _bad(label, f"member {member.name!r} is a link; links are refused in a chart package")
                if not member.isfile():
                    raise _bad(label, f"member {member.name!r} is not a regular file; refused")
                budget.take(rel, member.size)
                handle = archive.extractfile(member)
                data = handle.read(MAX_FILE_BYTES + 1) if handle else b""
                if len(data) != member.size:
                    raise _bad(label, f"member {member.name!r}: its size does not match its header; a damaged package")
                if rel in members:
                    raise _bad(label, f"member {member.name!r} appears twice")
                members[rel] = data
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise _bad(label, f"not a readable .tgz chart package ({exc}); "
                          "pass a chart folder or `helm package` output") from exc
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from exc
    tops = {rel.split("/", 1)[0] for rel in members}
    if len(tops) == 1 and all("/" in rel for rel in members):
        top = tops.pop()
        return ChartFiles(label, top, {rel.split("/", 1)[1]: data for rel, data in members.items()})
    stem = re.sub(r"(\.tar\.gz|\.tgz)$", "", path.name)
    return ChartFiles(label, re.sub(r"-[0-9]+\.[0-9]+\.[0-9]+.*$", "", stem), members)


def _walk(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)` top-down without recursion (Python 3.11's os.walk recurses: 1,100 nested folders were a
    RecursionError); the caller may prune `dirs` in place, as with os.walk. Links are listed, never followed."""
    stack = [str(top)]
    while stack:
        folder = stack.pop()
        dirs: list[str] = []
        names: list[str] = []
        try:
            with os.scandir(folder) as items:
                for item in items:
                    (dirs if item.is_dir(follow_symlinks=False) or (item.is_symlink() and os.path.isdir(item.path))
                     else names).append(item.name)
        except OSError as exc:
            raise translate_os_error(exc, folder, "read") from exc
        yield folder, dirs, names
        stack.extend(os.path.join(folder, d) for d in reversed(dirs)
                     if not os.path.islink(os.path.join(folder, d)))


def _read_folder(path: Path, label: str) -> ChartFiles:
    budget = _Budget(label)
    files: dict[str, bytes] = {}
    for folder, dirs, names in _walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for d in dirs:
            budget.member()
            if os.path.islink(os.path.join(folder, d)):
                rel = posixpath.normpath(os.path.relpath(os.path.join(folder, d), path).replace(os.sep, "/"))
                raise _bad(label, f"{rel} is a symbolic link; links are not followed in a chart folder")
        for name in sorted(names):
            budget.member()
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, path).replace(os.sep, "/")
            if os.path.islink(full):
                raise _bad(label, f"{rel} is a symbolic link; links are not followed in a chart folder")
            if not os.path.isfile(full):
                raise _bad(label, f"{rel} is not a regular file; refused")
            try:
                size = os.path.getsize(full)
                budget.take(rel, size)
                with open(full, "rb") as fh:
                    files[rel] = fh.read(MAX_FILE_BYTES + 1)
            except OSError as exc:
                raise translate_os_error(exc, full, "read") from exc
    return ChartFiles(label, path.resolve().name, files)


def read_chart(path: Path, label: str | None = None) -> ChartFiles:
    """The chart at `path` (a folder or a `.tgz`); InputError when it is not a readable Olares chart."""
    label = label or str(path)
    if path.is_dir():
        chart = _read_folder(path, label)
    elif path.is_file():
        chart = _read_package(path, label)
    elif path.exists():
        raise _bad(label, "neither a folder nor a .tgz file")
    else:
        raise _bad(label, "no such file or folder")
    missing = [rel for rel in ("Chart.yaml", "OlaresManifest.yaml") if rel not in chart.files]
    if missing:
        raise _bad(label, "not an Olares application chart (no " + " and no ".join(missing)
                   + "); pass a folder or .tgz holding Chart.yaml, OlaresManifest.yaml and templates/")
    return chart


__all__ = ["MAX_EXTENDED_HEADER_BYTES", "MAX_FILES", "MAX_FILE_BYTES", "MAX_MEMBERS", "MAX_STREAM_BYTES",
           "MAX_TOTAL_BYTES", "ChartFiles", "read_chart"]
