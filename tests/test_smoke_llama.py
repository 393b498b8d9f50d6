"""`catalog smoke` end to end against a REAL llama.cpp llama-server (tiny random GGUFs, real draft model).

Cases: a normal server passes with real figures (acceptance from `timings.draft_n`); the same server
behind a pacing proxy (a slower engine, the server still real) is a regression against the ledger's
last pass; the Lucebox 88.5 -> 69 t/s drop comes out as a regression against its recorded benchmark;
a model that answers one token over and over fails with HTTP 200. Hanging and broken servers are in
test_smoke_http.py.
"""

from __future__ import annotations

import re

import datetime as dt

import pytest

from generator.smoke.ledger import history

from support.catalogs import edit_app
from support.smoke import llama_server, pacing_proxy, run_cli, run_json, write_models

pytestmark = pytest.mark.needs_llama_server

KEYS = {"app", "endpoint", "chart_version", "runs", "tokens_per_s", "acceptance", "baseline_tokens_per_s",
        "verdict", "reasons", "identity", "identity_matched", "image_source", "chart_content", "tolerance",
        "runs_requested", "prompt_sha256", "accepted_baseline"}
RUN_KEYS = {"cold", "ttft_s", "completion_tokens", "tokens_per_s", "e2e_tokens_per_s", "acceptance"}
LONG_CONTEXT = 131072  # the "Fast" and "Long" apps; a tiny model's KV for it is ~134 MB
LONG_FILE = "Qwen3.6-27B-Q4_K_M-mtp.gguf"  # the Long app's GGUF (catalog: qwen36-27b q4km-mtp)


@pytest.fixture(scope="module")
def long_server(tmp_path_factory):
    """One real server answering as the Long app (its alias and its GGUF file name), context 128K, draft model on."""
    folder = tmp_path_factory.mktemp("llama-long")
    models = write_models(folder, context=LONG_CONTEXT, main_name=LONG_FILE)
    with llama_server(models, aliases=["qwen3.6-27b-mtp", "qwen3.6-27b"], context=LONG_CONTEXT,
                      log_dir=folder) as server:
        yield server


def smoke(catalog, app: str, endpoint: str, capsys, *extra: str):
    return run_json(["smoke", app, "--endpoint", endpoint, "--catalog", str(catalog), "--runs", "3",
                     "--max-tokens", "48", "--timeout", "60", *extra], capsys)


def test_normal_server_passes_with_real_figures(catalog_copy, long_server, capsys):
    url = long_server.url.replace("http://", "http://maintainer:hunter2@") + "/v1?api_key=secret"
    code, out = smoke(catalog_copy, "llamacppqwen36mtpone", url, capsys, "--tolerance", "0.95")
    assert code == 0, out
    assert set(out) >= KEYS and out["verdict"] == "pass" and out["reasons"] == []
    assert out["endpoint"] == long_server.url + "/v1"  # credentials and query never recorded
    assert out["chart_version"] == "1.0.4" and out["baseline_tokens_per_s"] == 65.0
    assert out["identity"]["engine"] == "llamacpp" and out["identity"]["model_path"].endswith("/" + LONG_FILE)
    assert out["identity_matched"] == ["engine", "model", "context"] and out["image_source"] == "catalog"
    assert out["tolerance"] == 0.95 and out["runs_requested"] == 3 and out["accepted_baseline"] is False
    assert out["chart_content"].startswith("sha256:") and out["prompt_sha256"].startswith("sha256:")
    runs = out["runs"]
    assert [r["cold"] for r in runs] == [True, False, False] and all(set(r) == RUN_KEYS for r in runs)
    assert all(r["completion_tokens"] == 48 and r["tokens_per_s"] > 0 and r["e2e_tokens_per_s"] > 0 for r in runs)
    assert all(r["acceptance"] is not None and 0 <= r["acceptance"] <= 1 for r in runs)  # draft_n > 0
    warm = [r["e2e_tokens_per_s"] for r in runs[1:]]
    assert out["tokens_per_s"] == pytest.approx(sum(warm) / 2, abs=0.01)
    rows = history(catalog_copy, "llamacppqwen36mtpone")
    assert len(rows) == 1 and rows[0].model_dump(mode="json") == out
    assert "hunter2" not in (catalog_copy / "ledger" / "llamacppqwen36mtpone.yaml").read_text()


def test_slowed_server_is_a_regression_against_the_last_pass(catalog_copy, long_server, capsys):
    edit_app(catalog_copy, "llamacppqwen36mtpone", benchmarks=None)  # the ledger is the only baseline
    code, unaccepted = smoke(catalog_copy, "llamacppqwen36mtpone", long_server.url, capsys)
    assert code == 0 and unaccepted["accepted_baseline"] is False
    code, first = smoke(catalog_copy, "llamacppqwen36mtpone", long_server.url, capsys, "--accept-baseline")
    assert code == 0 and first["baseline_tokens_per_s"] is None and first["accepted_baseline"] is True
    slow_rate = min(20.0, first["tokens_per_s"] / 4)
    with pacing_proxy(long_server.url, slow_rate) as slow:
        code, second = smoke(catalog_copy, "llamacppqwen36mtpone", slow, capsys, "--runs", "2", "--max-tokens", "24")
    assert code == 1 and second["verdict"] == "regression"
    assert second["baseline_tokens_per_s"] == first["tokens_per_s"]
    assert second["tokens_per_s"] < slow_rate * 1.10  # 24 tokens over 23 paced gaps
    assert "below the baseline" in second["reasons"][0] and first["date"] in second["reasons"][0]
    assert [r.verdict for r in history(catalog_copy, "llamacppqwen36mtpone")] == ["pass", "pass", "regression"]


def test_lucebox_88_5_to_69_is_a_regression_end_to_end(catalog_copy, tmp_path, capsys):
    """The field notes' case: baseline 88.5 t/s (v1.4.4, May 4); the rebuilt engine serves 69 t/s.

    The engine is the real llama-server behind a pacing proxy that releases 69 tokens/s."""
    edit_app(catalog_copy, "lucedflashqwen36one", benchmarks=[{
        "tokens_per_s": 88.5, "runs": [87.05, 89.54, 88.88], "date": dt.date(2026, 5, 4), "image": "Lucebox v1.4.4",
        "method": "3 runs x ~800 tokens", "source": "docs/domain.md"}])
    models = write_models(tmp_path, context=32768, main_name="Qwen3.6-27B-Q4_K_M.gguf")
    with llama_server(models, aliases=["qwen3.6-27b-dflash"], context=32768, log_dir=tmp_path) as server, \
            pacing_proxy(server.url, 69.0) as rebuilt:
        code, out = smoke(catalog_copy, "lucedflashqwen36one", rebuilt, capsys, "--runs", "2")
    assert code == 1 and out["verdict"] == "regression", out
    # the proxy releases at most 69 tokens/s (less if this machine's server is slower still); the
    # slack covers 47 gaps for 48 tokens and the client's scheduling jitter on a loaded machine
    assert out["baseline_tokens_per_s"] == 88.5 and 0 < out["tokens_per_s"] <= 72.0
    assert all(r["tokens_per_s"] <= 69.0 * 1.10 for r in out["runs"]), out["runs"]
    assert "below the baseline 88.5 t/s (benchmark 2026-05-04, Lucebox v1.4.4)" in out["reasons"][0]


def test_a_model_repeating_one_token_fails_with_http_200(catalog_copy, tmp_path, capsys):
    models = write_models(tmp_path, context=65536, dominant="\u2581ok", main_name="Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf")
    with llama_server(models, aliases=["qwen3.6-35b-a3b"], context=65536, log_dir=tmp_path) as server:
        code, out = smoke(catalog_copy, "llamacppqwen36a3bone", server.url, capsys)
    assert code == 1 and out["verdict"] == "fail"
    assert all(r["completion_tokens"] == 48 for r in out["runs"])  # the server answered every run
    # the stack pins ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740; the test build says its own (b11434, or b0
    # for a build made before .ci/build-llama-server.sh set the number)
    assert re.fullmatch(r"engine version: served b\d+-\S+; the chart's image "
                        r"ghcr\.io/ggml-org/llama\.cpp:server-cuda13-b8740 carries b8740", out["reasons"][0])
    assert len(out["reasons"]) == 4
    assert all("degenerate output: one token ' ok'" in r for r in out["reasons"][1:])


def test_table_output_and_no_record(catalog_copy, long_server, capsys):
    code, out, _ = run_cli(["smoke", "llamacppqwen36mtpone", "--endpoint", long_server.url, "--catalog",
                            str(catalog_copy), "--runs", "2", "--max-tokens", "16", "--tolerance", "0.95",
                            "--no-record"], capsys)
    assert code == 0
    assert "smoke llamacppqwen36mtpone 1.0.4" in out and "1 (cold)" in out and "PASS" in out
    assert "baseline 65.0 t/s" in out
    assert not (catalog_copy / "ledger").exists()
