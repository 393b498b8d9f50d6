"""A cache of validated flag tables on disk, keyed by the table file's content.

A flag table is hundreds of flags of YAML (catalog/flags/*.yaml, 25-65 KB each); parsing the YAML is most of what
`catalog check` spends on a store (about 30 ms a table on the team's 2-core machine, ~0.6 s for the embedded
catalog's 22 tables), while pydantic reads the same table back from its own JSON in about 1.5 ms. So a table that
was read and validated once is kept as that JSON, named by the sha256 of the YAML file's bytes and of the table
model's JSON schema: an edited table, or a tool whose table model changed, never meets an old entry.

Where: `$CATALOG_CACHE_DIR`, else `$XDG_CACHE_HOME/catalog`, else `~/.cache/catalog`, in a `flag-tables/` folder
(the folder's mode 0700). `CATALOG_CACHE_DIR=` (empty) turns the cache off. The cache is best effort and never
trusted: an entry's first line names the table file's sha256 (the hash in its name) and the sha256 of the JSON that
follows, both checked, and the JSON is re-validated by the strict model on every read (a damaged, edited, foreign or
oversized entry is ignored and the YAML is parsed as if there were no cache); no symbolic link is followed at any
component of the folder's path; the folder must be this user's and writable by no one else, and every folder above
it owned by root or this user and safe from others' renames (else the cache is not used); and a write that
fails (read-only home, full disk) is skipped without a word — an entry is written to a fresh temporary name and
renamed into place, so a reader sees a whole entry or none (docs/security.md "What it writes").
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import contextlib
from functools import cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

ENV = "CATALOG_CACHE_DIR"
MAX_ENTRY_BYTES = 16 * 2**20  # the largest table today is ~0.2 MB of JSON


def folder() -> Path | None:
    """The cache folder, or None when the cache is off (`CATALOG_CACHE_DIR=`)."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return Path(chosen) / "flag-tables" if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "catalog" / "flag-tables"


@cache
def _schema_key(model: type[BaseModel]) -> str:
    schema = json.dumps(model.model_json_schema(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(schema.encode("utf-8")).hexdigest()[:16]


def _entry(content_key: str, model: type[BaseModel]) -> Path | None:
    where = folder()
    return None if where is None else where / f"{content_key}-{_schema_key(model)}.json"


_MAGIC = b"catalog-flag-table"
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _trusted(info: os.stat_result, *, own: bool) -> bool:
    """A folder on the way to the cache: owned by root or this user (`own`: by this user), and no one else may
    rename or replace what it holds (not writable by group or others, unless sticky like /tmp)."""
    uid = os.geteuid()
    if info.st_uid != uid and (own or info.st_uid != 0):
        return False
    return not info.st_mode & 0o022 or (not own and bool(info.st_mode & stat.S_ISVTX))


def _open_folder(where: Path, *, create: bool) -> int | None:
    """A descriptor of the cache folder, reached component by component from `/` without following a link at any
    of them (O_NOFOLLOW on each, not only the last); every component owned by root or this user and safe from
    others' renames, the folder itself this user's and not writable by anyone else. None otherwise (the cache is
    then not used: the YAML is read)."""
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


def _sealed(content_key: str, body: bytes) -> bytes:
    """An entry: a first line naming the table file's sha256 (the hash in the entry's name) and the sha256 of the
    table's JSON that follows it."""
    return b"%s %s %s\n" % (_MAGIC, content_key.encode("ascii"), hashlib.sha256(body).hexdigest().encode()) + body


def _opened(data: bytes, content_key: str) -> bytes | None:
    """The table's JSON of an entry whose first line names `content_key` and the JSON's own sha256; else None."""
    head, _, body = data.partition(b"\n")
    fields = head.split(b" ")
    if len(fields) != 3 or fields[0] != _MAGIC or fields[1] != content_key.encode("ascii"):
        return None
    return body if hashlib.sha256(body).hexdigest().encode() == fields[2] else None


def get(content_key: str, model: type[M]) -> M | None:
    """The `model` (the flag-table model) cached for a file whose bytes hash to `content_key`, or None (absent,
    off, not valid, or anything about the folder or the entry not trusted)."""
    path = _entry(content_key, model)
    if path is None:
        return None
    dir_fd = _open_folder(path.parent, create=False)
    if dir_fd is None:
        return None
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return None
            data = fh.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    body = _opened(data, content_key) if len(data) <= MAX_ENTRY_BYTES else None
    if body is None:
        return None
    try:
        return model.model_validate_json(body)
    except (ValidationError, ValueError):
        return None


def put(content_key: str, table: BaseModel) -> None:
    """Keep `table` for the file whose bytes hash to `content_key`; any failure is skipped (best effort). Written
    through the folder's descriptor (no link followed on the way) to a fresh name, then renamed into place."""
    path = _entry(content_key, type(table))
    if path is None:
        return
    dir_fd = _open_folder(path.parent, create=True)
    if dir_fd is None:
        return
    tmp = None
    try:
        tmp = f".entry-{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_sealed(content_key, table.model_dump_json().encode("utf-8")))
        os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        tmp = None
    except OSError:
        return
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
        os.close(dir_fd)
