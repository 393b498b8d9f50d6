"""FLAG rules: each one fires on a good app of the market fixture given one bad flag or value, names the flag,
the value and where it came from, and says exactly what to change. That the embedded catalog itself has no FLAG
error: tests/test_embedded_catalog.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.catalog import load_catalog
from generator.core.findings import Finding
from generator.rules import REGISTRY, all_rules, context, run_rules

from support.catalogs import edit_app, edit_yaml
from support.flags import generate_llamacpp_table


def flag_findings(catalog: Path, app: str) -> list[Finding]:
    cat = load_catalog(catalog)
    return [f for f in run_rules(context(cat.apps[app], cat)) if f.rule.startswith("FLAG")]


def app_extra_args(catalog: Path, app: str) -> list[str]:
    return list(YAML(typ="safe").load((catalog / "apps" / f"{app}.yaml").read_text()).get("extra_args", []))


def with_extra(catalog: Path, app: str, *extra: str) -> list[Finding]:
    """The app's own extra_args plus `extra`, then its FLAG findings."""
    edit_app(catalog, app, extra_args=[*app_extra_args(catalog, app), *extra])
    return flag_findings(catalog, app)


def only(findings: list[Finding], rule: str) -> Finding:
    hits = [f for f in findings if f.rule == rule and f.severity == "error"]
    assert len(hits) == 1, f"expected one {rule} error, got:\n" + "\n".join(map(str, findings))
    return hits[0]


def extra_args_line(catalog: Path, app: str) -> int:
    lines = (catalog / "apps" / f"{app}.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith("extra_args:"))


def test_rules_are_registered():
    all_rules()
    assert {"FLAG000", "FLAG001", "FLAG002", "FLAG003", "FLAG004", "FLAG005"} <= set(REGISTRY)


def test_typo_names_the_closest_flag_and_the_line(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmqwen36turbo27bone", "--max-model-lenn", "4096"), "FLAG001")
    assert "`--max-model-lenn`" in found.message and "from app.extra_args" in found.message
    assert "did you mean `--max-model-len`" in found.message
    assert found.fix == "replace `--max-model-lenn` with `--max-model-len`"
    assert found.file.endswith("apps/vllmqwen36turbo27bone.yaml")
    assert found.line >= extra_args_line(catalog_copy, "vllmqwen36turbo27bone")


def test_llamacpp_does_not_read_flag_equals_value(catalog_copy):
    found = only(with_extra(catalog_copy, "llamacppqwen36a3bone", "--threads=8"), "FLAG001")
    assert "`--threads=8`" in found.message and "--flag=value" in found.message
    assert found.fix == "write `--threads 8` (two arguments)"


def test_vllm_reads_flag_equals_value_underscores_and_O3(catalog_copy):
    findings = with_extra(catalog_copy, "vllmqwen36turbo27bone", "--max_num_seqs=2", "--enforce-eager", "-O3")
    assert [f for f in findings if f.severity == "error"] == []


def test_stray_positional_argument(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmgemma4e4bone", "--enforce-eager", "yes"), "FLAG004")
    assert "`--enforce-eager` is a switch" in found.message and "`yes`" in found.message
    assert found.fix == "remove `yes` after `--enforce-eager`"


def test_prefix_caching_hash_algo_outside_choices(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmqwen36turbo27bone", "--prefix-caching-hash-algo", "bogus"), "FLAG002")
    assert "`--prefix-caching-hash-algo bogus`" in found.message
    assert found.fix == "use one of: sha256, sha256_cbor"  # the Genesis image lacks xxhash (docs/domain.md crash rule 4)


def test_xxhash_rejected_on_genesis_only(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmqwen36turbo27bone", "--prefix-caching-hash-algo", "xxhash"), "FLAG002")
    assert "xxhash" in found.message
    upstream = with_extra(catalog_copy, "vllmgemma4e4bone", "--prefix-caching-hash-algo", "xxhash")
    assert [f for f in upstream if f.severity == "error"] == []


def test_turboquant_kv_dtype_not_in_vllm_0_19_1(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmqwen36dense27bone", "--kv-cache-dtype", "turbo3"), "FLAG002")
    assert "`--kv-cache-dtype turbo3`" in found.message and "vllm-0-19-1" in found.message
    assert "fp8_e5m2" in found.fix and "turboquant" not in found.fix


def test_app_field_value_points_at_the_field(catalog_copy):
    edit_app(catalog_copy, "vllmqwen36dense27bone", kv_cache_type="turboquant_k8v4")
    found = only(flag_findings(catalog_copy, "vllmqwen36dense27bone"), "FLAG002")
    assert "from app.kv_cache_type" in found.message
    text = (catalog_copy / "apps" / "vllmqwen36dense27bone.yaml").read_text().splitlines()
    assert text[found.line - 1].startswith("kv_cache_type:")


def test_removed_draft_max_names_the_replacement(catalog_copy):
    found = only(with_extra(catalog_copy, "llamacppqwen36mtpone", "--draft-max", "3"), "FLAG003")
    assert "`--draft-max`" in found.message and "#22397" in found.message
    assert found.fix == "replace `--draft-max 3` with `--spec-draft-n-max 3`"


def test_atomic_fork_keeps_draft_max(catalog_copy):
    findings = flag_findings(catalog_copy, "gemma4e2bone")  # renders --draft-max 8 --draft-min 0
    assert [f for f in findings if f.severity == "error"] == []


def test_switch_given_a_value(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmgemma4e4bone", "--trust-remote-code=true"), "FLAG004")
    assert "`--trust-remote-code` is a switch" in found.message
    assert found.fix == "write `--trust-remote-code` without `=true`"


def test_flag_missing_its_value(catalog_copy):
    found = only(with_extra(catalog_copy, "llamacppqwen36a3bone", "--flash-attn"), "FLAG004")
    assert "`--flash-attn` needs a value but is followed by nothing" in found.message
    assert "on, off, auto" in found.fix


def test_value_swallowed_by_next_flag(catalog_copy):
    args = app_extra_args(catalog_copy, "llamacppqwen36a3bone")
    edit_app(catalog_copy, "llamacppqwen36a3bone", extra_args=["--ubatch-size", *args])
    found = only(flag_findings(catalog_copy, "llamacppqwen36a3bone"), "FLAG004")
    assert "followed by the flag `--batch-size`" in found.message


def test_invalid_json(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmgemma4e4bone", "--compilation-config", "{mode: 3}"), "FLAG005")
    assert "`--compilation-config`" in found.message and "not valid JSON" in found.message


def test_unknown_json_key(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmgemma4e4bone", "--speculative-config.num_speculative_token", "2"),
                 "FLAG005")
    assert "`num_speculative_token`" in found.message and "did you mean `num_speculative_tokens`" in found.message


def test_cudagraph_mode_and_method(catalog_copy):
    bad_mode = only(with_extra(catalog_copy, "vllmgemma4e4bone", "--compilation-config",
                               '{"cudagraph_mode": "PIECEWISEE"}'), "FLAG005")
    assert "cudagraph_mode `PIECEWISEE`" in bad_mode.message and "FULL_AND_PIECEWISE" in bad_mode.fix
    ok = with_extra(catalog_copy, "vllmqwen36turbo27bone", "--compilation-config.cudagraph_mode", "piecewise")
    assert [f for f in ok if f.severity == "error"] == []  # upper-cased by vLLM's validator


def test_speculative_method_not_in_image(catalog_copy):
    edit_app(catalog_copy, "vllmqwen36dense27bone", extra_args=["--speculative-config", '{"method": "dspark"}'])
    found = only(flag_findings(catalog_copy, "vllmqwen36dense27bone"), "FLAG005")
    assert "method `dspark`" in found.message and "mtp" in found.fix


def test_legacy_mtp_method_is_a_warning(catalog_copy):
    findings = with_extra(catalog_copy, "vllmqwen36dense27bone", "-sc", '{"method": "qwen3_5_mtp"}')
    warn = [f for f in findings if f.rule == "FLAG005"]
    assert len(warn) == 1 and warn[0].severity == "warning" and warn[0].fix == "set method to `mtp`"


def test_dotted_json_flag_checks_key_values(catalog_copy):
    found = only(with_extra(catalog_copy, "vllmqwen36turbo27bone", "--attention-config.flash_attn_version", "5"),
                 "FLAG005")
    assert "flash_attn_version `5`" in found.message


def test_stack_without_table(catalog_copy):
    edit_yaml(catalog_copy / "stacks" / "lucebox.yaml", flag_table=None)
    found = only(flag_findings(catalog_copy, "lucedflashqwen36one"), "FLAG000")
    assert "stack lucebox names no flag_table" in found.message and "flag_table" in found.fix


def test_broken_table_reports_its_file_and_line(catalog_copy):
    path = catalog_copy / "flags" / "lucebox.yaml"
    text = path.read_text()
    path.write_text(text.replace("  - name: --ddtree-budget\n    type: int", "  - name: --ddtree-budget\n    type: integer"))
    found = only(flag_findings(catalog_copy, "lucedflashqwen36one"), "FLAG000")
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "type: integer" in text)
    assert f"lucebox.yaml:{line}: flags.1.type" in found.message


def test_unknown_engine_env_var_is_a_warning(catalog_copy):
    edit_app(catalog_copy, "vllmgemma4e4bone", env={"VLLM_ALLOW_LONG_MAX_MODEL_LENN": "1"})
    warn = [f for f in flag_findings(catalog_copy, "vllmgemma4e4bone") if f.rule == "FLAG001"]
    assert len(warn) == 1 and warn[0].severity == "warning"
    assert "did you mean VLLM_ALLOW_LONG_MAX_MODEL_LEN" in warn[0].message


def test_env_value_outside_choices(catalog_copy):
    edit_app(catalog_copy, "lucedflashqwen36one", kv_cache_type="turbo3")
    errors = [f for f in flag_findings(catalog_copy, "lucedflashqwen36one") if f.severity == "error"]
    assert [f.rule for f in errors] == ["FLAG002", "FLAG002"]
    assert "env DFLASH27B_KV_K=turbo3 (from app.kv_cache_type)" in errors[0].message and "tq3_0" in errors[0].fix
    assert "DFLASH27B_KV_V=turbo3" in errors[1].message


def test_tables_load_lazily(catalog_copy):
    (catalog_copy / "flags" / "vllm-0-19-1.yaml").write_text("id: [broken\n")
    assert [f for f in flag_findings(catalog_copy, "lucedflashqwen36one") if f.severity == "error"] == []


@pytest.mark.needs_llama_server
def test_spec_type_mtp_on_an_upstream_table_after_22964(catalog_copy, upstream_help_table):
    shutil.copy(upstream_help_table, catalog_copy / "flags" / "llamacpp-new.yaml")
    edit_yaml(catalog_copy / "stacks" / "llamacpp-mtp.yaml", flag_table="llamacpp-new")
    found = only(flag_findings(catalog_copy, "llamacppqwen36mtpone"), "FLAG003")
    assert "`--spec-type mtp`" in found.message and "#22964" in found.message
    assert found.fix == "write `--spec-type draft-mtp`"


@pytest.fixture
def upstream_help_table(tmp_path) -> Path:
    """A table generated from the real llama-server build (its --help), renamed to id llamacpp-new."""
    return generate_llamacpp_table(tmp_path, "llamacpp-new")
