"""docs/rules.md is generated from the one rule registry (chart and catalog rules) and must stay in sync."""

from __future__ import annotations

import pytest

from generator.core.ruleset import RULES, Rule
from generator.lint.run import CHART_RULES
from generator.rules import REGISTRY, all_rules
from generator.rules.doc import DOC, render


def test_rules_doc_is_in_sync_with_the_registry():
    assert DOC.read_text(encoding="utf-8") == render(), "run `python -m generator.rules.doc --write`"


def test_a_stale_doc_is_detected(monkeypatch):
    """The sync check can fail: a rule whose title changes makes the committed page stale."""
    rid = next(iter(CHART_RULES))
    monkeypatch.setitem(RULES.rules, rid, Rule(**{**RULES.rules[rid].__dict__, "title": "changed"}))
    assert DOC.read_text(encoding="utf-8") != render()


def test_every_rule_of_both_stages_has_a_row_in_its_section():
    text = DOC.read_text(encoding="utf-8")
    chart_part, catalog_part = text.split("\n## Catalog rules\n")
    assert "\n## Chart rules\n" in chart_part
    all_rules()
    assert CHART_RULES and REGISTRY
    for part, rules in ((chart_part, CHART_RULES.values()), (catalog_part, REGISTRY.values())):
        for r in rules:
            row = next((line for line in part.splitlines() if line.startswith(f"| {r.id} |")), None)
            assert row is not None, r.id
            assert f"| {r.severity} |" in row


def test_one_registry_one_id_space():
    all_rules()
    assert set(CHART_RULES).isdisjoint(REGISTRY)
    assert set(RULES.rules) == set(CHART_RULES) | set(REGISTRY)
    assert {r.stage for r in RULES.rules.values()} == {"chart", "catalog"}
    chart_id, catalog_id = next(iter(CHART_RULES)), next(iter(REGISTRY))
    for rid, stage in ((chart_id, "catalog"), (catalog_id, "chart")):
        with pytest.raises(ValueError, match=f"duplicate rule id {rid}"):
            RULES.add(Rule(rid, "error", "t", "w", "s", stage))
