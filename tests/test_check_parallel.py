"""`catalog check` on many apps lints in worker processes: the results are those of the serial run."""

from __future__ import annotations

from generator.catalog import load_catalog
from generator.check import run as checking


def test_parallel_check_equals_serial(rendered_copy, monkeypatch):
    charts = rendered_copy.parent / "charts"
    cat = load_catalog(rendered_copy)
    chosen = cat.select()
    monkeypatch.setattr(checking, "PARALLEL_FROM", 10**6)
    serial = checking.check_all(cat, chosen, lint=True, charts=charts)
    monkeypatch.setattr(checking, "PARALLEL_FROM", 2)
    monkeypatch.setattr(checking.os, "cpu_count", lambda: 2)
    seen: list[str] = []
    parallel = checking.check_all(cat, chosen, lint=True, charts=charts, on_app=seen.append)
    assert [r.as_dict() for r in parallel] == [r.as_dict() for r in serial]
    assert seen == [r.app.name for r in chosen]
