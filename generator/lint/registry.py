"""Chart rule ids (HELM, K8S, OLARES) with what they check, why and where the rule comes from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from generator.core.findings import Severity


@dataclass(frozen=True)
class Issue:
    """One violation found by a check, before it becomes a Finding."""

    message: str
    fix: str = ""
    where: str | None = None  # chart-relative file, e.g. templates/deployment.yaml
    line: int | None = None


@dataclass(frozen=True)
class ChartRule:
    id: str
    severity: Severity
    title: str
    why: str
    source: str


CHART_RULES: dict[str, ChartRule] = {}


def register(rule_id: str, title: str, why: str, source: str, severity: Severity = "error") -> ChartRule:
    if rule_id in CHART_RULES:
        raise ValueError(f"duplicate chart rule id {rule_id}")
    CHART_RULES[rule_id] = ChartRule(rule_id, severity, title, why, source)
    return CHART_RULES[rule_id]


Check = Callable[..., Iterable[Issue]]
CHECKS: list[tuple[ChartRule, Check]] = []


def chart_rule(rule_id: str, title: str, why: str, source: str) -> Callable[[Check], Check]:
    """Register an Olares check `fn(view) -> Iterable[Issue]` under a rule id."""

    def wrap(fn: Check) -> Check:
        CHECKS.append((register(rule_id, title, why, source), fn))
        return fn

    return wrap
