"""docs/rules.md is generated from the rule registry and must stay in sync with it."""

from __future__ import annotations

from generator.rules import all_rules
from generator.rules.doc import DOC, render


def test_rules_doc_is_in_sync_with_the_registry():
    assert DOC.read_text(encoding="utf-8") == render(), "run `python -m generator.rules.doc --write`"


def test_every_rule_has_a_row_with_its_severity_and_source():
    text = DOC.read_text(encoding="utf-8")
    for r in all_rules():
        row = next((line for line in text.splitlines() if line.startswith(f"| {r.id} |")), None)
        assert row is not None, r.id
        assert f"| {r.severity} |" in row
