"""A cache of validated flag tables on disk, keyed by the table file's content.

A flag table is hundreds of flags of YAML (catalog/flags/*.yaml, 25-65 KB each); parsing the YAML is most of what
`catalog check` spends on a store (about 30 ms a table on the team's 2-core machine, ~0.6 s for the embedded
catalog's 22 tables), while pydantic reads the same table back from its own JSON in about 1.5 ms. So a table that
was read and validated once is kept as that JSON, named by the sha256 of the YAML file's bytes and of the table
model's JSON schema: an edited table, or a tool whose table model changed, never meets an old entry.

Where: the user's cache folder of the tool (generator/core/diskcache.py: `$CATALOG_CACHE_DIR`, else
`$XDG_CACHE_HOME/catalog`, else `~/.cache/catalog`), in a `flag-tables/` folder (mode 0700). `CATALOG_CACHE_DIR=`
(empty) turns the cache off. The cache is best effort and never
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
from functools import cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from generator.core import diskcache

M = TypeVar("M", bound=BaseModel)

ENV = diskcache.ENV
MAX_ENTRY_BYTES = 16 * 2**20  # the largest table today is ~0.2 MB of JSON
_MAGIC = b"catalog-flag-table"


def folder() -> Path | None:
    """The cache folder, or None when the cache is off (`CATALOG_CACHE_DIR=`)."""
    return diskcache.folder("flag-tables")


@cache
def _schema_key(model: type[BaseModel]) -> str:
    schema = json.dumps(model.model_json_schema(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(schema.encode("utf-8")).hexdigest()[:16]


def _entry(content_key: str, model: type[BaseModel]) -> Path | None:
    where = folder()
    return None if where is None else where / f"{content_key}-{_schema_key(model)}.json"


def _sealed(content_key: str, body: bytes) -> bytes:
    """An entry: a first line naming the table file's sha256 (the hash in the entry's name) and the sha256 of the
    table's JSON that follows it."""
    return diskcache.sealed(_MAGIC, content_key, body)


def get(content_key: str, model: type[M]) -> M | None:
    """The `model` (the flag-table model) cached for a file whose bytes hash to `content_key`, or None (absent,
    off, not valid, or anything about the folder or the entry not trusted)."""
    path = _entry(content_key, model)
    if path is None:
        return None
    dir_fd = diskcache.open_folder(path.parent, create=False)
    if dir_fd is None:
        return None
    try:
        body = diskcache.read_entry(dir_fd, path.name, _MAGIC, content_key, MAX_ENTRY_BYTES)
    finally:
        os.close(dir_fd)
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
    dir_fd = diskcache.open_folder(path.parent, create=True)
    if dir_fd is None:
        return
    try:
        diskcache.write_entry(dir_fd, path.name, _MAGIC, content_key, table.model_dump_json().encode("utf-8"))
    finally:
        os.close(dir_fd)
