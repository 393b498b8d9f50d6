"""Carry out a prune plan: market change, catalog file, chart folder — computed first, then written.

For each app the plan lets go:
1. with a market tree, the SUSPEND change or, with `--remove`, the REMOVE change (only `.remove`
   left) — market_lifecycle.py. A SUSPEND bumps (docs/domain.md): the catalog's version is raised by
   `catalog bump`'s own `bump_for_suspend` (CHANGELOG.md entry, upgrade_description, releases.yaml)
   and the market folder gets that same version and an empty `.suspend`;
2. its catalog file: `status: removed`, `removed_on: <date>`, `reason` kept and extended with the
   smoke that allowed it;
3. its rendered chart folder `charts/<app>` is deleted.
The catalog file is edited line by line at the positions ruamel's round-trip loader reports, and the
result is parsed back and compared with the expected data: comments, key order and the flow style
of every untouched line stay byte-identical (a full round-trip dump would re-wrap long flow lists).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from generator.catalog import Catalog, display_path
from generator.chart import ensure_writable, write_charts
from generator.core import InputError, UsageError
from generator.core import atomic_write_text
from generator.yamlio import load_model, parse_document
from generator.prune.market import MarketChange, chart_version, folder_of, plan_remove, plan_suspend
from generator.prune.market import apply as apply_market
from generator.prune.gate import PruneItem
from generator.schema import App
from generator.versions import parse_version
from generator.yamlio import dump, load


@dataclass
class AppChanges:
    item: PruneItem
    app_file: Path
    note: str  # appended to `reason`
    chart_dir: Path | None  # deleted when present
    market: MarketChange | None
    today: dt.date
    bump_to: str | None = None  # the SUSPEND version the catalog is bumped to first

    def describe(self) -> list[str]:
        lines = []
        if self.bump_to is not None:
            lines.append(f"catalog bump: {self.item.app} -> {self.bump_to} (CHANGELOG.md, releases.yaml)")
        if self.market is not None:
            lines.append(f"market: {self.market.title or 'no change'} in {display_path(self.market.folder)}"
                         f" ({self.market.note})")
        lines.append(f"catalog: {display_path(self.app_file)} -> status removed")
        if self.chart_dir is not None:
            lines.append(f"charts: delete {display_path(self.chart_dir)}")
        return lines


def prepare(catalog: Catalog, items: list[PruneItem], *, charts: Path, market: Path | None, remove: bool,
            today: dt.date) -> list[AppChanges]:
    """Every change of the prune, checked; raises before anything is written if one cannot be made."""
    pruned = [i for i in items if i.pruned]
    if pruned:
        ensure_writable(charts)  # the chart folders go last: refuse a foreign charts folder before anything
    suspend_to = _suspend_versions(catalog.root, [i.app for i in pruned]) if market and not remove else {}
    out = []
    for item in pruned:
        change, bump_to = None, None
        if market is not None and remove:
            change = plan_remove(market, item.app)
        elif market is not None:
            change = _suspend(catalog.apps[item.app].app.version, market, item.app, suspend_to[item.app])
            bump_to = suspend_to[item.app] if change.kind == "SUSPEND" else None
        note = f"Pruned {today.isoformat()}: {item.reason}."
        if change is not None and change.kind != "none":
            note += f" Market: {change.title}."
        path = catalog.file_of(item.app)
        mark_removed(path, today=today, note=note)  # refuses now if the file cannot be edited safely
        chart_dir = charts / item.app
        out.append(AppChanges(item, path, note, chart_dir if chart_dir.is_dir() else None, change, today, bump_to))
    return out


def _suspend_versions(root: Path, apps: list[str]) -> dict[str, str]:
    """The version `catalog bump` will give each app when it is suspended (read-only assessment)."""
    from generator.versions import assess_catalog

    if not apps:
        return {}
    outcomes = assess_catalog(root, apps, level="patch", note="Suspended").outcomes
    refused = [f"{o.app}: {o.message}" for o in outcomes if o.action == "refused"]
    if refused:
        raise UsageError("; ".join(refused))
    return {o.app: o.after for o in outcomes}


def _suspend(version: str, market: Path, app: str, new: str) -> MarketChange:
    """The SUSPEND change at `new` (a market folder above the catalog's version is refused)."""
    market_version = chart_version(folder_of(market, app))
    if parse_version(market_version) > parse_version(version):
        raise UsageError(f"{market / app}: the market has {market_version}, above the catalog's {version}; "
                         "align the catalog version first")
    return plan_suspend(market, app, lambda current: new)


def apply(changes: list[AppChanges], *, charts: Path) -> None:
    """Per app: the catalog bump of a SUSPEND, the market change, the catalog file, then the chart."""
    from generator.versions import bump_for_suspend

    for change in changes:
        if change.bump_to is not None:
            outcome = bump_for_suspend(change.app_file.parent.parent, change.item.app, _why(change.item), out=charts)
            if outcome.after != change.bump_to:
                raise InputError(f"{change.item.app}: `catalog bump` wrote {outcome.after} but the market change "
                                   f"was prepared for {change.bump_to}; the market was not touched: run prune again")
        if change.market is not None and change.market.kind != "none":
            apply_market(change.market)
        atomic_write_text(change.app_file, mark_removed(change.app_file, today=change.today, note=change.note))
        if change.chart_dir is not None and change.chart_dir.is_dir():
            write_charts(charts, {}, prune_others=False, remove=[change.chart_dir.name])


def _why(item: PruneItem) -> str:
    return f"superseded by {item.replaced_by} ({item.reason})"


def mark_removed(path: Path, *, today: dt.date, note: str) -> str:
    """The app file's text with status removed, removed_on and an extended reason (verified)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    doc = YAML(typ="rt").load(text)
    reason = f"{str(doc.get('reason') or '').strip()} {note}".strip()
    edits = [(*_span(path, doc, lines, "status"), ["status: removed\n", f"removed_on: {today.isoformat()}\n"]),
             (*_span(path, doc, lines, "reason"), [dump({"reason": reason})])]
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    result = "".join(lines)
    expected = dict(load(text)) | {"status": "removed", "removed_on": today, "reason": reason}
    _verify(path, result, expected)
    return result


def _span(path: Path, doc: CommentedMap, lines: list[str], key: str) -> tuple[int, int]:
    """The lines [start, end) holding `key` and its value, without trailing blank or comment lines."""
    if key not in doc:
        raise InputError(f"{display_path(path)}: no `{key}` to edit")
    start = doc.lc.key(key)[0]
    later = [doc.lc.key(k)[0] for k in doc if doc.lc.key(k)[0] > start]
    end = min(later, default=len(lines))
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return start, end


def _verify(path: Path, text: str, expected: dict[str, Any]) -> None:
    if load(text) != expected:
        raise InputError(f"{display_path(path)}: editing the file would change more than status, removed_on "
                           "and reason; edit it by hand")
    load_model(App, parse_document(text, display_path(path), path), display_path(path))  # in memory: no scratch file
