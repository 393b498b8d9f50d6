"""`catalog list` and `catalog explain` show the measured speed as a fraction of the roofline (speed/roof).

Runs on a copy of tests/fixtures/catalog_roofline (desktop GPUs with their bandwidths, public llama.cpp figures as
benchmarks); the ledger rows are written with the smoke ledger's own `append`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.fit.roofline import roofline
from generator.smoke.ledger import SmokeRecord, append

from support.catalogs import FIXTURES
from support.smoke import run_cli

ROOF = FIXTURES / "catalog_roofline"


@pytest.fixture
def roof_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(ROOF, dest)
    return dest


def smoke(app: str, tps: float, verdict: str, date: str, acceptance: float | None = None) -> SmokeRecord:
    return SmokeRecord(app=app, endpoint="http://127.0.0.1:8000", chart_version="1.0.0", image="x:1", date=date,
                       runs=(), tokens_per_s=tps, acceptance=acceptance, baseline_tokens_per_s=None, verdict=verdict,
                       reasons=() if verdict == "pass" else ("x",))


def _rows(catalog: Path, capsys) -> dict[str, dict]:
    code, out, _ = run_cli(["list", "--json", "--catalog", str(catalog)], capsys)
    assert code == 0
    return {r["name"]: r for r in json.loads(out)}


def test_list_json_gives_every_benchmarked_app_its_fraction_of_the_roofline(roof_copy, capsys):
    rows = _rows(roof_copy, capsys)
    cat = load_catalog(roof_copy)
    for name, r in cat.apps.items():
        row = rows[name]
        bench = r.app.last_benchmark
        roof = roofline(r, bench.context or 0, acceptance=bench.acceptance) if bench else None
        if bench is None or roof is None:  # no measurement, or a device without a bandwidth
            assert row["speed_per_roof"] is None, name
            bound = roofline(r, 0)  # the bound needs no measurement: the empty-cache roofline
            assert row["roof_tokens_per_s"] == (round(bound.bound_tps, 1) if bound else None), name
            continue
        assert row["speed_per_roof"] == round(bench.tokens_per_s / roof.bound_tps, 3), name
        assert row["roof_tokens_per_s"] == round(roof.bound_tps, 1)
        assert row["roof_source"] == f"benchmark {bench.date.isoformat()}"
    assert 0.5 < rows["llama7b4090"]["speed_per_roof"] < 0.6  # 146.81 of 263.8 t/s
    assert rows["llama7bnobw"]["speed_per_roof"] is None  # its device states no bandwidth
    assert rows["qwenmtp"]["roof_loose"] is False  # the benchmark's acceptance tightens the bound


def test_list_table_has_the_speed_roof_column(roof_copy, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    code, out, _ = run_cli(["list", "--catalog", str(roof_copy)], capsys)
    assert code == 0 and "speed/roof" in out.splitlines()[1]
    row = next(line for line in out.splitlines() if line.startswith("llama7b4090 "))
    assert "56%" in row  # 146.81 of 263.8 t/s (the benchmark records no context: an empty cache)
    nobw = next(line for line in out.splitlines() if line.startswith("llama7bnobw "))
    assert "%" not in nobw


def test_a_newer_passing_smoke_replaces_the_benchmark_and_a_failed_one_does_not(roof_copy, capsys):
    append(roof_copy, smoke("llama7b4090", 150.0, "pass", "2026-11-29T10:00:00Z"))
    append(roof_copy, smoke("llama7b4090", 400.0, "fail", "2026-11-29T11:00:00Z"))
    row = _rows(roof_copy, capsys)["llama7b4090"]
    assert row["roof_source"] == "smoke 2026-11-29T10:00:00Z" and row["roof_measured_tokens_per_s"] == 150.0
    assert row["smoke_verdict"] == "fail"  # the smoke column still shows the last row
    bound = roofline(load_catalog(roof_copy).apps["llama7b4090"], 0)
    assert bound is not None and row["speed_per_roof"] == round(150.0 / bound.bound_tps, 3)


def test_an_older_smoke_does_not_hide_a_newer_benchmark(roof_copy, capsys):
    append(roof_copy, smoke("qwenmtp", 90.0, "pass", "2026-01-01T00:00:00Z"))
    row = _rows(roof_copy, capsys)["qwenmtp"]
    assert row["roof_source"] == "benchmark 2026-05-21" and row["roof_measured_tokens_per_s"] == 200.0


def test_explain_prints_the_roofline_parts_and_the_fraction(roof_copy, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(["explain", "qwenmtp", "--catalog", str(roof_copy)], capsys)
    assert code == 0
    for text in ("Roofline —", "active weights", "KV read at 8,192 tokens", "recurrent state", "1,008 GB/s",
                 "2.50 tokens a step", "speed/roof", "benchmark 2026-05-21", "at the whole 32,768-token context"):
        assert text in out, text
    code, out, _ = run_cli(["explain", "qwenmtp", "--json", "--catalog", str(roof_copy)], capsys)
    data = json.loads(out)
    roof = roofline(load_catalog(roof_copy).apps["qwenmtp"], 8192, acceptance=0.5)
    assert roof is not None
    assert data["roofline"]["bound_tps"] == round(roof.bound_tps, 1) and data["roofline"]["context"] == 8192
    assert data["speed_per_roofline"]["fraction"] == round(200.0 / roof.bound_tps, 3)
    assert data["roofline_full_context"]["context"] == 32768


def test_explain_without_bandwidth_says_so(roof_copy, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(["explain", "llama7bnobw", "--catalog", str(roof_copy)], capsys)
    assert code == 0 and "states no memory_bandwidth_gb_s" in out
    code, out, _ = run_cli(["explain", "llama7bnobw", "--json", "--catalog", str(roof_copy)], capsys)
    data = json.loads(out)
    assert data["roofline"] is None and data["speed_per_roofline"] is None
