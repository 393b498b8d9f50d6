"""The vLLM path of `catalog smoke`: `max_model_len` on the model card and acceptance from /metrics deltas.

vLLM cannot run on the test machines (no NVIDIA GPU), so the server here is a STAND-IN for vLLM: a tiny
local HTTP server speaking the few endpoints the smoke calls, the way vLLM answers them (docs/domain.md:
`/health` 200 with an empty body, model cards with `max_model_len`, SSE chunks without `timings`, a
final usage chunk). Its `/metrics` is a REAL vLLM capture (tests/fixtures/vllm_spec_decode_metrics.prom,
origin in its header) whose two `_total` counters the stand-in advances after each completion, as
vLLM's counters move during a request.
"""

from __future__ import annotations


import pytest

from generator.catalog import load_catalog
from generator.smoke.run import SmokeOptions, Target, measure

from support.catalogs import MARKET_CATALOG
from support.vllm_standin import vllm_stand_in



@pytest.fixture(scope="module")
def fast() -> Target:
    return Target.of(load_catalog(MARKET_CATALOG).apps["vllmqwen36turbo27bone"])


REPO = "Lorbus/Qwen3.6-27B-int4-AutoRound"  # the Fast app's weights (catalog: qwen36-27b int4-autoround)


def test_acceptance_comes_from_metrics_deltas(fast):
    with vllm_stand_in(max_model_len=131072, drafted_per_request=90, accepted_per_request=54,
                       model="qwen3.6-27b", root=REPO, version="0.20.0") as url:
        result = measure(fast, url, SmokeOptions(runs=3, max_tokens=64, timeout_s=10))
    assert result.failures == [] and result.notes == []
    assert result.identity is not None and result.identity.engine == "vllm"
    assert (result.identity.model_path, result.identity.engine_version) == (REPO, "0.20.0")
    assert result.identity.said_by == ("/v1/models", "/version")
    assert result.matched == ["engine", "model", "context"]
    assert result.served_context == 131072
    assert [r.completion_tokens for r in result.runs] == [48, 48, 48]
    assert [r.acceptance for r in result.runs] == [pytest.approx(0.6)] * 3
    assert result.acceptance == pytest.approx(0.6) and result.tokens_per_s > 0


def test_context_and_silent_speculation_are_failures(fast):
    with vllm_stand_in(max_model_len=88704, drafted_per_request=0, accepted_per_request=0,
                       model="qwen3.6-27b", root=REPO) as url:
        result = measure(fast, url, SmokeOptions(runs=2, max_tokens=64, timeout_s=10))
    assert result.failures == [
        "the server's context is 88,704 tokens but the app's context_length is 131,072",
        "speculative decoding (mtp) is configured but the server drafted no tokens",
    ]


def test_wrong_served_name_is_a_failure(fast):
    with vllm_stand_in(max_model_len=131072, drafted_per_request=9, accepted_per_request=3,
                       model="Qwen/Qwen3.6-27B", root=REPO) as url:
        result = measure(fast, url, SmokeOptions(runs=1, max_tokens=64, timeout_s=10))
    assert result.failures == ["the served model 'qwen3.6-27b' is not listed by /v1/models (it lists "
                               "Qwen/Qwen3.6-27B); check the served model name / alias"]


def test_another_model_or_vllm_version_fails_naming_both():
    """vllmqwen36dense27bone runs the upstream image vllm/vllm-openai:v0.19.1-cu130: its tag carries the version."""
    dense = Target.of(load_catalog(MARKET_CATALOG).apps["vllmqwen36dense27bone"])
    with vllm_stand_in(max_model_len=75000, drafted_per_request=9, accepted_per_request=3,
                       model="qwen3.6-27b", root="Qwen/Qwen3.6-27B-FP8", version="0.20.1") as url:
        result = measure(dense, url, SmokeOptions(runs=1, max_tokens=64, timeout_s=10))
    assert result.failures[:2] == [
        "model: served Qwen/Qwen3.6-27B-FP8; the chart serves Lorbus/Qwen3.6-27B-int4-AutoRound",
        "engine version: served 0.20.1; the chart's image vllm/vllm-openai:v0.19.1-cu130 carries 0.19.1"]
    assert result.matched == ["engine", "context"]
