"""Pure parts of `catalog smoke`: verdict, baseline, content checks, metrics parsing, ledger."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.core.errors import CatalogError
from generator.smoke.content import degenerate, problems
from generator.smoke.ledger import SmokeRecord, append, history, redact
from generator.smoke.metrics import SpecCounts, llamacpp_counts, vllm_counts
from generator.smoke.verdict import Baseline, baseline_for, judge

from support.catalogs import MARKET_CATALOG
from support.smoke import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "vllm_spec_decode_metrics.prom"


def record(app: str = "lucedflashqwen36one", *, verdict: str = "pass", tps: float | None = 88.0,
           image: str = "docker.io/aamsellem/lucebox-dflash:v1.9.0", version: str = "1.4.4",
           date: str = "2026-11-29T10:00:00Z", accepted: bool = False) -> SmokeRecord:
    return SmokeRecord(app=app, endpoint="http://127.0.0.1:8000", chart_version=version, image=image, date=date,
                       runs=(), tokens_per_s=tps, acceptance=None, baseline_tokens_per_s=None, verdict=verdict,
                       reasons=() if verdict == "pass" else ("x",), accepted_baseline=accepted)


# --- verdict -----------------------------------------------------------------------------------

def test_lucebox_drop_from_88_5_to_69_is_a_regression():
    verdict, reasons = judge(69.0, [], Baseline(88.5, "benchmark 2026-05-04, Lucebox v1.4.4"), 0.10)
    assert verdict == "regression"
    assert "22.0% below the baseline 88.5 t/s" in reasons[0] and "Lucebox v1.4.4" in reasons[0]


@pytest.mark.parametrize("tps, expected", [(79.65, "pass"), (79.6, "regression"), (95.0, "pass")])
def test_tolerance_boundary(tps, expected):
    assert judge(tps, [], Baseline(88.5, "b"), 0.10)[0] == expected


def test_failures_win_over_speed_and_no_baseline_passes():
    assert judge(500.0, ["run 1: degenerate"], Baseline(88.5, "b"))[0] == "fail"
    assert judge(None, [], None) == ("fail", ["no throughput was measured"])
    assert judge(12.0, [], None) == ("pass", [])


def test_baseline_is_the_last_accepted_pass_on_the_same_image_then_the_latest_benchmark():
    app = load_catalog(MARKET_CATALOG).apps["lucedflashqwen36one"].app
    image = "docker.io/aamsellem/lucebox-dflash:v1.9.0"
    rows = [record(tps=70.0, date="2026-11-01T00:00:00Z", accepted=True),
            record(tps=71.0, date="2026-11-02T00:00:00Z", accepted=True),
            record(tps=181.6, date="2026-11-03T00:00:00Z"),  # a pass nobody accepted: never the baseline
            record(tps=50.0, verdict="regression"), record(tps=99.0, image="other:1", accepted=True)]
    assert baseline_for(app, image, rows) == Baseline(71.0, "smoke 2026-11-02T00:00:00Z, chart 1.4.4, accepted")
    bench = baseline_for(app, image, [record(tps=99.0, image="other:1", accepted=True), record(tps=181.6)])
    assert bench is not None and bench.tokens_per_s == 69.0 and bench.source.startswith("benchmark 2026-05-07")


def test_a_figure_above_the_roofline_is_suspect_never_a_pass():
    """The issue's case: 181.6 t/s from a tiny CPU model under the Long app's alias, baseline 65 t/s."""
    verdict, reasons = judge(181.6, [], Baseline(65.0, "b"), bound_tps=70.0, bound_reason="roofline: 1.1 TB/s / 16 GB")
    assert verdict == "suspect"
    assert reasons == ["181.6 t/s is above 70.0 t/s, the fastest this app can decode (roofline: 1.1 TB/s / 16 GB): "
                       "this figure is not this app's (another model or a cache answered)"]
    assert judge(69.9, [], Baseline(65.0, "b"), bound_tps=70.0) == ("pass", [])
    assert judge(500.0, ["model: served a.gguf; the chart serves b.gguf"], None, bound_tps=70.0)[0] == "fail"


def test_acceptance_below_the_floor_is_a_regression_naming_the_floor():
    verdict, reasons = judge(60.0, [], Baseline(65.0, "b"), acceptance=0.002, acceptance_floor=0.3)
    assert verdict == "regression"
    assert reasons == ["speculative acceptance 0.2% is below the floor 30%: the drafter is not the app's, or "
                       "speculation is broken"]
    assert judge(60.0, [], Baseline(65.0, "b"), acceptance=0.64, acceptance_floor=0.3) == ("pass", [])
    assert judge(60.0, [], None, acceptance=None, acceptance_floor=0.3) == ("pass", [])  # unmeasured: noted


def test_an_error_is_neither_a_pass_nor_a_fail():
    assert judge(None, [], None, error="GET /health: ConnectError: [Errno 111] Connection refused") == (
        "error", ["could not measure: GET /health: ConnectError: [Errno 111] Connection refused"])


# --- content -----------------------------------------------------------------------------------

def test_empty_and_degenerate_answers_fail_even_with_http_200():
    assert problems("  \n", [], None) == ["the answer is empty (HTTP 200 with no generated text)"]
    one_token = [" ok"] * 60
    assert "one token ' ok'" in degenerate("".join(one_token), one_token)
    cycle = "the cat sat. " * 20
    assert "repeats" in degenerate(cycle, [cycle])  # one big piece: found by the period check


def test_normal_and_short_answers_pass():
    text = ("A hash table maps keys to buckets with a hash function; collisions are resolved by chaining "
            "or open addressing, and the table grows when its load factor passes a threshold.")
    assert problems(text, text.split(" "), None) == []
    assert problems("4", ["4"], "4") == []
    assert problems("four", ["four"], "4") == ["the answer does not contain the expected text '4'"]


# --- acceptance --------------------------------------------------------------------------------

def test_vllm_counters_from_a_real_capture_ignore_created_and_per_position_samples():
    counts = vllm_counts(FIXTURE.read_text())
    assert counts == SpecCounts(drafted=1.0218118e07, accepted=7.268642e06)
    assert counts.acceptance == pytest.approx(0.7113, abs=1e-4)
    assert vllm_counts("# HELP nothing here\n") is None


def test_vllm_counters_sum_engines_and_filter_by_model_name():
    text = FIXTURE.read_text() + (
        'vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="/models/v4-flash-0731"} 100.0\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="/models/v4-flash-0731"} 50.0\n'
        'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="other"} 5.0\n')
    assert vllm_counts(text, "/models/v4-flash-0731") == SpecCounts(1.0218218e07, 7.268692e06)
    assert vllm_counts(text, "unknown").drafted == 1.0218223e07  # no match: every engine counts


def test_llamacpp_timings():
    assert llamacpp_counts({"draft_n": 34, "draft_n_accepted": 17}).acceptance == 0.5
    assert llamacpp_counts({"predicted_n": 12}) is None
    assert SpecCounts(10, 4) - SpecCounts(4, 1) == SpecCounts(6, 3)


# --- ledger ------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, shown", [
    ("https://alice:s3cret@app.example.com:8443/v1?token=abc#x", "https://app.example.com:8443/v1"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
    ("http://[::1]:9000", "http://[::1]:9000"),
])
def test_endpoint_is_redacted(url, shown):
    assert redact(url) == shown


def test_append_is_atomic_append_only_and_reads_back(tmp_path):
    first, second = record(date="2026-11-29T10:00:00Z"), record(tps=70.0, verdict="regression",
                                                                 date="2026-11-29T11:00:00Z")
    path = append(tmp_path, first)
    before = path.read_text()
    append(tmp_path, second)
    after = path.read_text()
    assert after.startswith(before) and after.count("- app: lucedflashqwen36one") == 2
    assert [r.verdict for r in history(tmp_path, "lucedflashqwen36one")] == ["pass", "regression"]
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in path.parent.iterdir()) == ["lucedflashqwen36one.yaml"]


def test_a_bad_ledger_row_names_file_and_line(tmp_path):
    path = append(tmp_path, record())
    path.write_text(path.read_text().replace("verdict: pass", "verdict: great"))
    with pytest.raises(CatalogError) as err:
        history(tmp_path, "lucedflashqwen36one")
    message = str(err.value)
    assert "lucedflashqwen36one.yaml:" in message and "0.verdict" in message
    line = int(message.split(".yaml:")[1].split(":")[0])
    assert path.read_text().splitlines()[line - 1].strip().startswith("verdict:")


def test_a_row_written_before_the_identity_fields_still_loads(tmp_path):
    """Backwards compatible: the ledger rows of earlier releases have none of the new fields."""
    folder = tmp_path / "ledger"
    folder.mkdir()
    (folder / "lucedflashqwen36one.yaml").write_text(
        "- app: lucedflashqwen36one\n  endpoint: http://127.0.0.1:8000\n  chart_version: 1.4.4\n"
        "  image: docker.io/aamsellem/lucebox-dflash:v1.9.0\n  date: '2026-11-29T10:00:00Z'\n  runs: []\n"
        "  tokens_per_s: 88.0\n  acceptance: null\n  baseline_tokens_per_s: null\n  verdict: pass\n  reasons: []\n")
    (row,) = history(tmp_path, "lucedflashqwen36one")
    assert row.identity is None and row.chart_content is None and row.accepted_baseline is False
    assert row.image_source is None and row.identity_matched == ()


def test_record_dates_are_utc_stamps():
    assert record().when == dt.datetime(2026, 11, 29, 10, tzinfo=dt.UTC)
    with pytest.raises(ValueError):
        record(date="yesterday")


# --- catalog list ------------------------------------------------------------------------------

def test_list_shows_the_last_smoke(catalog_copy, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")
    append(catalog_copy, record(tps=88.0, date="2026-11-29T10:00:00Z"))
    append(catalog_copy, record(tps=69.0, verdict="regression", date="2026-11-29T11:00:00Z"))
    code, out, _ = run_cli(["list", "--json", "--catalog", str(catalog_copy)], capsys)
    rows = {r["name"]: r for r in json.loads(out)}
    luce = rows["lucedflashqwen36one"]
    assert code == 0 and {"name", "title", "model", "stack", "context", "version", "status", "tokens_per_s",
                          "measured"} < set(luce)
    assert (luce["smoke_verdict"], luce["smoke_tokens_per_s"], luce["smoke_date"]) == (
        "regression", 69.0, "2026-11-29T11:00:00Z")
    assert rows["gemma4e2bone"]["smoke_verdict"] is None
    code, out, _ = run_cli(["list", "--catalog", str(catalog_copy)], capsys)
    assert code == 0 and "regression 69.0" in out


def test_a_predicted_baseline_judges_with_its_own_band():
    """issue 41: with no accepted smoke and no benchmark, the speed model's prediction is the baseline, and its band
    (wider than the smoke tolerance) decides what a regression is."""
    from generator.smoke.verdict import Baseline, judge

    predicted = Baseline(100.0, "speed model, fitted for gqa/dense on Hopper, ±20%", 0.20)
    assert judge(85.0, [], predicted) == ("pass", [])  # 15 % under: inside the band, though over the 10 % tolerance
    verdict, reasons = judge(75.0, [], predicted)
    assert verdict == "regression" and "speed model" in reasons[0] and "tolerance is 20%" in reasons[0]
    assert judge(85.0, [], Baseline(100.0, "benchmark 2026-05-04"))[0] == "regression"  # a measured one keeps 10 %
