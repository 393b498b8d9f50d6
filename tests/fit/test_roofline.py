"""The roofline (generator/fit/roofline.py): bytes a decode step reads, the bound they give, and the model checked
against decode speeds measured in public on real GPUs.

Logic runs on tests/fixtures/catalog_roofline (three desktop GPUs with their published bandwidths, Llama 2 7B Q4_0
measured on each by llama.cpp's developers, and trimmed hybrid-MoE / sliding-window models).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import ValidationError

from generator.catalog import Resolved, load_catalog
from generator.core.errors import UsageError
from generator.fit import realshape
from generator.fit.roofline import DEFAULT_DRAFT_TOKENS, GB, Measured, reading, roofline
from generator.schema import Device, Stack

from support.catalogs import FIXTURES, SMALL

ROOF = FIXTURES / "catalog_roofline"
GIB = 1024**3


@pytest.fixture(scope="module")
def cat():
    return load_catalog(ROOF)


def app(cat, name: str) -> Resolved:
    return cat.apps[name]


# --- the model against public measurements ----------------------------------------------------------------------

# (app, measured t/s, where it was printed). Llama 2 7B Q4_0 (3.56 GiB) decoding from an almost empty cache:
# - RTX 4090 146.81 t/s and RTX 3090 128.27 t/s: ./main with CUDA graphs, https://github.com/ggml-org/llama.cpp/pull/6766
#   (JohannesGaessler, 2024-04-19, "Results for LLaMA 2 7b q4_0", column "t/s PR");
# - RTX 3090 Ti 127.43 t/s: llama-bench tg 128, build 32d9f7d9 (1786), https://github.com/ggml-org/llama.cpp/pull/4812
#   (slaren, 2024-01-07).
# Bandwidths (the fixture devices): 4090 and 3090 Ti 21 Gbps x 384 bit = 1,008 GB/s, 3090 19.5 Gbps x 384 = 936 GB/s.
PUBLIC = [("llama7b4090", 146.81, "llama.cpp#6766"), ("llama7b3090", 128.27, "llama.cpp#6766"),
          ("llama7b3090ti", 127.43, "llama.cpp#4812")]


@pytest.mark.parametrize("name, measured, where", PUBLIC)
def test_public_decode_speeds_lie_under_the_roofline_and_not_far_below(cat, name, measured, where):
    """A real decoder cannot beat the bound, and a good one (llama.cpp on CUDA at batch 1) gets most of it: every
    public figure is between 40 % and 100 % of the bound (they are 49-57 %)."""
    roof = roofline(app(cat, name), 128)  # tg128: at most 128 tokens in the cache
    assert roof is not None and roof.tokens_per_step == 1 and not roof.loose
    assert measured < roof.bound_tps, f"{where}: {measured} t/s above the roofline {roof.bound_tps:.1f}"
    assert roof.fraction(measured) > 0.40, f"{where}: {measured} t/s is only {roof.fraction(measured):.0%} of it"
    assert cat.apps[name].app.last_benchmark.tokens_per_s == measured


# --- the parts ---------------------------------------------------------------------------------------------------

def test_dense_model_reads_its_whole_file_and_the_kv_of_every_token(cat):
    roof = roofline(app(cat, "llama7b4090"), 1000)
    assert roof is not None
    assert roof.weights_bytes == pytest.approx(3.56 * GIB)
    # 32 layers x 32 KV heads x head_dim 128 x (K + V) x 2 B (f16, llama.cpp's default cache) per token
    assert roof.kv_bytes == pytest.approx(32 * 32 * 128 * 2 * 2 * 1000)
    assert roof.state_bytes == 0
    assert roof.base_tps == pytest.approx(1008e9 / (3.56 * GIB + 524288 * 1000))
    assert roof.bound_tps == roof.base_tps
    assert roof.bytes_per_token == roof.weights_bytes + roof.kv_bytes + roof.state_bytes


def test_the_kv_read_follows_the_context_and_the_cache_type(cat):
    f16 = [roofline(app(cat, "llama7b4090"), n) for n in (0, 4096)]
    q4 = roofline(app(cat, "llama7bq4kv"), 4096)
    assert f16[0] is not None and f16[1] is not None and q4 is not None
    assert f16[0].kv_bytes == 0 and f16[1].bound_tps < f16[0].bound_tps
    assert q4.kv_bytes == pytest.approx(f16[1].kv_bytes * (18 / 32) / 2)  # q4_0: 18 B per 32 values vs 2 B a value
    assert "K q4_0 + V q4_0" in q4.kv_note


def _streamed(model, quant: str) -> tuple[float, int, int]:
    """(share of the file a decode step streams, token_embd bytes, per-layer embedding bytes), by the rule written out
    here again: every trunk tensor once, the embedding tables not at all (a lookup reads one row), routed experts at
    used / count; a tied token embedding is the output projection, read whole."""
    sizes = realshape.tensor_sizes(model, quant)
    shape = realshape.shape_of(model)
    tied = "output.weight" not in sizes
    read = 0.0
    for name, size in sizes.items():
        if name == "per_layer_token_embd.weight" or (name == "token_embd.weight" and not tied):
            continue
        if name.startswith("blk.") and int(name.split(".")[1]) >= model.architecture.layers:
            continue
        read += size * shape.expert_used / shape.expert_count if "_exps." in name else size
    return (read / sum(sizes.values()), sizes.get("token_embd.weight", 0),
            sizes.get("per_layer_token_embd.weight", 0))


def test_moe_reads_its_routed_experts_and_a_hybrid_its_recurrent_state(cat):
    r = app(cat, "qwenmtp")
    roof = roofline(r, 8192)
    assert roof is not None
    share, embd, _ = _streamed(r.model, r.app.quantization)
    assert roof.weights_bytes == pytest.approx(20.0 * GIB * share)
    assert "streamed a token by tensor" in roof.weights_note and "routed experts 8/256" in roof.weights_note
    # the parameter share (3/35) counted the token embedding as read; a lookup reads one row of it
    assert share != pytest.approx(3.0 / 35.0, rel=0.01) and embd > 0
    # 10 full-attention layers x 2 KV heads x 256 x K f16 + V f16, over 8,192 tokens
    assert roof.kv_bytes == pytest.approx(10 * 2 * 256 * 4 * 8192)
    # 30 GDN layers: 32 v-heads x 128^2 fp32 + (2 x 16 + 32) x 128 x (4 - 1) f32 conv values
    assert roof.state_bytes == pytest.approx(30 * (32 * 128 * 128 * 4 + 64 * 128 * 3 * 4))


def test_sliding_layers_read_at_most_their_window_and_shared_layers_read_again(cat):
    r = app(cat, "gemmasliding")
    near, far = roofline(r, 512), roofline(r, 100_000)
    assert near is not None and far is not None
    # 4 global layers + 3 of the 18 KV-shared ones (the model's 4 : 20 pattern) x 2 KV heads x 512 x (K + V) bf16
    full_per_token = (4 + 3) * 2 * 512 * 2 * 2
    sliding_window = (20 + 15) * 2 * 256 * 2 * 2 * 512  # 20 sliding layers + 15 shared ones, window 512
    assert far.kv_bytes == pytest.approx(full_per_token * 100_000 + sliding_window)
    assert near.kv_bytes == pytest.approx(full_per_token * 512 + sliding_window)
    assert "(+ 3 reading a shared KV)" in far.kv_note and "(+ 15 reading a shared KV)" in far.kv_note
    # the per-layer embedding table is looked up, not streamed; the tied token embedding is the output, read whole
    share, embd, ple = _streamed(r.model, r.app.quantization)
    assert ple > 0 and embd > 0
    assert far.weights_bytes == pytest.approx(14.9 * GIB * share)


# --- speculative decoding ----------------------------------------------------------------------------------------

def test_speculation_multiplies_by_the_tokens_accepted_per_step(cat):
    r = app(cat, "qwenmtp")
    loose, half, full = roofline(r, 0), roofline(r, 0, acceptance=0.5), roofline(r, 0, acceptance=1.0)
    assert loose is not None and half is not None and full is not None
    assert loose.loose and loose.tokens_per_step == 4 and "acceptance unknown" in loose.step_note
    assert not half.loose and half.tokens_per_step == pytest.approx(2.5)  # 1 + 0.5 x 3
    assert full.tokens_per_step == 4  # capped at draft length + 1
    assert half.bound_tps == pytest.approx(half.base_tps * 2.5)
    assert half.base_tps == loose.base_tps
    longer = roofline(r, 0, acceptance=0.5, draft_tokens=8)
    assert longer is not None and longer.tokens_per_step == pytest.approx(5.0) and "measured draft" in longer.step_note


def test_an_unstated_draft_length_takes_the_engines_default_as_the_loose_bound(cat):
    roof = roofline(app(cat, "qwenmtpnodraft"), 0)
    assert roof is not None and roof.loose
    assert roof.tokens_per_step == DEFAULT_DRAFT_TOKENS + 1 and "engine's default" in roof.step_note


def test_no_speculation_is_one_token_a_step_whatever_the_acceptance(cat):
    roof = roofline(app(cat, "llama7b4090"), 0, acceptance=0.9, draft_tokens=4)
    assert roof is not None and roof.tokens_per_step == 1 and roof.step_note == "no speculative decoding"


# --- edges -------------------------------------------------------------------------------------------------------

def test_no_bandwidth_no_roofline(cat):
    assert roofline(app(cat, "llama7bnobw"), 128) is None
    assert reading(app(cat, "llama7bnobw"), Measured.of_benchmark(app(cat, "llama7bnobw").app)) is None


@pytest.mark.parametrize("kwargs", [{"context_tokens": -1}, {"context_tokens": 0, "acceptance": 1.5},
                                    {"context_tokens": 0, "acceptance": -0.1}, {"context_tokens": 0, "draft_tokens": 0}])
def test_impossible_inputs_are_refused(cat, kwargs):
    with pytest.raises(UsageError):
        roofline(app(cat, "qwenmtp"), **kwargs)


def test_explain_is_one_line_with_every_figure(cat):
    roof = roofline(app(cat, "qwenmtp"), 8192, acceptance=0.5)
    assert roof is not None
    line = roof.explain()
    assert "\n" not in line and "1,008 GB/s" in line and "KV at 8,192 tokens" in line
    assert f"{roof.base_tps:,.1f} t/s" in line and f"{roof.bound_tps:,.1f} t/s at most" in line and "2.50 tokens" in line
    data = roof.as_dict()
    assert data["bound_tps"] == round(roof.bound_tps, 1) and data["context"] == 8192
    assert [p[0] for p in roof.parts()] == ["active weights", "KV read at 8,192 tokens", "recurrent state"]
    assert sum(p[1] for p in roof.parts()) == pytest.approx(roof.bytes_per_token / GB)


def test_a_reading_is_the_benchmark_at_its_own_context_and_acceptance(cat):
    r = app(cat, "qwenmtp")
    measured = Measured.of_benchmark(r.app)
    assert measured == Measured(200.0, 0.5, 8192, "benchmark 2026-05-21")
    read = reading(r, measured)
    roof = roofline(r, 8192, acceptance=0.5)
    assert read is not None and roof is not None
    assert read.fraction == pytest.approx(200.0 / roof.bound_tps)
    assert "benchmark 2026-05-21" in read.line() and f"{read.fraction:.0%}" in read.line()
    assert Measured.of_benchmark(app(cat, "llama7bq4kv").app) is None
    assert reading(r, None) is None


def test_the_roofline_sizes_an_app_that_leaves_its_gpu_memory_out(cat):
    r = app(cat, "llama7b4090")
    unsized = replace(r, app=r.app.model_copy(update={"gpu_memory_mib": None}))
    a, b = roofline(unsized, 512), roofline(r, 512)
    assert a is not None and b is not None and a.bound_tps == b.bound_tps


# --- schema ------------------------------------------------------------------------------------------------------

def test_catalogs_without_the_new_fields_still_load():
    small = load_catalog(SMALL)
    assert all(d.memory_bandwidth_gb_s is None for d in small.devices.values())
    assert all(s.acceptance_floor is None for s in small.stacks.values())


def test_acceptance_floor_is_a_fraction_of_a_speculative_stack(cat):
    base = cat.stacks["llamacpp-mtp-fixture"].model_dump()
    assert Stack.model_validate(base).acceptance_floor == 0.40
    for bad in (1.5, -0.1):
        with pytest.raises(ValidationError):
            Stack.model_validate({**base, "acceptance_floor": bad})
    plain = cat.stacks["llamacpp-b8740"].model_dump()
    with pytest.raises(ValidationError, match="acceptance_floor needs spec_methods"):
        Stack.model_validate({**plain, "acceptance_floor": 0.3})


def test_bandwidth_is_positive(cat):
    base = cat.devices["rtx-4090"].model_dump()
    for bad in (0, -1.0):
        with pytest.raises(ValidationError):
            Device.model_validate({**base, "memory_bandwidth_gb_s": bad})
