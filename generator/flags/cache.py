"""A cache of validated flag tables on disk, keyed by the table file's content.

A flag table is hundreds of flags of YAML (catalog/flags/*.yaml, 25-65 KB each); parsing the YAML is most of what
`catalog check` spends on a store (about 30 ms a table on the team's 2-core machine, ~0.6 s for the embedded
catalog's 22 tables), while pydantic reads the same table back from its own JSON in about 1.5 ms. So a table that
was read and validated once is kept as that JSON, named by the sha256 of the YAML file's bytes and of the table
model's JSON schema: an edited table, or a tool whose table model changed, never meets an old entry.

Where: `$CATALOG_CACHE_DIR`, else `$XDG_CACHE_HOME/catalog`, else `~/.cache/catalog`, in a `flag-tables/` folder
(the folder's mode 0700). `CATALOG_CACHE_DIR=` (empty) turns the cache off. The cache is best effort and never
trusted: an entry is re-validated by the strict model on every read (a damaged, foreign or oversized entry is
ignored and the YAML is parsed as if there were no cache), a symbolic link is never followed, and a write that
fails (read-only home, full disk) is skipped without a word — an entry is written to a fresh temporary name and
renamed into place, so a reader sees a whole entry or none (docs/security.md "What it writes").
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
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


def get(content_key: str, model: type[M]) -> M | None:
    """The `model` (the flag-table model) cached for a file whose bytes hash to `content_key`, or None (absent,
    off, or not valid)."""
    path = _entry(content_key, model)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = fh.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_ENTRY_BYTES:
        return None
    try:
        return model.model_validate_json(data)
    except (ValidationError, ValueError):
        return None


def put(content_key: str, table: BaseModel) -> None:
    """Keep `table` for the file whose bytes hash to `content_key`; any failure is skipped (best effort)."""
    path = _entry(content_key, type(table))
    if path is None:
        return
    tmp = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.parent.is_symlink() or not path.parent.is_dir():
            return
        fd, tmp = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(table.model_dump_json().encode("utf-8"))
        os.replace(tmp, path)
        tmp = None
    except OSError:
        return
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
