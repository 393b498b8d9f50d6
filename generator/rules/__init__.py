"""Rules: one module per family; each rule has an id, a severity, a message and a fix.

A rule is a function `(ctx: AppContext) -> Iterable[Finding]` registered with `@rule(...)` in the one
rule registry (generator/core/ruleset.py, shared with the chart rules of generator/lint/) as a
"catalog" stage rule. `run_rules` never raises on findings: it runs every rule for every app and
collects the results. Rule modules register themselves when imported (see `RULE_MODULES`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from collections.abc import Callable, Iterable

from generator.catalog import Catalog, Resolved
from generator.engines import EngineSpec, Sized
from generator.engines import cap_of
from generator.schema import App
from generator.core import Finding, Severity
from generator.core import RULES, Rule
from generator.chart import ChartSpec
from generator.chart.plan import plan

if TYPE_CHECKING:
    from generator.fit import Fit
    from generator.flags import Issue
    from generator.flags import FlagTable


@dataclass
class Memo:
    """Per-app results several rules share, computed by the first rule that needs them."""

    flag_table: tuple[FlagTable | None, str | None] | None = None  # the stack's flag table, or why there is none
    flag_issues: list[Issue] | None = None  # the argv check against that table
    fit: Fit | None = None  # the memory fit estimate


@dataclass
class AppContext:
    """Everything a rule may read about one app: catalog entry, resolved engine argv/env, planned chart."""

    resolved: Sized  # the app as planned (`ChartSpec.resolved`)
    catalog: Catalog
    chart: ChartSpec
    cache: Memo = field(default_factory=Memo)  # per-app memo shared by rules (e.g. the fit estimate)

    @property
    def engine(self) -> EngineSpec:
        return self.chart.engine

    @property
    def app(self) -> App:
        return self.resolved.app

    @property
    def gpu_memory_mib(self) -> int:
        """The app's GPU memory cap as planned: stated, or sized by the fit (`context()` plans the app)."""
        return cap_of(self.resolved)

    def finding(self, rule_id: str, severity: Severity, message: str, fix: str = "", *loc: str | int) -> Finding:
        """A finding that points at the app's catalog file, at the line of `loc` (a field path)."""
        return Finding(rule=rule_id, severity=severity, app=self.app.name, message=message, fix=fix,
                       file=self.resolved.file, line=self.resolved.line(*loc) if loc else 1)


REGISTRY = RULES.of("catalog")  # the catalog rules, a live view of the one registry

# Modules that define rules; each is imported once by `all_rules()`.
RULE_MODULES: tuple[str, ...] = ("flags", "hami", "genesis", "engine", "fit", "consistency", "status", "market",
                                 "versions_upstream", "measured", "tags", "secrets", "batch", "cuda", "paths",
                                 "shared")


RuleFn = Callable[[AppContext], Iterable[Finding]]


def rule(rule_id: str, severity: Severity, title: str, why: str, source: str) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        RULES.add(Rule(rule_id, severity, title, why, source, "catalog", fn))
        return fn

    return register


def all_rules() -> list[Rule]:
    for module in RULE_MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return sorted(REGISTRY.values(), key=lambda r: r.id)


def context(resolved: Resolved, catalog: Catalog) -> AppContext:
    spec = plan(resolved)  # rules see the app as planned: GPU memory sized by the fit when the app leaves it out
    return AppContext(resolved=spec.resolved, catalog=catalog, chart=spec)


def run_rules(ctx: AppContext) -> list[Finding]:
    findings: list[Finding] = []
    for r in all_rules():
        if r.check is not None:
            findings.extend(r.check(ctx))
    return findings


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["REGISTRY", "SIGNATURES", "SYNC_FILE", "Signature", "all_rules", "chart_digest", "context", "hami_bytes",
           "load_corrections", "load_sync", "run_rules", "version_refusal"]

if TYPE_CHECKING:
    from .signatures import SIGNATURES as SIGNATURES
    from .versions_upstream import SYNC_FILE as SYNC_FILE
    from .signatures import Signature as Signature
    from .versions_upstream import chart_digest as chart_digest
    from .hami import hami_bytes as hami_bytes
    from .versions_upstream import load_corrections as load_corrections
    from .versions_upstream import load_sync as load_sync
    from .versions_upstream import version_refusal as version_refusal

_FACE: dict[str, str] = {"SIGNATURES": "signatures", "SYNC_FILE": "versions_upstream", "Signature": "signatures",
                         "chart_digest": "versions_upstream", "hami_bytes": "hami",
                         "load_corrections": "versions_upstream", "load_sync": "versions_upstream",
                         "version_refusal": "versions_upstream"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
