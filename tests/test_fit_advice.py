"""FIT001's advice is computed, not templated (issue 42): it names the constraint that binds (the model's maximum
context, the stated cap `gpu_memory_mib`, the context, the weights) and a number that works. Each test applies the
advice to the app file and checks again: the app then passes. The market fixture's llama.cpp app (Qwen3.6 35B-A3B,
16 GiB of weights, a 262,144-token maximum) on the Olares One."""

from __future__ import annotations

import re

import pytest

from support.checks import check, findings, set_app

APP = "llamacppqwen36a3bone"
MAXIMUM = 262_144


def _fit001(capsys, catalog) -> dict:
    code, data = check(capsys, catalog, APP)
    fit = findings(data, "FIT001", APP)
    assert code == 1 and len(fit) == 1 and fit[0]["severity"] == "error", findings(data)
    return fit[0]


def _number(fix: str, pattern: str) -> int:
    match = re.search(pattern, fix)
    assert match is not None, fix
    return int(match.group(1).replace(",", ""))


def _passes(capsys, catalog) -> None:
    code, data = check(capsys, catalog, APP)
    assert code == 0 and not [f for f in findings(data) if f["severity"] == "error"], findings(data)


def test_a_stated_cap_under_the_weights_is_the_constraint_named_and_raising_it_passes(capsys, catalog_copy):
    """The issue's first case: gpu_memory_mib 16,000 with f16 KV. Smaller weights or a smaller KV type is not the
    fix: the weights alone exceed the stated cap."""
    set_app(catalog_copy, APP, kv_cache_type="f16", gpu_memory_mib=16000)
    fix = _fit001(capsys, catalog_copy)["fix"]
    assert "gpu_memory_mib 16,000" in fix and "weights alone" in fix and "smaller weights" not in fix, fix
    cap = _number(fix, r"raise gpu_memory_mib to ([\d,]+)")
    set_app(catalog_copy, APP, gpu_memory_mib=cap)
    _passes(capsys, catalog_copy)
    set_app(catalog_copy, APP, gpu_memory_mib=None)  # "or leave it out"
    _passes(capsys, catalog_copy)


def test_a_context_above_the_model_s_maximum_is_never_advised(capsys, catalog_copy):
    """The issue's second case: 1M tokens. The advice is the model's maximum, not a larger context that would fit;
    ENG010 is the error, FIT001 follows it (one error per cause)."""
    set_app(catalog_copy, APP, context_length=1_048_576, gpu_memory_mib=None,
            description="Qwen3.6 35B-A3B (MoE, 3 B active) via upstream llama.cpp, optimized for Olares One.")
    code, data = check(capsys, catalog_copy, APP)
    assert code == 1 and [f["rule"] for f in findings(data) if f["severity"] == "error"] == ["ENG010"]
    fit = findings(data, "FIT001", APP)[0]
    assert fit["severity"] == "info" and "(after the error above: ENG010" in fit["message"]
    fix = fit["fix"]
    assert "maximum" in fix, fix
    tokens = _number(fix, r"the context to at most ([\d,]+)")
    assert tokens <= MAXIMUM
    set_app(catalog_copy, APP, context_length=tokens)
    _passes(capsys, catalog_copy)


@pytest.mark.parametrize("context", [MAXIMUM * 2, MAXIMUM + 1024, 700_000])
def test_every_advised_context_is_within_the_maximum_and_fits(capsys, catalog_copy, context):
    set_app(catalog_copy, APP, context_length=context, kv_cache_type="f16", gpu_memory_mib=20000,
            description="Qwen3.6 35B-A3B (MoE, 3 B active) via upstream llama.cpp, optimized for Olares One.")
    code, data = check(capsys, catalog_copy, APP)
    fix = findings(data, "FIT001", APP)[0]["fix"]
    tokens = _number(fix, r"the context to at most ([\d,]+)")
    assert tokens <= MAXIMUM, fix
    changes: dict[str, object] = {"context_length": tokens}
    if "raise gpu_memory_mib to" in fix:
        changes["gpu_memory_mib"] = _number(fix, r"raise gpu_memory_mib to ([\d,]+)")
    set_app(catalog_copy, APP, **changes)
    _passes(capsys, catalog_copy)


def test_when_the_context_binds_the_largest_that_fits_is_advised(capsys, catalog_copy):
    """f32 KV at the model's maximum does not fit the device at any cap: the context is lowered to what fits."""
    set_app(catalog_copy, APP, context_length=MAXIMUM, kv_cache_type="f32", gpu_memory_mib=None,
            description="Qwen3.6 35B-A3B (MoE, 3 B active) via upstream llama.cpp, optimized for Olares One.")
    code, data = check(capsys, catalog_copy, APP)
    fit = findings(data, "FIT001", APP)
    if not fit or fit[0]["severity"] != "error":
        pytest.skip("f32 KV fits at the maximum on this fixture")
    fix = fit[0]["fix"]
    tokens = _number(fix, r"lower the context to at most ([\d,]+)")
    assert 0 < tokens < MAXIMUM and "the most that fits" in fix
    set_app(catalog_copy, APP, context_length=tokens)
    _passes(capsys, catalog_copy)


def test_when_the_weights_bind_the_advice_says_how_small_they_must_be(capsys, catalog_copy):
    """Room left for a speech stack (gpu_room) keeps the app under 16 GB: the fixture's 20 GB of weights cannot fit at
    any context or cap, so the advice is the weights' size, not a context."""
    set_app(catalog_copy, APP, gpu_memory_mib=None, gpu_room={"mib": 8000, "beside": "a speech stack", "source": "this test"})
    code, data = check(capsys, catalog_copy, APP)
    fit = [f for f in findings(data, "FIT001", APP) if f["severity"] == "error"]
    assert code == 1 and fit, findings(data)
    fix = fit[0]["fix"]
    assert "context" not in fix.split("(`catalog explain")[0].replace("every context", ""), fix
    assert _number(fix, r"use weights of at most ([\d,]+) MiB") < 16_500, fix
