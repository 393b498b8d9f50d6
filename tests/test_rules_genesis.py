"""Genesis rules: docs/domain.md crash rules 3 (P65 without P22 + P38) and 5 (P5B), names, conflicts, retired
patches, Genesis env where Genesis does not run. Settings go through the app's `env` or `genesis_patches`."""

from __future__ import annotations

from support.checks import E4B, FAST, add_env, check, findings, line_of, one, set_app


def test_p65_without_p38_is_the_workspace_lock_crash(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_LEGACY_P38="0")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "GEN004")
    assert code == 1 and f["severity"] == "error"
    assert "without P38 (`GENESIS_LEGACY_P38=0` (from env, P38))" in f["message"]
    assert "Workspace is locked" in f["message"]
    assert f["line"] == line_of(catalog_copy, FAST, "GENESIS_LEGACY_P38")


def test_p65_with_p22_disabled_through_the_sndr_opt_out(catalog_copy, capsys):
    add_env(catalog_copy, FAST, SNDR_DISABLE_P22="1")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "`SNDR_DISABLE_P22=1`" in one(data, "GEN004")["message"]


def test_sndr_name_wins_over_the_genesis_alias(catalog_copy, capsys):
    """SNDR_LEGACY_P38=1 keeps P38 on even though GENESIS_LEGACY_P38=0 (docs/domain.md)."""
    add_env(catalog_copy, FAST, GENESIS_LEGACY_P38="0", SNDR_LEGACY_P38="1")
    code, data = check(capsys, catalog_copy, FAST)
    assert not findings(data, "GEN004")


def test_p5b_alias_with_p38_on_24gb_fails(catalog_copy, capsys):
    """Fast 2.5.4 -> 2.5.5 (88K context): GENESIS_ENABLE_P5B_KV=1 OOMs at the first inference on the 24300 MiB cap."""
    set_app(catalog_copy, FAST, context_length=88000,
            description="Qwen3.6 27B fastest stack — vLLM Turbo + Genesis, TurboQuant K8V4 KV and MTP, 88K context.")
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P5B_KV="1")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "GEN005")
    assert code == 1
    assert "`GENESIS_ENABLE_P5B_KV=1` (from env, P5B)" in f["message"] and "24300 MiB cap" in f["message"]
    fit = one(data, "FIT001")
    assert fit["severity"] == "error" and fit["message"].startswith("FAIL") and "P5B" in fit["fix"]


def test_p5b_with_turboquant_4bit_nc(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P5B="1")
    set_app(catalog_copy, FAST, kv_cache_type="turboquant_4bit_nc")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "GEN006")
    assert code == 1 and "`--kv-cache-dtype turboquant_4bit_nc` (from kv_cache_type)" in f["message"]


def test_unknown_genesis_name_suggests_the_registry_name(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P65="1")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "GEN001")
    assert code == 1 and "`GENESIS_ENABLE_P65` (from env) is not a Genesis registry name" in f["message"]
    assert "GENESIS_ENABLE_P65_TURBOQUANT_SPEC_CG_DOWNGRADE" in f["fix"]


def test_tunables_and_opt_outs_are_known_names(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_BUFFER_MODE="shared", GENESIS_DISABLE_P5="0")
    code, data = check(capsys, catalog_copy, FAST)
    assert not findings(data, "GEN001")


def test_p65_conflicts_with_p67(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P67_TQ_MULTI_QUERY_KERNEL="1")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "GEN003")
    assert code == 1 and "P67" in f["message"] and "P65" in f["message"]


def test_p5b_requires_p5(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P5B="1", GENESIS_DISABLE_P5="1")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "requires P5" in one(data, "GEN002")["message"]


def test_retired_patch_warns(catalog_copy, capsys):
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P4="1")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "GEN007")
    assert f["severity"] == "warning" and "vllm#39931" in f["message"]


def test_genesis_env_on_upstream_vllm_has_no_effect(catalog_copy, capsys):
    add_env(catalog_copy, E4B, GENESIS_ENABLE_P65_TURBOQUANT_SPEC_CG_DOWNGRADE="1")
    code, data = check(capsys, catalog_copy, E4B)
    f = one(data, "GEN008")
    assert f["severity"] == "warning" and "does not run Genesis" in f["message"]
    assert not findings(data, "GEN001")  # names are judged only where Genesis runs
