"""Consistency, status and memory-fit rules through `catalog check`."""

from __future__ import annotations

from support.checks import DENSE, FAST, G26, LONG, add_args, check, findings, one, set_app


def test_description_context_must_match(catalog_copy, capsys):
    set_app(catalog_copy, LONG, description="Qwen3.6 27B long context — llama.cpp with native MTP, 256K context.")
    code, data = check(capsys, catalog_copy, LONG)
    f = one(data, "CON003")
    assert code == 1 and "'256K'" in f["message"] and "131,072-token" in f["message"]


def test_context_override_in_extra_args_is_what_the_card_is_judged_against(catalog_copy, capsys):
    set_app(catalog_copy, LONG, extra_args=["--ctx-size", "65536"])
    code, data = check(capsys, catalog_copy, LONG)
    assert code == 1 and "65,536-token" in one(data, "CON003")["message"]


def test_vision_claim_on_a_text_only_app(catalog_copy, capsys):
    set_app(catalog_copy, G26, description="Gemma 4 26B-A4B (MoE) with vision and MTP speculative decoding, 64K context.")
    code, data = check(capsys, catalog_copy, G26)
    assert code == 1 and "promises vision but the engine runs text-only" in one(data, "CON004")["message"]


def test_mtp_claim_without_mtp(catalog_copy, capsys):
    set_app(catalog_copy, LONG, speculative=None)
    code, data = check(capsys, catalog_copy, LONG)
    assert code == 1 and "mentions MTP but the engine runs no speculative decoding" in one(data, "CON004")["message"]


def test_replacement_must_be_active(catalog_copy, capsys):
    set_app(catalog_copy, "dflashqwen36one", replaced_by=DENSE)
    code, data = check(capsys, catalog_copy, "dflashqwen36one")
    f = one(data, "STA002")
    assert code == 1 and f"replaced_by {DENSE} is deprecated itself" in f["message"]


def test_deprecated_apps_say_why(catalog_copy, capsys):
    code, data = check(capsys, catalog_copy, DENSE)
    f = one(data, "STA001")
    assert f["severity"] == "warning" and "Crash-loops on vanilla vLLM 0.19.1" in f["message"]
    assert "replaced by vllmqwen36turbo27bone" in f["message"]


def test_context_that_does_not_fit_fails_with_a_fix(catalog_copy, capsys):
    set_app(catalog_copy, FAST, context_length=262144,
            description="Qwen3.6 27B fastest stack — vLLM Turbo + Genesis, TurboQuant K8V4 KV and MTP, 256K context.")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "FIT001")
    assert code == 1 and f["severity"] == "error" and f["message"].startswith("FAIL at 262,144 tokens")
    tokens = int(f["fix"].split("at most ")[1].split(" tokens")[0].replace(",", ""))
    assert abs(tokens / 88_704 - 1) <= 0.03  # vLLM's own estimate (Fast v2.5.1, v2.5.7 upgradeDescription)


def test_fast_at_88000_is_tight_not_failing(catalog_copy, capsys):
    """Fast 2.5.7 went back to 88,000 tokens, under vLLM's 88,704 (tests/test_fit_budget.py has the 131,072 case)."""
    set_app(catalog_copy, FAST, context_length=88000,
            description="Qwen3.6 27B fastest stack — vLLM Turbo + Genesis, TurboQuant K8V4 KV and MTP, 88K context.")
    code, data = check(capsys, catalog_copy, FAST)
    fit = findings(data, "FIT001")
    assert code == 0
    assert all(f["severity"] == "warning" and f["message"].startswith("TIGHT") for f in fit)


def test_per_slot_context_on_a_fork_that_doubles_its_sequences(catalog_copy, capsys):
    """buun with DFlash runs 2 x --parallel sequences (server-context.cpp load_model): without --kv-unified each
    request gets half of the 32,000-token context, which is what a "16K" card promises."""
    app = "dflashqwen36one"
    set_app(catalog_copy, app, description="Qwen3.6 27B with buun DFlash speculative decoding, 16K per slot.")
    code, data = check(capsys, catalog_copy, app)
    assert not findings(data, "CON003")
    set_app(catalog_copy, app, description="Qwen3.6 27B with buun DFlash speculative decoding, 8K per slot.")
    code, data = check(capsys, catalog_copy, app)
    assert code == 1 and "'8K'" in one(data, "CON003")["message"]


def test_per_slot_context_does_not_apply_with_a_unified_kv_cache(catalog_copy, capsys):
    app = "dflashqwen36one"
    set_app(catalog_copy, app, description="Qwen3.6 27B with buun DFlash speculative decoding, 16K per slot.")
    add_args(catalog_copy, app, "--kv-unified")
    code, data = check(capsys, catalog_copy, app)
    assert code == 1 and "32,000-token" in one(data, "CON003")["message"]


def test_per_slot_context_needs_speculative_decoding(catalog_copy, capsys):
    app = "dflashqwen36one"
    set_app(catalog_copy, app, description="Qwen3.6 27B with buun llama.cpp, 16K per slot.", speculative=None)
    code, data = check(capsys, catalog_copy, app)
    assert "'16K'" in one(data, "CON003")["message"]
