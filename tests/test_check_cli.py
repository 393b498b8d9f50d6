"""`catalog check` and `catalog explain` end to end on the market fixture: output formats, exit codes and error
paths. That the embedded catalog passes `check` with the chart lint: tests/test_embedded_catalog.py."""

from __future__ import annotations

import json
import re

from generator.cli import main
from generator.rules import all_rules

from support.catalogs import MARKET_CATALOG
from support.checks import E4B, FAST, check, findings, set_app


def test_human_output_marks_each_app_and_summarises(catalog_copy, capsys):
    set_app(catalog_copy, FAST, env={"CUDA_DEVICE_MEMORY_LIMIT_0": "0m"})
    code = main(["check", FAST, E4B, "--catalog", str(catalog_copy), "--no-lint"])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(rf"^✖ {FAST}\s+\d+ errors?", out, re.M)
    assert re.search(rf"^✔ {E4B}", out, re.M)
    assert "HAMI002" in out and "fix:" in out and f"{FAST}.yaml:" in out
    assert re.search(r"FAILED: 2 app\(s\) checked, 1 passed, 1 failed; \d+ error\(s\)", out)


def test_json_shape(catalog_copy, capsys):
    set_app(catalog_copy, FAST, context_length=88000,  # 2.5.7: under vLLM's 88,704 (tests/test_fit_budget.py)
            description="Qwen3.6 27B fastest stack — vLLM Turbo + Genesis, TurboQuant K8V4 KV and MTP, 88K context.")
    code, data = check(capsys, catalog_copy, FAST)
    assert set(data) == {"apps", "errors", "warnings"}
    app = data["apps"][0]
    assert set(app) >= {"app", "ok", "findings"} and app["ok"] is True and code == 0
    assert set(app["findings"][0]) == {"rule", "severity", "app", "message", "fix", "file", "line"}
    assert data["warnings"] == sum(1 for f in app["findings"] if f["severity"] == "warning")


def test_unknown_app_is_a_usage_error(capsys):
    assert main(["check", "nosuchapp", "--no-lint", "--catalog", str(MARKET_CATALOG)]) == 2
    assert "unknown app" in capsys.readouterr().err


def test_invalid_catalog_exits_1_with_file_and_line(catalog_copy, capsys):
    (catalog_copy / "apps" / f"{FAST}.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    assert main(["check", "--catalog", str(catalog_copy), "--no-lint"]) == 1
    assert f"apps/{FAST}.yaml:" in capsys.readouterr().err


def test_lint_findings_come_through_check(catalog_copy, capsys):
    """A chart the lint rejects fails `check`: a CPU request above its limit breaks Olares' envelope rules."""
    resources = {"cpu_request": "32", "cpu_limit": "16", "memory_request": "4Gi", "memory_limit": "40Gi",
                 "disk_request": "20Gi", "disk_limit": "30Gi"}
    set_app(catalog_copy, E4B, resources=resources)
    code, data = check(capsys, catalog_copy, E4B, lint=True)
    lint = [f for f in findings(data) if f["rule"].startswith("OLARES")]
    assert code == 1 and lint, findings(data)
    assert all(f["file"].startswith("charts/") or "/charts/" in f["file"] for f in lint)


# ---- explain -----------------------------------------------------------------------------------------

def test_explain_shows_origins_and_overrides(catalog_copy, capsys):
    set_app(catalog_copy, FAST, env={"OMP_NUM_THREADS": "4"},
            extra_args=["--max-num-seqs", "1", "--max-num-batched-tokens", "4096", "--max-model-len", "65536"])
    assert main(["explain", FAST, "--catalog", str(catalog_copy), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"name": "OMP_NUM_THREADS", "value": "4", "origin": "env"} in data["env"]
    old = next(e for e in data["overridden_env"] if e["name"] == "OMP_NUM_THREADS")
    assert old["value"] == "1" and old["origin"] == "stack genesis-vllm" and old["by"] == "env"
    ctx_arg = next(a for a in data["args"] if a["origin"] == "context_length")
    assert any("overridden by --max-model-len (extra_args)" in n for n in ctx_arg["notes"])
    assert data["fit"]["context"] == 65536  # the fit judges the value the engine really gets
    patches = {p["id"]: p for p in data["genesis"]}
    assert patches["P38"]["on"] and patches["P38"]["why"] == "default on"


def test_explain_text_output(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["explain", FAST, "--catalog", str(MARKET_CATALOG)]) == 0
    out = capsys.readouterr().out
    for text in ("Arguments", "Environment", "Genesis patches", "Memory", "FAIL", "KV for one 131,072-token request",
                 "it does NOT fit", "Genesis P38 continuation-prefill workspace", "calibrated:", "GPU memory: need"):
        assert text in out


def test_every_rule_is_documented():
    assert all(r.id and r.title and r.why and r.source for r in all_rules())
