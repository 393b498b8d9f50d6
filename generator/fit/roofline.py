"""The roofline: the decode speed an app cannot beat on its device, from memory bandwidth alone.

Decoding one token at batch 1 reads every active weight once, the KV of every cached token of every attention layer
and the recurrent state; the GPU cannot stream those bytes faster than its memory bandwidth, so

    base_tps  = bandwidth / (active weights + KV read at the context + recurrent state)
    bound_tps = base_tps x tokens_per_step

where a speculative step verifies the draft in one pass over the same bytes and keeps at most `1 + acceptance x
draft length` tokens (capped at draft length + 1). With speculation and no measured acceptance the bound is the loose
draft length + 1. docs/fit.md "Roofline" gives the formula, its assumptions and sources.

Every byte size comes from the fit's own geometry (`fit/memory.py`: slot bytes, group bytes, recurrent state; the
weights part of `fit/vllm.py`), at the KV types of the resolved argv (`engines/settings.py`). What is left out makes
the bound looser, never tighter: the drafter's own reads, activations, the
output logits, kernel launch gaps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from generator.catalog import Resolved
from generator.core import Data
from generator.core import UsageError
from generator.engines import AnySettings, decided
from generator.fit.memory import MIB, Geometry, group_bytes_per_token, recurrent_state_bytes
from generator.fit.sizing import sized
from generator.fit.vllm import SSM_BYTES, weights_part
from generator.schema import App

GB = 1e9  # bandwidths are in decimal GB/s, as GPU specifications state them

# Draft length when the app states none (`speculative.tokens`): the engine's own default, the larger where builds
# differ (a longer draft is a looser bound).
# - DFlash drafts block_size - 1 tokens a step: `n_draft = std::min((int) params.n_max, block_size - 1)`
#   (spiritbuun/buun-llama-cpp@aecbbd5daa47abd4229fb2c0906e8f102d814022 common/speculative.cpp:1784), the drafter's
#   block_size 16 ("The drafter's block_size=16", common/arg.cpp:925 of the same fork at 1c4788192); Lucebox's DFlash
#   runtime is counted the same (assumption: its DDTree verifies at most one block's depth a step).
# - Other methods: llama.cpp's `n_max = 16` (common/common.h:368 of the same commit; upstream
#   ggml-org/llama.cpp#23269 lowered it to 3 in May 2026, per the maintainer's llamacppqwen36mtpone v1.0.9 note). vLLM
#   takes no default: num_speculative_tokens is required.
DFLASH_DRAFT_TOKENS = 15
DEFAULT_DRAFT_TOKENS = 16


@dataclass(frozen=True)
class Roofline:
    """The bytes one decode step reads, the bandwidth that streams them, and the speed bound they give."""

    app: str
    device: str
    bandwidth_gb_s: float
    context: int  # tokens in the KV cache while decoding
    weights_bytes: float  # active weights at the app's quantization
    weights_note: str
    kv_bytes: float  # the KV read at `context`
    kv_note: str
    state_bytes: float  # recurrent (GDN) state of one sequence
    state_note: str
    tokens_per_step: float  # tokens one step keeps: 1 without speculation
    step_note: str
    loose: bool  # speculative with no measured acceptance: tokens_per_step is draft length + 1

    @property
    def bytes_per_token(self) -> float:
        """Bytes one decode step reads (one token without speculation)."""
        return self.weights_bytes + self.kv_bytes + self.state_bytes

    @property
    def base_tps(self) -> float:
        """The bound without speculative decoding."""
        return self.bandwidth_gb_s * GB / self.bytes_per_token

    @property
    def bound_tps(self) -> float:
        return self.base_tps * self.tokens_per_step

    def fraction(self, tokens_per_s: float) -> float:
        """A measured speed as a fraction of the bound (1.0 = at the roofline; above 1 is not physical)."""
        return tokens_per_s / self.bound_tps

    def parts(self) -> tuple[tuple[str, float, str], ...]:
        """(component, GB, note) rows of the bytes one step reads."""
        return (("active weights", self.weights_bytes / GB, self.weights_note),
                (f"KV read at {self.context:,} tokens", self.kv_bytes / GB, self.kv_note),
                ("recurrent state", self.state_bytes / GB, self.state_note))

    def explain(self) -> str:
        """One line: the division and the multiplication that give the bound."""
        step = (f" x {self.tokens_per_step:.2f} tokens a step ({self.step_note})" if self.tokens_per_step != 1
                else "")
        return (f"roofline {self.bandwidth_gb_s:,.0f} GB/s / ({self.weights_bytes / GB:.2f} GB weights + "
                f"{self.kv_bytes / GB:.2f} GB KV at {self.context:,} tokens + {self.state_bytes / GB:.2f} GB state) "
                f"= {self.base_tps:,.1f} t/s{step} = {self.bound_tps:,.1f} t/s at most")

    def as_dict(self) -> dict[str, Data]:
        out: dict[str, Data] = asdict(self)
        out.update(bytes_per_token=round(self.bytes_per_token), base_tps=round(self.base_tps, 1),
                   bound_tps=round(self.bound_tps, 1), explain=self.explain())
        return out


@dataclass(frozen=True)
class Measured:
    """A measured decode speed to hold against the roofline: a catalog benchmark or a ledger row."""

    tokens_per_s: float
    acceptance: float | None
    context: int  # the context the measurement recorded; 0 when it recorded none (the loosest bound)
    source: str  # "benchmark 2026-05-08", "smoke 2026-11-29T10:00:00Z"

    @classmethod
    def of_benchmark(cls, app: App) -> Measured | None:
        """The app's latest benchmark in the catalog, if any."""
        bench = app.last_benchmark
        if bench is None:
            return None
        return cls(bench.tokens_per_s, bench.acceptance, bench.context or 0, f"benchmark {bench.date.isoformat()}")


@dataclass(frozen=True)
class Reading:
    """A measured speed as a fraction of the roofline at the measurement's context and acceptance."""

    measured: Measured
    roof: Roofline

    @property
    def fraction(self) -> float:
        return self.roof.fraction(self.measured.tokens_per_s)

    def line(self) -> str:
        where = f"{self.measured.context:,} tokens" if self.measured.context else "an empty cache (no context recorded)"
        loose = "; loose: acceptance unknown" if self.roof.loose else ""
        return (f"measured {self.measured.tokens_per_s:,.1f} t/s ({self.measured.source}) = {self.fraction:.0%} of "
                f"the roofline {self.roof.bound_tps:,.1f} t/s at {where}{loose}")

    def as_dict(self) -> dict[str, Data]:
        return {"measured": asdict(self.measured), "fraction": round(self.fraction, 3), "roofline": self.roof.as_dict(),
                "line": self.line()}


def reading(resolved: Resolved, measured: Measured | None, *, settings: AnySettings | None = None) -> Reading | None:
    """`measured` against the app's roofline; None without a measurement or a device bandwidth. `settings`: as in
    `roofline`."""
    if measured is None:
        return None
    roof = roofline(resolved, measured.context, acceptance=measured.acceptance, settings=settings)
    return Reading(measured, roof) if roof is not None else None


def roofline(resolved: Resolved, context_tokens: int, *, acceptance: float | None = None,
             draft_tokens: int | None = None, settings: AnySettings | None = None) -> Roofline | None:
    """The decode-speed bound of `resolved` on its device with `context_tokens` tokens in the cache; None when the
    device states no memory bandwidth. `acceptance` (accepted / drafted, 0..1) and `draft_tokens` (drafted a step)
    are a measurement's; left out, the draft length is the app's (else the engine default) and the acceptance unknown,
    which gives the loose bound draft length + 1. `settings`: the planned app's (generator/chart/plan.py
    `ChartSpec.settings`, with `resolved` the plan's sized app), so that its engine is not built again; read from a new
    build when left out."""
    if context_tokens < 0:
        raise UsageError(f"roofline: context {context_tokens} is negative")
    if acceptance is not None and not 0 <= acceptance <= 1:
        raise UsageError(f"roofline: acceptance {acceptance} is not a fraction between 0 and 1")
    if draft_tokens is not None and draft_tokens < 1:
        raise UsageError(f"roofline: draft length {draft_tokens} must be at least 1")
    bandwidth = resolved.device.memory_bandwidth_gb_s
    if bandwidth is None:
        return None
    r = sized(resolved)  # the settings need a cap
    s = settings if settings is not None else decided(r)
    weights, weights_note = _weights(r)
    kv, kv_note = _kv(r, s, context_tokens)
    state, state_note = _state(r, s)
    tokens, step_note, loose = _step(s, acceptance, draft_tokens)
    return Roofline(app=r.app.name, device=r.device.name, bandwidth_gb_s=bandwidth, context=context_tokens,
                    weights_bytes=weights, weights_note=weights_note, kv_bytes=kv, kv_note=kv_note,
                    state_bytes=state, state_note=state_note, tokens_per_step=tokens, step_note=step_note,
                    loose=loose)


def _weights(r: Resolved) -> tuple[float, str]:
    """The weights a token runs through: the file (or its measured load) x the share of its bytes a decode step
    streams (`streamed_share`: by tensor where the fit knows the file's tensors, else active / total parameters)."""
    mib, note = weights_part(r, r.app.quantization)
    share, how = streamed_share(r)
    return mib * MIB * share, f"{note}{how}"


# Tensors a decode step looks up one row of rather than streams: llama.cpp reads the token embedding and Gemma's
# per-layer embedding table with ggml_get_rows, one row a token (src/llama-graph.cpp build_inp_embd:
# `ggml_get_rows(ctx0, tok_embd, inp->tokens)`, github.com/ggml-org/llama.cpp@00395eb285c7; src/models/gemma4.cpp
# build_inp_per_layer: `ggml_get_rows(ctx0, model.per_layer_tok_embd, inp->tokens)`,
# github.com/ggml-org/llama.cpp@06e514f61476). A tied token embedding is also the output projection (gemma4.cpp
# load_arch_tensors: `output` from token_embd, TENSOR_DUPLICATED; the lm_head multiplies by it), read whole a token.
_LOOKUP = ("token_embd.weight", "per_layer_token_embd.weight")


def streamed_share(r: Resolved) -> tuple[float, str]:
    """(share of the weight file's bytes one decode step streams, note). By tensor where the fit knows them
    (generator/fit/realshape.py: a recorded header or a known shape): every tensor once, but an embedding looked up
    one row a token (`_LOOKUP`, unless tied to the output) and routed experts at `expert_used / expert_count`
    (ffn_*_exps: build_moe_ffn's ggml_mul_mat_id reads the selected experts' rows); MTP blocks past the trunk are
    not run. Else active / total parameters (which counts an embedding table as read)."""
    from generator.fit import realshape  # a heavy module: only where the roofline is asked for

    arch, model, quant = r.model.architecture, r.model, r.app.quantization
    fallback = min(1.0, arch.active_params_b / arch.total_params_b)
    shown = (f" x active share {arch.active_params_b:g}/{arch.total_params_b:g} B params" if fallback < 1 else "")
    shape = realshape.shape_of(model)
    if not realshape.has_tensors(model, quant):
        return fallback, shown
    sizes = realshape.tensor_sizes(model, quant)
    total = sum(sizes.values())
    tied = "output.weight" not in sizes
    read = 0.0
    for name, size in sizes.items():
        if name in _LOOKUP:
            read += size if tied and name == "token_embd.weight" else 0.0
        elif "_exps." in name:
            if shape is None or not shape.expert_count:
                return fallback, shown  # experts without a known routing: the parameter share
            read += size * shape.expert_used / shape.expert_count
        elif name.startswith("blk.") and int(name.split(".", 2)[1]) >= arch.layers:
            continue  # an MTP block: not part of the trunk's step
        else:
            read += size
    if total <= 0:
        return fallback, shown
    share = min(1.0, read / total)
    return share, (f" x {share:.3f} streamed a token by tensor (embedding lookups one row, routed experts "
                   f"{shape.expert_used if shape else 0}/{shape.expert_count if shape else 0})"
                   if share < 1 else "")


def _slot(s: AnySettings, head_dim: int) -> float:
    return s.kv_slot_bytes(head_dim)  # the engine's own KV dtype table


def _shared(geo: Geometry) -> tuple[int, int]:
    """(full, sliding) attention layers that attend over another layer's KV (Gemma's KV-shared layers): they store
    none but read their source's, so a decode step reads it again (llama.cpp src/models/gemma4.cpp: a layer without
    KV, past `n_layer_kv_from_start`, calls build_attn with no K and V, "reuse KV cache of earlier layers",
    github.com/ggml-org/llama.cpp@06e514f61476). The shared layers keep the model's pattern of full and sliding
    layers: split in the proportion of the layers that hold KV (Gemma 4 E2B: 4 full + 16 sliding of 20; E4B: 3 + 15
    of 18)."""
    shared = geo.kv_shared_layers
    held_sliding = geo.sliding.layers if geo.sliding is not None else 0
    held = geo.full.layers + held_sliding
    if not shared or not held:
        return 0, 0
    full = round(shared * geo.full.layers / held)
    return full, shared - full


def _kv(r: Resolved, s: AnySettings, context: int) -> tuple[float, str]:
    """Every attention layer reads the K and V of every cached token it attends over: full layers the whole context,
    sliding layers at most their window; a layer that reuses another layer's KV reads it again (`_shared`)."""
    geo = Geometry.of(r.model.architecture)
    types = f"K {s.kv_k.value} + V {s.kv_v.value}"
    shared_full, shared_sliding = _shared(geo)
    per_layer = group_bytes_per_token(geo.full, _slot(s, geo.full.head_dim)) / max(1, geo.full.layers)
    full = per_layer * (geo.full.layers + shared_full) * context
    also = f" (+ {shared_full} reading a shared KV)" if shared_full else ""
    note = (f"{geo.full.layers} full-attention layers{also} x {geo.full.kv_heads} KV heads x head_dim "
            f"{geo.full.head_dim}")
    sliding = 0.0
    if geo.sliding is not None and geo.sliding.window is not None:
        tokens = min(context, geo.sliding.window)
        per_layer = group_bytes_per_token(geo.sliding, _slot(s, geo.sliding.head_dim)) / max(1, geo.sliding.layers)
        sliding = per_layer * (geo.sliding.layers + shared_sliding) * tokens
        also = f" (+ {shared_sliding} reading a shared KV)" if shared_sliding else ""
        note += f"; {geo.sliding.layers} sliding layers{also} x {tokens:,} tokens (window {geo.sliding.window:,})"
    return full + sliding, f"{note}; {types} x {context:,} tokens"


def _state(r: Resolved, s: AnySettings) -> tuple[float, str]:
    rec = r.model.architecture.recurrent
    if rec is None:
        return 0.0, "no recurrent layers"
    # the engine's own conv state bytes (vLLM: the model dtype; llama.cpp: f32)
    return (recurrent_state_bytes(rec, ssm_bytes=SSM_BYTES, conv_bytes=s.conv_state_bytes),
            f"{rec.layers} GDN layers, one sequence's fp32 state + conv state, read once a step")


def _step(s: AnySettings, acceptance: float | None, draft_tokens: int | None) -> tuple[float, str, bool]:
    method = s.spec_method
    if method is None:
        return 1.0, "no speculative decoding", False
    if draft_tokens is not None:
        draft, where = draft_tokens, "measured"
    elif s.spec_tokens is not None:
        draft, where = s.spec_tokens, "the app's"
    else:
        draft = DFLASH_DRAFT_TOKENS if method == "dflash" else DEFAULT_DRAFT_TOKENS
        where = "the engine's default"
    if acceptance is None:
        return (float(draft + 1), f"{method}: acceptance unknown, the loose bound {where} draft length {draft} + 1",
                True)
    tokens = min(1 + acceptance * draft, draft + 1.0)
    return tokens, f"{method}: 1 + acceptance {acceptance:.1%} x {where} draft length {draft}", False


__all__ = ["DEFAULT_DRAFT_TOKENS", "DFLASH_DRAFT_TOKENS", "GB", "Measured", "Reading", "Roofline", "reading",
           "roofline"]
