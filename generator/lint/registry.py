"""Chart rules (HELM, K8S, OLARES): registered in the one rule registry of generator/core/ruleset.py.

`register` records a rule that `lint_chart` runs itself (HELM, K8S); `@chart_rule` records an Olares
check `fn(view) -> Iterable[Issue]` with its rule. `CHART_RULES` is the live view of the chart rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable, Iterable

from generator.core import Severity
from generator.core import RULES, Rule


@dataclass(frozen=True)
class Issue:
    """One violation found by a check, before it becomes a Finding."""

    message: str
    fix: str = ""
    where: str | None = None  # chart-relative file, e.g. templates/deployment.yaml
    line: int | None = None


ChartRule = Rule  # the one rule type; its stage is "chart"
CHART_RULES = RULES.of("chart")
Check = Callable[..., Iterable[Issue]]


def register(rule_id: str, title: str, why: str, source: str, severity: Severity = "error",
             check: Check | None = None) -> Rule:
    return RULES.add(Rule(rule_id, severity, title, why, source, "chart", check))


def chart_rule(rule_id: str, title: str, why: str, source: str) -> Callable[[Check], Check]:
    """Register an Olares check `fn(view) -> Iterable[Issue]` under a rule id."""

    def wrap(fn: Check) -> Check:
        register(rule_id, title, why, source, check=fn)
        return fn

    return wrap


def checks() -> list[tuple[Rule, Check]]:
    """The chart rules that carry their own check, in the order they were registered."""
    return [(rule, rule.check) for rule in CHART_RULES.values() if rule.check is not None]
