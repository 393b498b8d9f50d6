"""Engine/stack rules: docs/domain.md crash rules 2 (TurboQuant + CUDA graphs + spec decode on upstream vLLM),
4 (xxhash) and 6 (vision + MTP on the atomic fork), plus the stack capabilities each app needs.
Each crash is applied through the app's `extra_args`, `env` or typed field on a copy of the embedded catalog."""

from __future__ import annotations

from ruamel.yaml import YAML

from support.catalogs import edit_yaml
from support.checks import A3B, DENSE, E2B, E4B, FAST, G26, LONG, add_args, app_doc, check, findings, line_of, one, set_app


def test_xxhash_on_the_genesis_image(catalog_copy, capsys):
    add_args(catalog_copy, FAST, "--prefix-caching-hash-algo", "xxhash")
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "ENG001")
    assert code == 1 and f["severity"] == "error"
    assert f["message"].startswith("`--prefix-caching-hash-algo xxhash` (from extra_args) needs the xxhash Python "
                                   "package, which docker.io/aamsellem/vllm-qwen36-blackwell:0.20.0-genesis-v3 lacks")
    assert f["line"] == line_of(catalog_copy, FAST, "- --prefix-caching-hash-algo")


def test_turboquant_spec_graphs_on_upstream_vllm(catalog_copy, capsys):
    """The Fast settings on the upstream nightly: capture crash, and the workspace lock without P22 + P38."""
    set_app(catalog_copy, FAST, stack="vllm-nightly", genesis_patches=None)
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "ENG002")
    assert code == 1
    assert "`--kv-cache-dtype turboquant_k8v4` (from kv_cache_type)" in f["message"]
    assert "speculative decoding (mtp, from speculative)" in f["message"]
    assert "query_start_loc.tolist()" in f["message"] and "--enforce-eager" in f["fix"]
    assert "Workspace is locked" in one(data, "ENG003")["message"]


def test_enforce_eager_is_the_upstream_workaround(catalog_copy, capsys):
    set_app(catalog_copy, FAST, stack="vllm-nightly", genesis_patches=None)
    add_args(catalog_copy, FAST, "--enforce-eager")
    code, data = check(capsys, catalog_copy, FAST)
    assert not findings(data, "ENG002")
    assert findings(data, "ENG003")  # eager mode does not pre-allocate the TurboQuant workspaces


def test_turboquant_via_extra_args_on_the_e4b_nightly(catalog_copy, capsys):
    add_args(catalog_copy, E4B, "--kv-cache-dtype", "turboquant_k8v4")
    code, data = check(capsys, catalog_copy, E4B)
    f = one(data, "ENG002")
    assert code == 1 and "`--kv-cache-dtype turboquant_k8v4` (from extra_args)" in f["message"]


def test_genesis_without_p65_or_p67_crashes_like_upstream(catalog_copy, capsys):
    set_app(catalog_copy, FAST, genesis_patches=["P60", "P62", "P64", "P66"])
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "Genesis without P65/P67" in one(data, "ENG002")["message"]


def test_vision_with_mtp_on_the_atomic_fork(catalog_copy, capsys):
    add_args(catalog_copy, G26, "--mmproj", "/models/unsloth/gemma-4-26B-A4B-it-GGUF/mmproj-F16.gguf")
    code, data = check(capsys, catalog_copy, G26)
    f = one(data, "ENG006")
    assert code == 1
    assert "`--mmproj /models/unsloth/gemma-4-26B-A4B-it-GGUF/mmproj-F16.gguf` (from extra_args)" in f["message"]
    assert "docker.io/aamsellem/llamacpp-atomic-mtp:0.1.0" in f["message"]


def test_vision_typed_field_with_mtp_on_the_atomic_fork(catalog_copy, capsys):
    path = catalog_copy / "models" / "gemma4-e2b.yaml"
    yaml = YAML(typ="rt")
    model = yaml.load(path.read_text(encoding="utf-8"))
    model["mmproj"] = {"quant": "f16", "format": "gguf", "repo": "unsloth/gemma-4-E2B-it-GGUF", "file": "mmproj-F16.gguf",
                       "size_gib": 0.9, "sources": [{"ref": "test fixture"}]}
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(model, fh)
    set_app(catalog_copy, E2B, vision=True)
    code, data = check(capsys, catalog_copy, E2B)
    assert code == 1 and "does not wire the vision projector" in one(data, "ENG006")["message"]


def test_turbo_cache_on_upstream_llamacpp(catalog_copy, capsys):
    set_app(catalog_copy, LONG, kv_cache_type="turbo3")
    code, data = check(capsys, catalog_copy, LONG)
    f = one(data, "ENG004")
    assert code == 1 and "`turbo3` (from kv_cache_type)" in f["message"]


def test_turboquant_on_vllm_without_it(catalog_copy, capsys):
    set_app(catalog_copy, DENSE, kv_cache_type="turboquant_k8v4")
    code, data = check(capsys, catalog_copy, DENSE)
    assert code == 1 and "vllm/vllm-openai:v0.19.1-cu130" in one(data, "ENG004")["message"]


def test_turboquant_hybrid_needs_39931(catalog_copy, capsys):
    path = catalog_copy / "stacks" / "vllm-nightly.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("turboquant_hybrid, ", ""), encoding="utf-8")
    set_app(catalog_copy, FAST, stack="vllm-nightly", genesis_patches=None)
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "NotImplementedError" in one(data, "ENG005")["message"]


def test_context_above_the_model_maximum(catalog_copy, capsys):
    add_args(catalog_copy, E4B, "--max-model-len", "262144")
    code, data = check(capsys, catalog_copy, E4B)
    f = one(data, "ENG010")
    assert code == 1 and "context 262,144 (from extra_args)" in f["message"] and "131,072" in f["message"]


def test_auto_tool_choice_without_parser(catalog_copy, capsys):
    args = [a for a in app_doc(catalog_copy, FAST)["extra_args"] if a not in ("--tool-call-parser", "qwen3_coder")]
    set_app(catalog_copy, FAST, extra_args=args)
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "ENG011")
    assert code == 1 and "`--enable-auto-tool-choice` (from extra_args)" in f["message"]


def test_quantized_v_cache_without_flash_attention(catalog_copy, capsys):
    args = ["off" if a == "auto" else a for a in app_doc(catalog_copy, A3B)["extra_args"]]
    set_app(catalog_copy, A3B, extra_args=args)
    code, data = check(capsys, catalog_copy, A3B)
    f = one(data, "ENG012")
    assert code == 1 and "V cache `q4_0` (from kv_cache_type)" in f["message"] and "`--flash-attn off`" in f["message"]


def test_mtp_on_weights_without_the_mtp_head(catalog_copy, capsys):
    set_app(catalog_copy, LONG, quantization="q4km")
    code, data = check(capsys, catalog_copy, LONG)
    assert code == 1 and "has no MTP weights" in one(data, "ENG014")["message"]


def test_unrecorded_image_warns(catalog_copy, capsys):
    code, data = check(capsys, catalog_copy, "lucedflashqwen36one")
    assert one(data, "ENG013")["severity"] == "warning"


def test_beellama_has_turbo3_but_not_buuns_later_codecs(catalog_copy, capsys):
    """BeeLlama's kv_cache_types (Anbeeld/beellama.cpp@0ef12a52 common/arg.cpp:389-404) stop at turbo2/3/4 and the
    two TCQ types; buun's later turbo8 and vbr are not among them."""
    edit_yaml(catalog_copy / "stacks" / "buun-dflash.yaml", fork="beellama")
    set_app(catalog_copy, "dflashqwen36one", kv_cache_type="turbo3")
    code, data = check(capsys, catalog_copy, "dflashqwen36one")
    assert not findings(data, "ENG004")
    set_app(catalog_copy, "dflashqwen36one", kv_cache_type="turbo8")
    code, data = check(capsys, catalog_copy, "dflashqwen36one")
    assert code == 1 and "`turbo8` (from kv_cache_type)" in one(data, "ENG004")["message"]
