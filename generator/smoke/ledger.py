"""The smoke ledger: every `catalog smoke` result, appended to `catalog/ledger/<app>.yaml`.

One YAML list per app, oldest first, so a new smoke is a few appended lines in a git diff. Appends
hold an exclusive lock on the ledger folder and replace the file atomically (temp file + rename),
after checking that the new text parses back. Endpoints are stored without credentials, query or
fragment. The ledger is data the tool reads back: its rows accepted with `--accept-baseline` are the
baseline of the next smoke (same stack image), and its passes are the gate of `catalog prune --deprecated`.
A row records what was observed (the served identity), not what the catalog says; rows written before
those fields existed still load (every newer field is optional).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, StringConstraints

from generator.catalog import display_path
from generator.core import CatalogError, InputError, Problem
from generator.core.redact import redact as redact_text
from generator.core import split_userinfo
from generator.core import read_regular_file
from generator.core import atomic_write_text, writable
from generator.yamlio import MAX_FILE_BYTES, Document, read_document, validation_problems
from generator.schema import AppName, SemVer, Strict
from generator.smoke.identity import ServedIdentity
from generator.yamlio import dump, load

Verdict = Literal["pass", "regression", "fail", "suspect", "error"]
Rate = Annotated[float, Field(ge=0)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
Stamp = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]
FOLDER = "ledger"
HEADER = ("# Smoke history of {app}: appended by `catalog smoke`, oldest first. Reviewed in git;\n"
          "# read back as the baseline of the next smoke and as the gate of `catalog prune --deprecated`.\n")


class RunRecord(Strict):
    cold: bool
    ttft_s: Rate | None
    completion_tokens: Annotated[int, Field(ge=0)]
    tokens_per_s: Rate | None
    e2e_tokens_per_s: Rate | None
    acceptance: Annotated[float, Field(ge=0, le=1)] | None


class SmokeRecord(Strict):
    """One smoke result; also the exact object `catalog smoke --json` prints."""

    app: AppName
    endpoint: str
    chart_version: SemVer
    image: str
    date: Stamp
    runs: tuple[RunRecord, ...]
    tokens_per_s: Rate | None
    acceptance: Annotated[float, Field(ge=0, le=1)] | None
    baseline_tokens_per_s: Rate | None
    verdict: Verdict
    reasons: tuple[str, ...]
    decode_tokens_per_s: Rate | None = None
    ttft_s: Rate | None = None
    baseline: str | None = None  # where the baseline comes from
    max_tokens: Annotated[int, Field(gt=0)] | None = None
    notes: tuple[str, ...] = ()
    # Since the honest ledger (docs/smoke.md#the-ledger); rows written before have none of these.
    identity: ServedIdentity | None = None  # what the server said it is (observed, not copied from the catalog)
    identity_matched: tuple[str, ...] = ()  # fields equal to the chart's: engine, engine_version, model, context
    image_source: Literal["observed", "catalog"] | None = None  # where `image` comes from
    chart_content: Sha256 | None = None  # content hash of the chart the catalog rendered at the smoke
    tolerance: Annotated[float, Field(ge=0, lt=1)] | None = None
    runs_requested: Annotated[int, Field(gt=0)] | None = None
    prompt_sha256: Sha256 | None = None  # the prompt set (prompts and max_tokens)
    bound_tokens_per_s: Rate | None = None  # the ceiling above which a figure is `suspect` (roofline)
    acceptance_floor: Annotated[float, Field(ge=0, le=1)] | None = None
    accepted_baseline: bool = False  # `catalog smoke --accept-baseline` on a pass: the next smokes' baseline

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.strptime(self.date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)


def now_stamp(now: dt.datetime | None = None) -> str:
    return (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def redact(endpoint: str) -> str:
    """scheme://host[:port][/path] — never user:password@ (whatever the password holds), ?query or #fragment."""
    bare = split_userinfo(endpoint)[0].split("#")[0].split("?")[0]
    try:
        parts = urlsplit(bare)
        port = parts.port
    except ValueError:  # not a URL a parser accepts (a bad port, a broken IPv6 bracket): shown as given, masked
        return redact_text(bare)
    if not parts.scheme or not parts.hostname:
        return redact_text(bare)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = f"{host}:{port}" if port else host
    return redact_text(urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")))


def path_of(catalog_root: Path, app: str) -> Path:
    return catalog_root / FOLDER / f"{app}.yaml"


def history(catalog_root: Path, app: str) -> list[SmokeRecord]:
    """Every recorded smoke of `app`, oldest first; [] when it has none. Bad rows raise CatalogError."""
    path = path_of(catalog_root, app)
    if path.is_symlink():
        raise InputError([Problem(display_path(path), None, None, "a symbolic link; a ledger is a regular file of "
                                  "the catalog, never read or written through a link (put the file in its place)")])
    if not path.is_file():
        return []
    name = display_path(path)
    doc = read_document(path, name)
    if doc.data is None:
        return []
    if not isinstance(doc.data, tuple):
        raise InputError([Problem(name, 1, None, "a ledger is a YAML list of smoke results")])
    records, problems = [], []
    for index, row in enumerate(doc.data):
        try:
            records.append(_row(doc, index, row, name, app))
        except CatalogError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems)
    return records


def _row(doc: Document, index: int, row: object, name: str, app: str) -> SmokeRecord:
    from pydantic import ValidationError

    line = doc.line_of((index,))
    if not isinstance(row, dict):
        raise InputError([Problem(name, line, str(index), "a ledger row is a mapping of smoke fields")])
    try:
        record = SmokeRecord.model_validate(row)
    except ValidationError as exc:
        prefixed = [Problem(p.file, p.line, f"{index}.{p.field}", p.message)
                    for p in validation_problems(_Shifted(doc, index), exc, name)]
        raise InputError(prefixed) from None
    if record.app != app:
        raise InputError([Problem(name, line, f"{index}.app", f"row of app {record.app!r} in the ledger of {app!r}")])
    return record


class _Shifted:
    """A view of one ledger row as its own document, for line numbers of its fields."""

    def __init__(self, doc: Document, index: int) -> None:
        self.data, self._doc, self._index = doc.data[index], doc, index

    def line_of(self, loc: tuple[str | int, ...]) -> int:
        return self._doc.line_of((self._index, *loc))


def last(catalog_root: Path, app: str) -> SmokeRecord | None:
    rows = history(catalog_root, app)
    return rows[-1] if rows else None


def append(catalog_root: Path, record: SmokeRecord) -> Path:
    """Append one result to the app's ledger, atomically and under a lock; returns the file."""
    folder = catalog_root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = path_of(catalog_root, record.app)
    with _locked(folder):
        # never through a link, never replacing one (docs/security.md): a symlinked ledger is refused, unread
        before = (read_regular_file(path, MAX_FILE_BYTES, "the ledger").decode("utf-8", "replace")
                  if writable(path) is not None else HEADER.format(app=record.app))
        if before and not before.endswith("\n"):
            before += "\n"
        text = before + dump([record.model_dump(mode="json")])
        if len(load(text) or []) != len(load(before) or []) + 1:
            raise InputError(f"{display_path(path)}: not a YAML list; fix or move the file, then smoke again")
        write_atomic(path, text)
    return path


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a synced temp file and a rename (core/fileio.py): readers see old or new, never
    half; a target that is a symbolic link is refused, not replaced."""
    atomic_write_text(path, text)
