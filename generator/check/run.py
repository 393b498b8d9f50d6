"""`catalog check` work, one app at a time: rules, then the rendered chart through the chart lint.

Every app is checked and its findings collected; nothing raises on a finding (ARCHITECTURE.md habit 5).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from generator.catalog import Catalog, Resolved, display_path
from generator.chart.render import render
from generator.chart import Tree
from generator.check.drift import deleted, drift
from generator.core import Data
from generator.core import Finding, has_errors
from generator.rules import context, run_rules

if TYPE_CHECKING:
    from generator.adapters import Helm

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class AppResult:
    app: str
    status: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not has_errors(self.findings)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def as_dict(self) -> dict[str, Data]:
        return {"app": self.app, "ok": self.ok, "status": self.status,
                "findings": [f.as_dict() for f in self.findings]}


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.rule, f.file or "", f.line or 0))


def _lint(resolved: Resolved, tree: Tree, charts_dir: str, helm: Helm | None) -> list[Finding]:
    from generator.lint import lint_chart  # heavy (Helm engine, Kubernetes schemas): imported only when linting

    return [replace(f, file=f"{charts_dir}/{f.file}") if f.file else f
            for f in lint_chart(resolved.app.name, tree, helm=helm, form=resolved.form)]


def check_app(resolved: Resolved, catalog: Catalog, *, lint: bool, charts_dir: str = "charts",
              helm: Helm | None = None, drift_in: Path | None = None) -> AppResult:
    """The app's rules, its chart lint (`lint`) and, with `drift_in` (the charts folder), its render drift."""
    result = AppResult(resolved.app.name, resolved.app.status)
    ctx = context(resolved, catalog)
    findings = run_rules(ctx)
    shown = resolved.app.status != "removed"
    tree = render(ctx.chart) if shown and (lint or drift_in is not None) else None
    if lint and tree is not None:
        findings += _lint(resolved, tree, charts_dir, helm)
    if drift_in is not None and tree is not None:
        findings += drift(resolved, tree, drift_in)
    if shown:
        findings += _variant_findings(resolved, catalog)
    result.findings = _sorted(findings)
    return result


# Rules that judge the app's title and description (its own device's text: "MTP", "262K"), not the engine of a variant:
# not run on the variants (docs/devices.md "Checks").
TEXT_RULES = ("CON003", "CON004")


def _variant_findings(resolved: Resolved, catalog: Catalog) -> list[Finding]:
    """The catalog rules on the app as it runs on each more device it targets (`devices:`, generator/fit/devices.py),
    each finding naming the device; a device the app does not run on is `explain`'s to say, not a finding. The text
    rules (TEXT_RULES) are the app's own, not its variants'."""
    from generator.fit import variant_on

    out: list[Finding] = []
    for target in resolved.targets:
        variant = variant_on(resolved, target.device.id)
        if variant is None:
            continue
        out += [replace(f, message=f"on {target.device.name} (devices.{target.index}): {f.message}")
                for f in run_rules(context(variant, catalog)) if f.rule not in TEXT_RULES]
    return out


# Linting is CPU-bound (Helm engine, JSON schemas): past this many apps, one worker process per core.
PARALLEL_FROM = 40


def check_all(catalog: Catalog, chosen: list[Resolved], *, lint: bool, charts: Path, helm: Helm | None = None,
              on_app: Callable[[str], None] | None = None, drift: bool = False,
              every: bool = False) -> list[AppResult]:
    """Check each app; `helm` is the Helm adapter the lint uses (worker processes build their own). `drift`: each
    app's chart in `charts` must be what render writes (when `charts` exists); with `every` (all apps checked), a
    chart folder whose app is gone is an error too."""
    charts_dir = display_path(charts)
    drift_in = charts if drift and charts.is_dir() else None
    workers = min(os.cpu_count() or 1, 8)
    if lint and workers > 1 and len(chosen) >= PARALLEL_FROM:
        results = _check_parallel(catalog, chosen, charts_dir, workers, on_app, drift_in)
    else:
        results = []
        for resolved in chosen:
            if on_app:
                on_app(resolved.app.name)
            results.append(check_app(resolved, catalog, lint=lint, charts_dir=charts_dir, helm=helm,
                                     drift_in=drift_in))
    if drift_in is not None and every:
        results += _gone(catalog, drift_in)
    return by_subject(results, catalog)


def by_subject(results: list[AppResult], catalog: Catalog) -> list[AppResult]:
    """Each finding under what it is about. A rule that reads more than the app's own file (PATH001 sweeps every
    other catalog file with the first app) names the finding's subject in `app`: such a finding moves to that app's
    result when it has one, else to a result of its own after the apps (a draft app: status `draft`; a removed app:
    `removed`; any other file, named by its path: `catalog file`)."""
    by_name = {r.app: r for r in results}
    extra: dict[str, AppResult] = {}
    for result in results:
        foreign = [f for f in result.findings if f.app and f.app != result.app]
        if not foreign:
            continue
        result.findings = [f for f in result.findings if f not in foreign]
        for f in foreign:
            target = by_name.get(f.app) or extra.get(f.app)
            if target is None:
                target = extra[f.app] = AppResult(f.app, _subject_status(f, catalog))
            if f not in target.findings:
                target.findings = _sorted([*target.findings, f])
    return results + [extra[name] for name in sorted(extra)]


def _subject_status(finding: Finding, catalog: Catalog) -> str:
    known = catalog.apps.get(finding.app)
    if known is not None:
        return known.app.status
    parent = Path(finding.file).parent.parts[-2:] if finding.file else ()
    return "draft" if tuple(parent) == ("drafts", "apps") else "catalog file"


def _gone(catalog: Catalog, charts: Path) -> list[AppResult]:
    """A result for each chart folder render would remove (its app file is gone)."""
    from generator.chart import stale_folders

    names = {name for name, r in catalog.apps.items() if r.app.status != "removed"}
    out = []
    for name in stale_folders(charts, names):
        found = deleted(name, charts)
        if found:
            out.append(AppResult(name, "deleted", found))
    return out


_WORKER: dict[str, Catalog] = {}  # the worker process's catalog, loaded once


def _worker_init(root: str) -> None:
    from generator.catalog import load_catalog

    _WORKER["catalog"] = load_catalog(Path(root))


def _worker_check(name: str, charts_dir: str, drift_in: str | None) -> AppResult:
    catalog = _WORKER["catalog"]
    return check_app(catalog.apps[name], catalog, lint=True, charts_dir=charts_dir,
                     drift_in=Path(drift_in) if drift_in else None)


def _check_parallel(catalog: Catalog, chosen: list[Resolved], charts_dir: str, workers: int,
                    on_app: Callable[[str], None] | None, drift_in: Path | None = None) -> list[AppResult]:
    """The same checks in worker processes (each loads the catalog once); results in the apps' order."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    names = [r.app.name for r in chosen]
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_worker_init,
                             initargs=(str(catalog.root),)) as pool:
        results = []
        where = str(drift_in) if drift_in is not None else None
        for result in pool.map(_worker_check, names, [charts_dir] * len(names), [where] * len(names), chunksize=8):
            if on_app:
                on_app(result.app)
            results.append(result)
    return results


__all__ = ["AppResult", "by_subject", "check_all", "check_app"]
