"""Writing a sync: the merged app files, the new apps and their drafts, the removed marks, catalog/sync.yaml.

Every text is computed (and each edited app file read back and compared) before the first write; then each
file is written atomically (generator/core/fileio.py). An app file is edited in place, only its changed
fields (generator/importer/appyaml.py `update_text`: comments and order kept).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from generator.catalog import Catalog, display_path, load_catalog
from generator.core import InputError, Problem
from generator.core import atomic_write_text, writable
from generator.importer import read_back, update_text
from generator.importer import APP_KEYS
from generator.importer import FileWrite
from generator.rules import SYNC_FILE
from generator.schema import App
from generator.schema import Benchmark
from generator.schema import SyncFile, SyncRecord
from generator.sync.plan import TOUCHED, AppPlan, SyncPlan, _defaults, plain
from generator.sync.source import where, without_credentials
from generator.yamlio import yamlout

HEADER = ("# Written by `catalog sync` (docs/sync.md): what the last sync saw of each upstream app. Review it like\n"
          "# code; MKT002 and MKT003 read it (one content per version, apps upstream removed stay removed).\n")


@dataclass(frozen=True)
class Write:
    path: Path
    text: str
    what: str


REMOVAL_KEYS = ("status", "removed_on", "reason", "replaced_by")


def _edit(path: Path, target: dict[str, object], touched: tuple[str, ...]) -> str:
    """The app file with only the `touched` fields of `target` edited. Every other field stays as the file has
    it (typed: a date stays a date, a benchmark is not re-emitted with its defaults)."""
    return edit_text(path, path.read_text(encoding="utf-8"), target, touched)


def edit_text(path: Path, text: str, target: dict[str, object], touched: tuple[str, ...]) -> str:
    """`_edit` of an app file's `text` (a planned write's, before it is written)."""
    current = read_back(path, text)
    if not isinstance(current, dict):
        raise InputError([Problem(display_path(path), 1, None, "not a YAML mapping; edit it by hand")])
    defaults = _defaults()
    changes = {k: v for k, v in target.items() if k in touched
               and plain(current.get(k, defaults.get(k))) != plain(v)
               and not (k not in current and plain(v) == defaults.get(k))}
    removals = [k for k in changes if k in current and k in defaults and plain(changes[k]) == defaults[k]]
    for key in removals:
        changes.pop(key)
    expected = {**current, **changes}
    for key in removals:
        expected.pop(key, None)
    ordered = {k: expected[k] for k in list(current) + [k for k in APP_KEYS if k not in current] if k in expected}
    return update_text(Path(display_path(path)), text, changes, removals, APP_KEYS, ordered)


def _typed_benchmarks(current: App, new: list[dict[str, object]]) -> list[object]:
    """The app's benchmarks as its file writes them (typed: dates stay dates, defaults left out) plus the new."""
    out: list[object] = [b.model_dump(mode="python", exclude_defaults=True) for b in current.benchmarks]
    for bench in new:
        out.append(Benchmark.model_validate({**bench, "date": dt.date.fromisoformat(str(bench["date"]))}, strict=False)
                   .model_dump(mode="python", exclude_defaults=True))
    return out


def _merged_target(app: AppPlan, current: App) -> dict[str, object]:
    assert app.merged is not None
    target = dict(app.merged)
    if app.benchmarks:
        target["benchmarks"] = _typed_benchmarks(current, app.benchmarks)
    measured = list(target.get("measured") or [])
    for ground in app.measured:
        entry = {"field": ground.field, "value": ground.value, "note": ground.note, "source": ground.source}
        if entry not in measured:
            measured.append(entry)
    target["measured"] = measured
    return target


def _removed_target(data: dict[str, object], at: str, today: dt.date, gone: set[str]) -> dict[str, object]:
    """The removal mark, its reason a changelog line (`upstream removed it at <repo>@<commit>`); a `replaced_by`
    naming an app this sync also removes is dropped (it would name an app that is no longer listed: STA002) and
    said in the reason."""
    before = f"{data['reason']}; " if data.get("reason") else ""
    target = {**data, "status": "removed", "removed_on": today, "reason": f"{before}upstream removed it at {at}"}
    if data.get("replaced_by") in gone:
        target["replaced_by"] = None
        target["reason"] = f"{target['reason']}; its replacement {data['replaced_by']} was removed too"
    return target


def _merged(app: AppPlan) -> bool:
    return app.merged is not None and app.mergeable


def _record(plan: SyncPlan, previous: SyncFile | None, own: AbstractSet[str] = frozenset()) -> SyncFile:
    """What this sync saw of each upstream app; `own`: new apps whose draft is the store's own (not recorded)."""
    apps = dict(previous.apps) if previous else {}
    for app in plan.apps:
        old = apps.get(app.app)
        if app.app in own:
            continue
        if app.status == "removed":
            if old is not None:
                apps[app.app] = old.model_copy(update={"status": "removed"})
            elif app.catalog_version:
                apps[app.app] = SyncRecord(version=app.catalog_version, status="removed")
        elif app.status in ("error", "held") and app.catalog_version and app.upstream_version:
            # not merged (the import refused it): upstream's version is recorded, so the catalog's content is
            # published above it (MKT002), with no digest, so the next sync plans it again; the base stays
            apps[app.app] = SyncRecord(upstream_name=app.upstream_name, version=app.upstream_version,
                                       chart=None, commit=app.commit, fields=old.fields if old else None)
        elif app.status not in ("skipped", "error", "held", "local", "dropped") and app.upstream_version:
            # a chart merged only in part (it needs drafts) records no digest, so the next sync plans it again
            merged = app.imported is None or app.imported.status != "draft" or app.mergeable
            base = app.base if merged and app.base is not None else (old.fields if old else None)
            apps[app.app] = SyncRecord(upstream_name=app.upstream_name, version=app.upstream_version,
                                       chart=app.digest if merged else None, commit=app.commit,
                                       fields=base)
    return SyncFile(upstream=plan.upstream, commit=plan.commit, path=plan.subdir, apps=dict(sorted(apps.items())))


def planned_writes(plan: SyncPlan, cat: Catalog, previous: SyncFile | None,
                   today: dt.date | None = None) -> list[Write]:
    """Every file the sync writes, with its full new text (nothing written yet)."""
    today = today or dt.date.today()
    writes: list[Write] = []
    new = {a.app for a in plan.apps if a.status == "new"}
    gone = {a.app for a in plan.apps if a.status == "removed"}
    for app in plan.apps:
        path = cat.file_of(app.app)
        if app.status in ("bumped", "changed") and _merged(app):
            touched = (*TOUCHED, "benchmarks") if app.benchmarks else TOUCHED
            target = _merged_target(app, cat.apps[app.app].app)
            version = app.new_version or app.catalog_version
            writes.append(Write(path, _edit(path, target, touched), f"{app.status} {version}"))
        elif app.status == "unchanged" and app.benchmarks and app.app in cat.apps:
            # the same chart, a speed upstream measured that the app lacks: the benchmark lands (it is no chart
            # content, so no new version)
            target = {"benchmarks": _typed_benchmarks(cat.apps[app.app].app, app.benchmarks)}
            writes.append(Write(path, _edit(path, target, ("benchmarks",)), "benchmarks"))
        elif app.status == "held" and app.new_version and app.app in cat.apps:
            writes.append(Write(path, _edit(path, {"version": app.new_version}, ("version",)),
                                f"kept {app.new_version}"))
        elif app.status == "removed":
            data = plain(cat.apps[app.app].app)
            target = _removed_target(data, where(plan.upstream, plan.commit), today, gone)
            writes.append(Write(path, _edit(path, target, REMOVAL_KEYS), "removed"))
        elif app.status == "dropped" and cat.apps[app.app].app.replaced_by in gone:
            # deprecated, left to prune's gate; a replacement this sync removes would name an unlisted app (STA002)
            current = cat.apps[app.app].app
            target = {"replaced_by": None, "reason": f"{current.reason}; its replacement {current.replaced_by} "
                                                     f"was removed by upstream at {where(plan.upstream, plan.commit)}"}
            writes.append(Write(path, _edit(path, target, ("replaced_by", "reason")), "replacement dropped"))
    report_writes = list(plan.report.plan.writes) if plan.report else []
    kept = _kept_drafts(cat, report_writes, previous)
    for write in report_writes:
        rel = write.path.relative_to(cat.root) if write.path.is_relative_to(cat.root) else None
        if write.text is None or rel is None:
            continue
        if rel.parts[0] == "drafts" and _of_kept_draft(rel, write.path, kept):
            continue
        if rel.parts[0] == "drafts" or (rel.parts[0] == "apps" and rel.stem in new):
            # upstream's text whole: no URL in it keeps its credentials
            writes.append(Write(write.path, without_credentials(write.text), write.action))
    # a draft the store wrote itself stays its own: not recorded as upstream's, so the next sync keeps it too
    own = {name for name in kept[0] if previous is None or name not in previous.apps}
    plan.record = _record(plan, previous, own)
    writes.append(Write(cat.root / SYNC_FILE, HEADER + yamlout.dump(_record_data(plan.record)), "sync record"))
    return [w for w in writes if not _same_text(w)]


def _record_data(record: SyncFile) -> dict[str, object]:
    """sync.yaml's data: `path` and each app's `fields` only where set (a record written before them reads the
    same); the base's values as they are (a null there is upstream's)."""
    data: dict[str, object] = plain(record)
    if record.path is None:
        data.pop("path", None)
    for name, rec in record.apps.items():
        if rec.fields is None:
            data["apps"][name].pop("fields", None)  # type: ignore[index]
    return data


def _same_text(write: Write) -> bool:
    """The file already holds exactly this text (a write that would change nothing is not planned)."""
    try:
        return write.path.is_file() and not write.path.is_symlink() \
            and write.path.read_bytes() == write.text.encode("utf-8")
    except OSError:
        return False


def _draft_data(path: Path, text: str) -> dict[str, object]:
    try:
        data = read_back(path, text)
    except InputError:  # a draft that does not parse is rewritten, not kept
        return {}
    return data if isinstance(data, dict) else {}


def _kept_drafts(cat: Catalog, report_writes: list[FileWrite],
                 previous: SyncFile | None) -> tuple[set[str], set[Path]]:
    """Apps whose draft is already in the catalog from the same upstream version, or that no earlier sync recorded
    (a draft the store wrote itself, by hand or with `catalog new`), and the draft files they own (the app file, its
    draft model, stack and chat template): the sync keeps them as they are (what a person wrote or completed in them
    stays: drafts extend, never overwrite) and writes none of them again."""
    kept: set[str] = set()
    owned: set[Path] = set()
    drafts = cat.root / "drafts"
    for write in report_writes:
        rel = write.path.relative_to(cat.root) if write.path.is_relative_to(cat.root) else None
        if rel is None or write.text is None or rel.parts[:2] != ("drafts", "apps") or not write.path.is_file():
            continue
        old = _draft_data(write.path, write.path.read_text(encoding="utf-8"))
        version = old.get("version")
        ours = bool(old) and (previous is None or rel.stem not in previous.apps)  # no sync wrote it: the store's
        if not ours and (version is None or str(version) != str(_draft_data(write.path, write.text).get("version"))):
            continue
        kept.add(rel.stem)
        owned.add(write.path)
        for folder, key in (("models", "model"), ("stacks", "stack"), ("chat_templates", "chat_template")):
            if isinstance(old.get(key), str):
                owned.update({drafts / folder / f"{old[key]}.yaml", drafts / folder / f"{old[key]}.jinja"})
    return kept, owned


def _of_kept_draft(rel: Path, path: Path, kept: tuple[set[str], set[Path]]) -> bool:
    """A draft file of a kept draft: one it owns, or a chat template named after it (the import's `-imported` copy
    of the template it already has)."""
    apps, owned = kept
    if path in owned:
        return True
    return rel.parts[:2] == ("drafts", "chat_templates") and any(
        rel.name.startswith(f"{app}-chat-template") for app in apps)


@contextlib.contextmanager
def overlaid(cat: Catalog, writes: list[Write]) -> Iterator[Catalog]:
    """The catalog as it would be after `writes` (the texts laid over a temporary copy of it, nothing in the
    catalog touched), loaded, for the time of the block; InputError with `file:line` under the catalog's own paths
    when it would not load."""
    scratch = Path(tempfile.mkdtemp(prefix="catalog-sync-"))
    try:
        copy = scratch / "catalog"
        shutil.copytree(cat.root, copy, symlinks=True)
        for w in writes:
            rel = w.path.relative_to(cat.root)
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            (copy / rel).write_text(w.text, encoding="utf-8")
        try:
            after = load_catalog(copy)
        except InputError as exc:
            shown, real = display_path(copy), display_path(cat.root)
            raise InputError([Problem(p.file.replace(shown, real, 1) if p.file else p.file, p.line, p.field,
                                      f"{p.message} (after the sync; nothing was written)")
                              for p in exc.problems]) from exc
        yield after
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def validate(cat: Catalog, writes: list[Write]) -> None:
    """Load the catalog as it would be after `writes` (`overlaid`); InputError when it would not load."""
    with overlaid(cat, writes):
        pass


DEFERRED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGTERM, SIGINT and SIGHUP wait until the block ends (held by a handler of ours, then raised again under the
    handlers there were): an interrupted sync writes all of its files or, interrupted before, none; never half."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    kept = {sig: signal.signal(sig, lambda signum, _frame: held.append(signum)) for sig in DEFERRED}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)


def write_all(writes: list[Write]) -> None:
    for w in writes:  # refuse a link or a non-file target before anything is written
        writable(w.path)
    with _signals_deferred():
        for w in writes:
            atomic_write_text(w.path, w.text)
