"""The fit for the Nemotron-H (Mamba-2 + attention + MoE) and DeepSeek-V2-style MLA shapes, checked against a hand
computation from the sources docs/fit.md cites (llama.cpp b8740 = e34f0421544b42cae1a03bab528f571cf49814b0):

- Mamba-2 state per layer and sequence: src/llama-hparams.cpp n_embd_s() = ssm_d_state x ssm_d_inner and
  n_embd_r() = (ssm_d_conv - 1) x (ssm_d_inner + 2 x ssm_n_group x ssm_d_state), both f32
  (src/llama-model.cpp create_memory: recurrent_type_r/s GGML_TYPE_F32); d_inner = heads x head_dim.
- Nemotron-H KV: only the attention layers (create_memory's filter_attn: not recurrent and n_ff == 0).
- MLA: one K row of kv_lora_rank + qk_rope_head_dim values per token and layer, no V cache
  (src/llama-kv-cache.cpp `has_v = !is_mla`; convert_hf_to_gguf.py DeepseekV2Model: num_key_value_heads = 1,
  key_length = kv_lora_rank + qk_rope_head_dim).

The fixture catalog is tests/fixtures/catalog_arch (its models carry the geometry of the catalog's Nemotron 3 Nano
30B-A3B and GLM-4.7-Flash).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from generator.catalog import load_catalog
from generator.engines import engine_for
from generator.engines.settings import settings_for
from generator.fit.estimate import estimate
from generator.fit.llamacpp import COMPUTE_BASE_MIB, COMPUTE_PEAK_BY_MODEL, compute_formula, kv_parts
from generator.fit.memory import MIB, Geometry, recurrent_layer_bytes
from generator.fit.vllm import block_layout, kv_need_parts
from generator.schema import Architecture, AttentionGroup

from support.catalogs import FIXTURES

ARCH = FIXTURES / "catalog_arch"
Q4_0 = 18 / 32  # ggml block_q4_0: 32 values in 18 bytes

# The Nemotron 3 Nano 30B-A3B geometry by hand: d_inner 64 x 64 = 4096, d_state 128, 8 groups, kernel 4.
MAMBA_SSM = 128 * 4096  # n_embd_s
MAMBA_CONV = (4 - 1) * (4096 + 2 * 8 * 128)  # n_embd_r = 3 x 6144
MAMBA_LAYER_F32 = (MAMBA_SSM + MAMBA_CONV) * 4  # 2,170,880 B
MLA_LATENT = 512 + 64  # kv_lora_rank + qk_rope_head_dim


@pytest.fixture(scope="module")
def cat():
    return load_catalog(ARCH)


def _parts(r):
    s = settings_for(r, engine_for(r))
    return {name: (value, note) for name, value, note in kv_parts(r, s)}, s


def test_mamba2_layer_state_is_llamacpp_n_embd_r_plus_n_embd_s(cat):
    rec = cat.models["nemotron-3-nano-30b-a3b"].architecture.recurrent
    assert MAMBA_LAYER_F32 == 2_170_880
    assert recurrent_layer_bytes(rec, ssm_bytes=4, conv_bytes=4) == MAMBA_LAYER_F32


def test_llamacpp_mamba_app_state_and_kv(cat):
    """23 Mamba-2 layers x 1 slot of f32 state; KV for the 6 attention layers only (not the 23 MoE blocks)."""
    parts, s = _parts(cat.apps["mambalab"])
    assert s.parallel.value == 1
    state, note = parts["recurrent state"]
    assert state == 23 * MAMBA_LAYER_F32
    assert round(state / MIB, 2) == 47.62
    assert "23 Mamba-2 layers" in note
    kv, _ = parts["KV full attention"]
    assert kv == 6 * 2 * 128 * (Q4_0 + Q4_0) * 131072  # 1,728 B per token x 131,072 cells = 216 MiB
    assert kv / MIB == 216


def test_llamacpp_mla_caches_the_latent_in_k_only(cat):
    parts, _ = _parts(cat.apps["mlalab"])
    kv, note = parts["KV full attention"]
    assert kv == 47 * MLA_LATENT * Q4_0 * 32768  # 15,228 B per token, no V
    assert kv / MIB == 475.875
    assert "no V cache" in note
    # 18x less than 20 KV heads x head_dim 256 of K and V would take
    assert kv * 17 < 47 * 20 * 256 * (Q4_0 + Q4_0) * 32768


def test_llamacpp_mla_compute_buffer_copies_the_latent(cat):
    """The quantized-K f16 copy of the compute formula is one latent per cell under MLA, not K and V of each head."""
    r = cat.apps["mlalab"]
    s = settings_for(r, engine_for(r))
    mib, _ = compute_formula(r, s)
    ubatch = s.ubatch.value
    mask = 32768 * ubatch * 2
    attn, rest = COMPUTE_PEAK_BY_MODEL["glm47-flash"]  # the model's own fitted activation rates, KiB per token
    # the f16 copy of the latent (V is a view of K: one copy, ggml-cuda/fattn-common.cuh:63) at the attention node
    assert mib == pytest.approx((mask + 32768 * MLA_LATENT * 2) / MIB + max(attn * ubatch / 1024, rest * ubatch / 1024)
                                + COMPUTE_BASE_MIB)


def test_vllm_mamba_state_page_and_block(cat):
    """vLLM: fp32 SSM state + model-dtype conv state per layer; the block holds one state page (16-aligned)."""
    r = cat.apps["mambavllm"]
    s = settings_for(r, engine_for(r))
    state = MAMBA_SSM * 4 + MAMBA_CONV * 2  # 2,134,016 B
    per_token = 2 * 128 * 2 * 2  # 2 KV heads x head_dim 128 x K+V x bf16
    block, attn, page = block_layout(r, str(s.kv_k.value))
    assert attn == per_token
    assert block == 2096  # align_up(cdiv(2,134,016, 1,024) = 2,084, 16)
    assert page == 2096 * per_token >= state
    parts = {name: value for name, value, _ in kv_need_parts(r, s, 4096)}
    assert parts["KV full attention"] == 2 * 2096 * per_token * 6
    copies = 2 if s.mamba_mode.value == "align" else 1
    assert parts["recurrent state"] == 23 * page * copies


@pytest.mark.parametrize("app", ["mambalab", "mlalab", "mambavllm"])
def test_the_new_shapes_get_a_verdict(cat, app):
    r = cat.apps[app]
    engine = engine_for(r)
    fit = estimate(r, settings_for(r, engine))
    assert fit.verdict in ("FIT", "TIGHT", "FAIL")


def test_geometry_carries_the_mamba_group(cat):
    geo = Geometry.of(cat.models["nemotron-3-nano-30b-a3b"].architecture)
    assert geo.hybrid and geo.full.layers == 6


def _arch(**changes):
    base = dict(arch="x", hf_model_type="x", layers=52, hidden_size=2688, vocab_size=131072,
                full_attention={"layers": 6, "kv_heads": 2, "head_dim": 128},
                recurrent={"kind": "mamba2", "layers": 23, "heads": 64, "head_dim": 64, "state_size": 128,
                           "groups": 8},
                ffn_layers=23, total_params_b=31.6, active_params_b=3.5, max_context=262144)
    base.update(changes)
    return Architecture.model_validate(base)


def test_layers_add_up_with_ffn_layers():
    assert _arch().recurrent.kind == "mamba2"
    with pytest.raises(ValidationError, match="ffn"):
        _arch(ffn_layers=22)


def test_a_gdn_group_without_kind_still_reads_as_gated_deltanet():
    arch = _arch(recurrent={"layers": 23, "k_heads": 16, "v_heads": 32, "head_dim": 128}, ffn_layers=23)
    assert arch.recurrent.kind == "gated_deltanet"


def test_a_mamba_group_needs_its_state_size():
    with pytest.raises(ValidationError):
        _arch(recurrent={"kind": "mamba2", "layers": 23, "heads": 64, "head_dim": 64, "groups": 8})


def test_mla_needs_both_rank_and_rope_dim():
    with pytest.raises(ValidationError, match="kv_lora_rank and rope_head_dim"):
        AttentionGroup.model_validate({"layers": 47, "kv_heads": 20, "head_dim": 256, "kv_lora_rank": 512})


def test_a_stated_utilization_sizes_the_cap_around_vllms_budget(cat):
    """vLLM reserves util x the card's total whatever the cap (docs/fit.md "Which total vLLM reads"), so a cap sized
    from the parts alone would be smaller than the budget: the sized cap holds the budget + half the margin."""
    from generator.fit.sizing import margin, size_gpu, sized

    r = cat.apps["mambautil"]
    sizing = size_gpu(r)
    budget = 0.95 * 24463
    assert sizing.need_mib + sizing.margin_mib < budget  # the parts alone would give a cap below the budget
    assert sizing.cap_mib == -(-(budget + sizing.after_kv_mib + margin(sizing.need_mib) / 2) // 256) * 256
    assert sizing.cap_mib <= 24300
    rs = sized(r)
    assert rs.app.gpu_memory_mib == sizing.cap_mib and rs.app.gpu_memory_utilization == 0.95
    engine = engine_for(rs)
    fit = estimate(rs, settings_for(rs, engine))
    assert fit.verdict == "FIT"


@pytest.mark.needs_llama_server
@pytest.mark.parametrize("app", ["mambalab", "mlalab"])
def test_llama_server_allocates_the_new_shapes_as_the_fit_says(cat, app, tmp_path):
    """The real llama-server (CPU build, $LLAMA_SERVER) on the model's real-shape GGUF (generator/fit/realshape.py:
    exact tensors and metadata, all-zero sparse data) at the app's context and cache types: its KV cache and
    recurrent state are the fit's to 1 % (measured: Nemotron 216.00 MiB KV + 47.62 MiB state at 131,072 q4_0 cells;
    GLM-4.7-Flash K 475.88 MiB and V 0.00 MiB at 32,768, docs/fit.md)."""
    from generator.fit import realshape
    from generator.fit.probe import probe_for

    from support.realshape import boot_log

    r = cat.apps[app]
    probe = probe_for(r)
    assert probe is not None
    path = realshape.write_spec(realshape.spec_for(r.model, probe.quant), tmp_path / f"{app}.gguf")
    parsed, log = boot_log(path, list(probe.args), tmp_path)
    caches = parsed.all("kv_buffer")
    assert sum(c.value for c in caches) == pytest.approx(probe.parts("KV "), rel=0.01)
    state = sum(x.value for x in parsed.all("recurrent_state"))
    assert state == pytest.approx(probe.part("recurrent state"), rel=0.01, abs=0.01)
    if app == "mlalab":
        assert "V (q4_0):    0.00 MiB" in log  # MLA: no V cache
    else:
        assert state > 40  # 23 Mamba-2 layers of f32 state


def test_vllm_mla_caches_one_latent_per_token_and_layer(cat):
    """vLLM's MLAAttentionSpec: one latent of kv_lora_rank + rope values per token and layer, no V; a GQA group is
    K and V of every KV head, as before."""
    from generator.fit.memory import vllm_group_bytes_per_token, vllm_slot_bytes

    mla = cat.models["glm47-flash"].architecture.full_attention
    assert vllm_group_bytes_per_token(mla, "bfloat16") == MLA_LATENT * 2
    assert vllm_group_bytes_per_token(mla, "fp8") == MLA_LATENT
    gqa = cat.models["nemotron-3-nano-30b-a3b"].architecture.full_attention
    assert vllm_group_bytes_per_token(gqa, "bfloat16") == gqa.kv_heads * vllm_slot_bytes("bfloat16", 128) == 1024
