"""The memory fit against every measured figure we have, each with the tolerance docs/fit.md claims.

The apps are those of the market fixture (tests/fixtures/market/catalog); that every app of the embedded catalog
gets a verdict, and its active apps fit, is tests/test_embedded_catalog.py.

Measured figures (sources in catalog/apps/vllmqwen36turbo27bone.yaml `calibration:` and docs/fit.md):
- Fast upgradeDescription v2.5.1/v2.5.6 (github.com/aamsellem/orales-one-market vllmqwen36turbo27bone/
  OlaresManifest.yaml@5e460bc7): 96K needs 3.17 GiB KV, 128K needs 3.94 GiB, 2.97 GiB available at 0.97 x 23000m;
  v2.5.1 "vLLM estimate 88704" tokens. What vLLM's budget is made of (util x the card's total, and the 2.97 GiB
  again at 24300m, v2.5.7) is tests/test_fit_budget.py.
- Fast v2.5.5 (88K): P5B + P38 on 24300m -> OOM "512 MiB requested when only 646 MiB free" (PyTorch's free counts
  the 24463 MiB card; the HAMi cap is 163 MiB lower, so 483 MiB were free under the cap).
- gemma426ba4bone v1.0.10: "128K KV ~4 GB with turbo3 ... 17 GB target + 0.3 GB MTP drafter".
- vLLM loading unsloth/Qwen3.6-27B-NVFP4: 24.18 GiB (vllm issue #43357, docs/domain.md).
- vLLM Gemma 4 E4B under a 24 GiB limit, util 0.85, max-model-len 4096: weights 16.38 GiB, 2.74 GiB KV available
  (github.com/saienduri/hipflex README).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from ruamel.yaml import YAML

from generator.catalog import load_catalog
from generator.engines import engine_for
from generator.fit.estimate import estimate
from generator.fit.vllm import kv_need_bytes
from generator.fit.memory import (GIB, MIB, Geometry, group_bytes_per_token, recurrent_state_bytes, vllm_slot_bytes)
from generator.engines.settings import Value, settings_for

from support.catalogs import MARKET_CATALOG, edit_yaml
from support.checks import E4B, FAST, G26, add_env, set_app

KV_TOLERANCE = 0.03  # KV need of vLLM's hybrid layout vs the sizes vLLM printed
PREDICTION_TOLERANCE = 0.03
OUTSIDE_TOLERANCE = 0.05
UNCALIBRATED_TOLERANCE = 0.25  # KV available from estimated overheads alone (no calibration row)


@pytest.fixture(scope="module")
def cat():
    return load_catalog(MARKET_CATALOG)


def _fit(r, **context):
    engine = engine_for(r)
    s = settings_for(r, engine)
    if context:
        s = replace(s, context=Value(context["context"]))
    return estimate(r, s), s


def close(value: float, expected: float, tolerance: float) -> bool:
    return abs(value / expected - 1) <= tolerance


# ---- docs/domain.md tables: the arithmetic ---------------------------------------------------------------

def test_qwen27b_kv_per_token_matches_stacks_tables(cat):
    full = cat.models["qwen36-27b"].architecture.full_attention
    assert group_bytes_per_token(full, vllm_slot_bytes("bfloat16", 256)) == 64 * 1024
    assert group_bytes_per_token(full, vllm_slot_bytes("fp8", 256)) == 32 * 1024
    assert close(group_bytes_per_token(full, vllm_slot_bytes("turboquant_k8v4", 256)), 24 * 1024, 0.02)  # + norms
    assert 16 * 1024 < group_bytes_per_token(full, vllm_slot_bytes("turboquant_4bit_nc", 256)) < 17 * 1024


def test_gdn_state_matches_stacks_tables(cat):
    q27 = cat.models["qwen36-27b"].architecture.recurrent
    q35 = cat.models["qwen36-35b-a3b"].architecture.recurrent
    assert close(recurrent_state_bytes(q27, conv_bytes=0), 151e6, 0.01)  # "~151 MB fp32"
    assert close(recurrent_state_bytes(q27) - recurrent_state_bytes(q27, conv_bytes=0), 3e6, 0.05)  # "~3 MB conv"
    assert close(recurrent_state_bytes(q35, conv_bytes=0), 63e6, 0.01)  # "~63 MB fp32"


@pytest.mark.parametrize("model, full_kib, sliding_mib", [
    ("gemma4-e2b", 6, 6), ("gemma4-e4b", 16, 20), ("gemma4-26b-a4b", 20, 200)])
def test_gemma_full_and_sliding_kv_match_stacks_tables(cat, model, full_kib, sliding_mib):
    geo = Geometry.of(cat.models[model].architecture)
    assert group_bytes_per_token(geo.full, vllm_slot_bytes("bfloat16", geo.full.head_dim)) == full_kib * 1024
    per_token = group_bytes_per_token(geo.sliding, vllm_slot_bytes("bfloat16", geo.sliding.head_dim))
    assert per_token * geo.sliding.window == sliding_mib * MIB


def test_k_eq_v_halves_global_kv_only_where_stored_once(cat):
    full = cat.models["gemma4-26b-a4b"].architecture.full_attention
    slot = vllm_slot_bytes("bfloat16", full.head_dim)
    assert group_bytes_per_token(full, slot, k_eq_v_shared=True) == 10 * 1024  # "~10 KiB if the engine stores K=V once"


def test_qwen35_a3b_kv_per_token(cat):
    full = cat.models["qwen36-35b-a3b"].architecture.full_attention
    assert group_bytes_per_token(full, vllm_slot_bytes("bfloat16", 256)) == 20 * 1024


# ---- the Fast app against what vLLM printed ------------------------------------------------------------

@pytest.mark.parametrize("context, measured_gib", [(96000, 3.17), (128000, 3.94)])
def test_fast_kv_need_matches_vllm(cat, context, measured_gib):
    r = cat.apps[FAST]
    s = settings_for(r, engine_for(r))
    assert close(kv_need_bytes(r, s, context) / GIB, measured_gib, KV_TOLERANCE)


def test_fast_practical_cap_matches_vllm_estimate_88704(cat):
    """vLLM's own estimate of the longest context that fits 2.97 GiB (v2.5.1, v2.5.7)."""
    r = cat.apps[FAST]
    s = settings_for(r, engine_for(r))
    low, high = 0, 262144
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if kv_need_bytes(r, s, mid) <= 2.97 * GIB else (low, mid - 1)
    assert close(low, 88704, KV_TOLERANCE)


def test_fast_with_p5b_fails_on_the_24300_cap(catalog_copy):
    """2.5.5 ran 88K with P5B: P38's 512 MiB found only 483 MiB free under the cap. vLLM's budget takes util x the
    card's 24,463 MiB, so P5B's padded pages and P38's workspace share the 571 MiB the cap leaves above it; the
    estimate of P5B's padding (32 % of the state pages) leaves less free than measured: conservative, same verdict."""
    set_app(catalog_copy, FAST, context_length=88000)
    add_env(catalog_copy, FAST, GENESIS_ENABLE_P5B_KV="1")
    r = load_catalog(catalog_copy).apps[FAST]
    result, _ = _fit(r)
    assert result.verdict == "FAIL"
    assert result.tightest.key == "outside"
    p38 = result.part("Genesis P38 continuation-prefill workspace").mib
    free_before_p38 = result.margin("outside") + p38  # what the cap left when P38 asked for its 512 MiB
    measured = 646 - (24463 - 24300)
    assert free_before_p38 < p38 == 512  # the OOM
    assert 0.6 * measured <= free_before_p38 <= measured  # conservative, within 40 % of the log


def test_more_context_than_fits_fails(cat):
    result, _ = _fit(cat.apps[FAST], context=262144)
    assert result.verdict == "FAIL" and result.tightest.key == "budget"


# ---- other measured figures ----------------------------------------------------------------------------

def test_nvfp4_27b_measured_load_does_not_fit_24gb(catalog_copy):
    """vLLM loading unsloth/Qwen3.6-27B-NVFP4 took 24.18 GiB (#43357): a model-level calibration row."""
    path = catalog_copy / "models" / "qwen36-27b.yaml"
    yaml = YAML(typ="rt")
    model = yaml.load(path.read_text(encoding="utf-8"))
    model["weights"].append({"quant": "nvfp4-vllm", "format": "nvfp4", "repo": "unsloth/Qwen3.6-27B-NVFP4",
                             "size_gib": 17.0, "mtp_weights": True,
                             "sources": [{"ref": "docs/domain.md", "note": "~17 GB ideal"}]})
    model["calibration"] = [{"measure": "weights_loaded", "quant": "nvfp4-vllm", "value_gib": 24.18,
                             "what": "vLLM 0.21.0 loading unsloth/Qwen3.6-27B-NVFP4 on a 32 GB RTX 5090",
                             "source": "vllm issue #43357 (docs/domain.md)"}]
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(model, fh)
    set_app(catalog_copy, FAST, quantization="nvfp4-vllm", calibration=None)
    result, _ = _fit(load_catalog(catalog_copy).apps[FAST])
    assert result.part("weights").mib == pytest.approx(24.18 * 1024)
    assert result.verdict == "FAIL"


def test_gemma_26b_at_128k_matches_the_maintainers_budget(catalog_copy):
    """v1.0.10: 128K KV ~4 GB (an all-layers upper bound) next to a ~16-17 GB target and a 0.3 GB drafter."""
    set_app(catalog_copy, G26, context_length=131072)
    result, _ = _fit(load_catalog(catalog_copy).apps[G26])
    kv = sum(p.mib for p in result.parts if p.component.startswith("KV "))
    assert kv * MIB < 4e9  # sliding layers are bounded by the window: far below the all-layers figure
    assert close(result.part("weights").mib * MIB / 1e9, 16.0, 0.06)  # "16GB model" (fullDescription)
    assert close(result.part("drafter weights (assistant-q4km)").mib * MIB / 1e9, 0.325, 0.05)  # "325 MB"
    assert result.verdict == "FIT"


def test_e4b_uncalibrated_overheads_against_vllm_log(catalog_copy):
    """hipflex README: util 0.85 under a 24 GiB limit, max-model-len 4096 -> 2.74 GiB KV available. hipflex reports
    its limit as the total (device reported_total: hami_cap) and vLLM on ROCm skips the CUDA graph estimate
    (vllm/v1/worker/gpu_worker.py@v0.20.0 determine_available_memory): graphs come after the budget."""
    edit_yaml(catalog_copy / "devices" / "olares-one.yaml", reported_total="hami_cap")
    set_app(catalog_copy, E4B, context_length=4096, gpu_memory_mib=24576, speculative=None,
            description="Gemma 4 E4B via vLLM nightly, text + image, 4K context.")
    add_env(catalog_copy, E4B, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS="0")
    result, _ = _fit(load_catalog(catalog_copy).apps[E4B])
    assert result.part("weights").note.startswith("measured")
    assert close(result.kv_available_mib() / 1024, 2.74, UNCALIBRATED_TOLERANCE)
