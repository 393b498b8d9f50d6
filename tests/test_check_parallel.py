"""`catalog check` on many apps lints in worker processes: the results are those of the serial run."""

from __future__ import annotations

import shutil

from generator.check import run as checking
from generator.catalog import load_catalog

from conftest import EMBEDDED, REPO


def test_parallel_check_equals_serial(tmp_path, monkeypatch):
    catalog = tmp_path / "catalog"
    shutil.copytree(EMBEDDED, catalog)
    shutil.copytree(REPO / "charts", tmp_path / "charts")
    cat = load_catalog(catalog)
    chosen = cat.select()
    monkeypatch.setattr(checking, "PARALLEL_FROM", 10**6)
    serial = checking.check_all(cat, chosen, lint=True, charts=tmp_path / "charts")
    monkeypatch.setattr(checking, "PARALLEL_FROM", 2)
    monkeypatch.setattr(checking.os, "cpu_count", lambda: 2)
    seen: list[str] = []
    parallel = checking.check_all(cat, chosen, lint=True, charts=tmp_path / "charts", on_app=seen.append)
    assert [r.as_dict() for r in parallel] == [r.as_dict() for r in serial]
    assert seen == [r.app.name for r in chosen]
