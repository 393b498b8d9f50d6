"""One rule type and one registry for every check reported by id, whichever stage runs it.

    stage "chart"     the lint of a rendered chart (generator/lint/: HELM, K8S, OLARES), run by lint.run.lint_chart
    stage "catalog"   the crash rules on a resolved app and its planned chart (generator/rules/: CON, ENG, FIT, ...)

Both register here when their modules are imported (lint comes before rules in the flow, so the
registry sits in core, below both). Rule ids are one namespace: a duplicate id is refused whatever
its stage. docs/rules.md is generated from this registry (`python -m generator.rules.doc --write`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from generator.core.findings import Severity

Stage = Literal["chart", "catalog"]
STAGES: tuple[Stage, ...] = ("chart", "catalog")


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str  # what it checks
    why: str  # the crash or refusal it prevents
    source: str  # where the fact comes from
    stage: Stage
    # the check: catalog rules `(AppContext) -> Iterable[Finding]`, chart rules `(ChartView) -> Iterable[Issue]`;
    # None where the stage runs the rule itself (HELM and K8S, inside lint_chart)
    check: Callable[[Any], Iterable[Any]] | None = None


class StageView(Mapping[str, Rule]):
    """The rules of one stage, live: rules registered later appear too."""

    def __init__(self, registry: Registry, stage: Stage):
        self._registry, self._stage = registry, stage

    def _rules(self) -> dict[str, Rule]:
        return {rid: r for rid, r in self._registry.rules.items() if r.stage == self._stage}

    def __getitem__(self, rule_id: str) -> Rule:
        rule = self._registry.rules[rule_id]
        if rule.stage != self._stage:
            raise KeyError(rule_id)
        return rule

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules())

    def __len__(self) -> int:
        return len(self._rules())


class Registry:
    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}

    def add(self, rule: Rule) -> Rule:
        if rule.id in self.rules:
            raise ValueError(f"duplicate rule id {rule.id} ({self.rules[rule.id].stage} and {rule.stage} rules)")
        self.rules[rule.id] = rule
        return rule

    def of(self, stage: Stage) -> StageView:
        return StageView(self, stage)

    def sorted(self) -> list[Rule]:
        return sorted(self.rules.values(), key=lambda r: r.id)


RULES = Registry()

__all__ = ["RULES", "Registry", "Rule", "STAGES", "Stage", "StageView"]
