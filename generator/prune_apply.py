"""Carry out a prune plan: market change, catalog file, chart folder — computed first, then written.

For each app the plan lets go:
1. with a market tree, the SUSPEND change (bumped version, empty `.suspend`) or, with `--remove`,
   the REMOVE change (only `.remove` left) — market_lifecycle.py;
2. its catalog file: `status: removed`, `removed_on: <date>`, `reason` kept and extended with the
   smoke that allowed it (and, after a SUSPEND, the bumped version, so catalog and market agree);
3. its rendered chart folder `charts/<app>` is deleted.
The catalog file is edited line by line at the positions ruamel's round-trip loader reports, and the
result is parsed back and compared with the expected data: comments, key order and the flow style
of every untouched line stay byte-identical (a full round-trip dump would re-wrap long flow lists).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ruamel.yaml import YAML

from .catalog import Catalog, display_path
from .errors import CatalogError
from .loader import load_model, read_document
from .market_lifecycle import MarketChange, plan_remove, plan_suspend
from .market_lifecycle import apply as apply_market
from .prune import PruneItem
from .schema import App
from .smoke_ledger import write_atomic
from .yamlout import dump, load


@dataclass
class AppChanges:
    item: PruneItem
    app_file: Path
    app_text: str  # the catalog file after the change
    chart_dir: Path | None  # deleted when present
    market: MarketChange | None

    def describe(self) -> list[str]:
        lines = []
        if self.market is not None:
            lines.append(f"market: {self.market.title or 'no change'} in {display_path(self.market.folder)}"
                         f" ({self.market.note})")
        lines.append(f"catalog: {display_path(self.app_file)} -> status removed")
        if self.chart_dir is not None:
            lines.append(f"charts: delete {display_path(self.chart_dir)}")
        return lines


def prepare(catalog: Catalog, items: list[PruneItem], *, charts: Path, market: Path | None, remove: bool,
            today: dt.date, bump: Callable[[str], str]) -> list[AppChanges]:
    """Every write of the prune, in memory; raises before anything is written if one cannot be made."""
    out = []
    for item in (i for i in items if i.pruned):
        change = None
        if market is not None:
            change = plan_remove(market, item.app) if remove else plan_suspend(market, item.app, bump)
        version = change.version if change is not None and change.kind == "SUSPEND" else None
        note = f"Pruned {today.isoformat()}: {item.reason}."
        if change is not None and change.kind != "none":
            note += f" Market: {change.title}."
        path = catalog.file_of(item.app)
        text = mark_removed(path, today=today, note=note, version=version)
        chart_dir = charts / item.app
        out.append(AppChanges(item, path, text, chart_dir if chart_dir.is_dir() else None, change))
    return out


def apply(changes: list[AppChanges]) -> None:
    """Write everything `prepare` computed: per app the market first, then the catalog file, then the chart."""
    for change in changes:
        if change.market is not None and change.market.kind != "none":
            apply_market(change.market)
        write_atomic(change.app_file, change.app_text)
        if change.chart_dir is not None:
            _delete_tree(change.chart_dir)


def mark_removed(path: Path, *, today: dt.date, note: str, version: str | None = None) -> str:
    """The app file's text with status removed, removed_on and an extended reason (verified)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    doc = YAML(typ="rt").load(text)
    reason = f"{str(doc.get('reason') or '').strip()} {note}".strip()
    edits = [(*_span(path, doc, lines, "status"), ["status: removed\n", f"removed_on: {today.isoformat()}\n"]),
             (*_span(path, doc, lines, "reason"), [dump({"reason": reason})])]
    if version is not None:
        edits.append((*_span(path, doc, lines, "version"), [f"version: {version}\n"]))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    result = "".join(lines)
    expected = dict(load(text)) | {"status": "removed", "removed_on": today, "reason": reason}
    if version is not None:
        expected["version"] = version
    _verify(path, result, expected)
    return result


def _span(path: Path, doc, lines: list[str], key: str) -> tuple[int, int]:
    """The lines [start, end) holding `key` and its value, without trailing blank or comment lines."""
    if key not in doc:
        raise CatalogError(f"{display_path(path)}: no `{key}` to edit")
    start = doc.lc.key(key)[0]
    later = [doc.lc.key(k)[0] for k in doc if doc.lc.key(k)[0] > start]
    end = min(later, default=len(lines))
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return start, end


def _verify(path: Path, text: str, expected: dict) -> None:
    if load(text) != expected:
        raise CatalogError(f"{display_path(path)}: editing the file would change more than status, removed_on "
                           "and reason; edit it by hand")
    scratch = Path(tempfile.mkdtemp(prefix=".prune-"))
    try:
        probe = scratch / path.name
        probe.write_text(text, encoding="utf-8")
        load_model(App, read_document(probe, display_path(path)), display_path(path))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _delete_tree(folder: Path) -> None:
    trash = Path(tempfile.mkdtemp(prefix=".pruned-", dir=folder.parent))
    os.replace(folder, trash / folder.name)
    shutil.rmtree(trash, ignore_errors=True)
