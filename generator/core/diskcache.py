"""The user's cache folder of the tool: entries named by the content they were made from, trusted only when nothing but
this user could have written them.

Where: `$CATALOG_CACHE_DIR`, else `$XDG_CACHE_HOME/catalog`, else `~/.cache/catalog`, one sub-folder per kind of
entry (`flag-tables/`: generator/flags/cache.py; `chart-data/`: generator/yamlio/chartdata.py), each of mode 0700.
`CATALOG_CACHE_DIR=` (empty) turns every cache off. A cache is best effort and never trusted: an entry's first line
names its kind, the content key it was made for and the sha256 of the body that follows, all checked (a damaged,
foreign or oversized entry is ignored, and rewritten by the next write); no symbolic link is followed at any
component of the folder's path; the folder must be this user's and writable by no one else, and every folder above
it owned by root or this user and safe from others' renames (else the cache is not used); and a write that fails
(read-only home, full disk) is skipped without a word: an entry is written to a fresh temporary name and renamed into
place, so a reader sees a whole entry or none (docs/security.md "What it writes"). The values are plain data (JSON),
never code.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from pathlib import Path

from generator.core.bounded import read_sized

ENV = "CATALOG_CACHE_DIR"
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def folder(kind: str) -> Path | None:
    """The cache folder of `kind`, or None when caches are off (`CATALOG_CACHE_DIR=`)."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return Path(chosen) / kind if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "catalog" / kind


def _trusted(info: os.stat_result, *, own: bool) -> bool:
    """A folder on the way to the cache: owned by root or this user (`own`: by this user), and no one else may
    rename or replace what it holds (not writable by group or others, unless sticky like /tmp)."""
    uid = os.geteuid()
    if info.st_uid != uid and (own or info.st_uid != 0):
        return False
    return not info.st_mode & 0o022 or (not own and bool(info.st_mode & stat.S_ISVTX))


def open_folder(where: Path, *, create: bool) -> int | None:
    """A descriptor of the cache folder, reached component by component from `/` without following a link at any
    of them (O_NOFOLLOW on each, not only the last); every component owned by root or this user and safe from
    others' renames, the folder itself this user's and not writable by anyone else. None otherwise (the cache is
    then not used)."""
    parts = where.absolute().parts
    fd = os.open(parts[0], _DIR_FLAGS)
    try:
        for index, name in enumerate(parts[1:], start=1):
            last = index == len(parts) - 1
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=fd)
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            info = os.fstat(fd)
            if not stat.S_ISDIR(info.st_mode) or not _trusted(info, own=last) or (last and info.st_mode & 0o077):
                return None
        kept, fd = fd, -1
        return kept
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def sealed(magic: bytes, content_key: str, body: bytes) -> bytes:
    """An entry: a first line naming its kind (`magic`), the content key it was made for and the sha256 of the body
    that follows it."""
    return b"%s %s %s\n" % (magic, content_key.encode("ascii"), hashlib.sha256(body).hexdigest().encode()) + body


def opened(magic: bytes, data: bytes, content_key: str) -> bytes | None:
    """The body of an entry whose first line names `magic`, `content_key` and the body's own sha256; else None."""
    head, _, body = data.partition(b"\n")
    fields = head.split(b" ")
    if len(fields) != 3 or fields[0] != magic or fields[1] != content_key.encode("ascii"):
        return None
    return body if hashlib.sha256(body).hexdigest().encode() == fields[2] else None


def read_entry(dir_fd: int, name: str, magic: bytes, content_key: str, max_bytes: int) -> bytes | None:
    """The checked body of entry `name` in the folder `dir_fd` (None: absent, a link, not this user's, writable by
    others, larger than `max_bytes`, or not sealed for `content_key`)."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return None
            if info.st_size > max_bytes:
                return None
            data = read_sized(fh, info.st_size, max_bytes)
    except OSError:
        return None
    return opened(magic, data, content_key) if len(data) <= max_bytes else None


def write_entry(dir_fd: int, name: str, magic: bytes, content_key: str, body: bytes) -> bool:
    """Write entry `name` through the folder's descriptor: a fresh temporary name, then renamed into place (a reader
    sees a whole entry or none). False when it could not be written (skipped: the cache is best effort)."""
    tmp = None
    try:
        tmp = f".entry-{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as fh:
            fh.write(sealed(magic, content_key, body))
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)


def prune(dir_fd: int, keep: set[str], limit: int) -> int:
    """Remove entries of the folder until at most `limit` are left, those in `keep` last and the oldest first (by
    modification time); returns how many were removed. Bounds the folder's size whatever the stores it saw."""
    try:
        names = [n for n in os.listdir(dir_fd) if n.endswith(".json")]
    except OSError:
        return 0
    if len(names) <= limit:
        return 0

    def age(name: str) -> tuple[bool, int]:
        try:
            return name in keep, os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mtime_ns
        except OSError:
            return False, 0

    removed = 0
    for name in sorted(names, key=age)[:len(names) - limit]:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
            removed += 1
    return removed


__all__ = ["ENV", "folder", "open_folder", "opened", "prune", "read_entry", "sealed", "write_entry"]
