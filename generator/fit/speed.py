"""The speed model: the decode speed an app is predicted to reach on a device, at batch 1.

The roofline (`fit/roofline.py`) bounds the speed from memory bandwidth; real decoding reaches only part of it, and
a small model reaches less, because every layer's kernels cost a launch and a synchronisation whatever they read.
One decode step of a token therefore takes

    t_step = kernel blocks x overhead per block + bytes read / (bandwidth x efficiency) + vocabulary x sampling cost

- kernel blocks: a mixer or an FFN (`blocks`: two a transformer layer, one a Nemotron-H layer);
- bytes read: the roofline's (weights streamed a token + KV at the context + recurrent state), at the app's KV types;
- efficiency: the share of the stated bandwidth the engine's kernels stream for the architecture family, fitted on
  the fit half of the measurements (bench/speed/split.yaml, bench/speed/fit.py) per (engine, weights class, device
  architecture): every dense family one class, a MoE family its own (`weights_class`); the KV's per family; a
  family measured only on another device architecture takes the fit across architectures (ANY_ARCH, below), one
  never measured the engine's median: both with a wider band, stated;
- overhead per block: the engine's fixed launch and sync cost per kernel block a step (the fitted tables keep the
  name `overhead_s_per_layer`), fitted on the same half per device
  architecture; for a device architecture without a fit row, one cost fitted across every measured architecture at
  once with the efficiencies that go with it (ANY_ARCH): that share of a step is the host's and the driver's and does
  not shrink with the card's bandwidth, so a device file with only its bandwidth transfers (an efficiency tied to one
  device times another's bandwidth does not: bench/speed-accuracy.md's held-out device);
- sampling: the server's per-token work over the vocabulary (greedy sampling on the CPU, the HTTP loop), measured as
  llama-server against llama-bench on the same files (bench/speed/h100-run4/README.md: the fit half's seven models,
  their median per vocabulary entry); a llama-bench row has none.

Speculative decoding keeps `1 + acceptance x draft length` tokens a step (the acceptance the catalog measured:
accepted / drafted, the newest benchmark that has one) for a step that costs the plain step x `(1 + SPEC_NEXT_SHARE x
(draft length - 1))` + `SPEC_FIRST_S + SPEC_NEXT_S x (draft length - 1)` seconds (drafting N tokens and verifying
N + 1, measured with llama.cpp's MTP on the H100 on a 4.9 ms and a 14.1 ms step; a DFlash block drafter
counted as a 3-token MTP step, an assumption). Without a measured acceptance the model predicts the plain speed and
says so: a lower estimate, not a guess of the acceptance.

The compute roof (`compute_tflops`) only matters where a verify step's 2 x active parameters x tokens would take
longer than its reads; it is checked and named when it binds.

A device needs `memory_bandwidth_gb_s` (an error without it); the engine kinds and families are asked of the
engine family (`EngineFamily.fit`) and the model's architecture, never named in code.
"""

from __future__ import annotations

import json
from importlib import resources

from dataclasses import dataclass, replace
from statistics import median

from generator.catalog import Resolved
from generator.core import Data
from generator.core import UsageError
from generator.engines import family_for
from generator.engines import decided
from generator.fit.roofline import DEFAULT_DRAFT_TOKENS, DFLASH_DRAFT_TOKENS, GB, roofline
from generator.fit.sizing import sized
from generator.schema import Device

# GGUF architecture -> speed family: architectures whose decode runs the same kinds of kernels over the same kinds of
# layers (attention + GDN recurrent; attention + Mamba-2; Gemma 4's sliding window with per-layer embeddings; MLA;
# plain GQA). An architecture missing here has no family: the model gives a band, not a number.
FAMILIES: dict[str, str] = {
    "qwen35": "gdn-hybrid", "qwen35moe": "gdn-hybrid", "qwen3next": "gdn-hybrid",
    "nemotron_h": "mamba-hybrid", "nemotron_h_moe": "mamba-hybrid",
    "gemma4": "gemma4",
    "deepseek2": "mla",
    "llama": "gqa", "qwen3": "gqa", "qwen3moe": "gqa", "mistral3": "gqa",
}

# ---- fitted on the fit half (bench/speed/fit.py writes these lines; bench/speed-accuracy.md gives the errors) ----
# Written by bench/speed/fit.py --write into speed_fitted.json beside this module (data, not code: the engine fit
# kinds that key it are the families' `fit` names, generator/engines/): (engine fit kind, family, device
# architecture) -> bandwidth efficiency; the same -> the share of bandwidth the attention reads of the KV reach;
# (engine fit kind, device architecture) -> launch and sync seconds a kernel block; engine fit kind -> seconds
# per vocabulary entry a served token (0 for an engine without a measurement); the speculative step cost (drafting N
# tokens and verifying N + 1 costs the plain step x (1 + SPEC_NEXT_SHARE x (N - 1)) + SPEC_FIRST_S + SPEC_NEXT_S x
# (N - 1) seconds); device architecture -> the
# test half's p95 |predicted/measured - 1| of its fitted families (the band they carry).
_FITTED = json.loads(resources.files("generator.fit").joinpath("speed_fitted.json").read_text(encoding="utf-8"))
EFFICIENCY: dict[tuple[str, str, str], float] = {(e, f, a): v for e, f, a, v in _FITTED["efficiency"]}
KV_EFFICIENCY: dict[tuple[str, str, str], float] = {(e, f, a): v for e, f, a, v in _FITTED["kv_efficiency"]}
OVERHEAD_S_PER_LAYER: dict[tuple[str, str], float] = {(e, a): v for e, a, v in _FITTED["overhead_s_per_layer"]}
SAMPLING_S_PER_VOCAB: dict[str, float] = dict(_FITTED["sampling_s_per_vocab"])
SPEC_FIRST_S: float = _FITTED["spec_first_s"]
SPEC_NEXT_S: float = _FITTED["spec_next_s"]
SPEC_NEXT_SHARE: float = _FITTED["spec_next_share"]
BAND_BY_ARCH: dict[str, float] = dict(_FITTED["band_by_arch"])
# ---- end of fitted values ----

# the device architecture of the entries fitted across every measured architecture at once (bench/speed/fit.py): the
# launch + sync cost a layer that does not shrink with bandwidth, and each family's efficiency with it, for a device
# whose architecture has no fit row
ANY_ARCH = "*"

BLOCK_STEP_DRAFT = 3  # the MTP draft length whose measured step cost a DFlash step is counted at

# the relative band a prediction carries, by how much of it was fitted: a fitted family on a device architecture whose
# test half was scored carries that p95 (BAND_BY_ARCH, written by bench/speed/fit.py), else BAND_FITTED
BAND_FITTED = 0.20
BAND_KIN = 0.50  # the family not fitted on this architecture, its sparsity's other families are (test worst 41 %)
# the family measured on another device architecture only: the held-out-device check's p95 rounded up to 5 % (54 %:
# every H100 row predicted from its device file's public specification by a fit without any H100 row,
# bench/speed/heldout_device.py, bench/speed-accuracy.md; 38 % with the drafter's time as a ratio of the step)
BAND_OTHER_DEVICE = 0.55
BAND_NO_FAMILY = 0.90  # the family never measured with this engine (or the architecture has no family)

# Attention at batch 1 costs per cached element more than per byte: flash attention dequantizes K and V as it reads
# them, and an f16 cache decodes in about the time a q4_0 one does (H100: Gemma 4 E4B f16 against E2B q4_0,
# bench/speed/h100). KV time is therefore counted in q4_0-equivalent bytes: elements x 18/32 B.
KV_REFERENCE_BYTES = 18 / 32

SHORT_CONTEXT = 0  # the short-context prediction: an empty cache (llama-bench's tg at depth 0)


@dataclass(frozen=True)
class Prediction:
    """The predicted decode speed of an app on a device at one context, with its parts and its band."""

    app: str
    device: str
    context: int
    tokens_per_s: float | None  # None: no family, only the band
    low: float  # the band: tokens_per_s x (1 -/+ band)
    high: float
    band: float
    basis: str  # how the efficiency was found: fitted, other device, engine median, no family
    efficiency: float
    overhead_s: float  # launch/sync a step
    memory_s: float  # bytes / (bandwidth x efficiency): weights_s + kv_s
    weights_s: float  # weights and recurrent state
    kv_s: float  # the attention's KV reads
    sampling_s: float
    tokens_per_step: float
    step_cost: float  # the speculative step's cost in plain steps (1 without speculation)
    spec_fixed_s: float  # the drafter's seconds a step that do not scale with the target's step (0 without)
    spec_share: float  # the drafter's time a step as a share of the target's plain step (0 without)
    bound: str  # "memory" or "compute"
    note: str

    @property
    def line(self) -> str:
        where = f"{self.context:,} tokens" if self.context else "an empty cache"
        value = (f"{self.tokens_per_s:,.1f} t/s" if self.tokens_per_s is not None
                 else f"{self.low:,.0f}-{self.high:,.0f} t/s (band only)")
        return (f"predicted {value} (±{self.band:.0%}, {self.basis}) at {where}: efficiency {self.efficiency:.0%}, "
                f"{self.overhead_s * 1e3:.2f} ms launch + {self.weights_s * 1e3:.2f} ms weight reads + "
                f"{self.kv_s * 1e3:.2f} ms attention + "
                f"{self.sampling_s * 1e3:.2f} ms sampling a step; {self.note}")

    def as_dict(self) -> dict[str, Data]:
        return {"app": self.app, "device": self.device, "context": self.context,
                "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 1),
                "low": round(self.low, 1), "high": round(self.high, 1), "band": self.band, "basis": self.basis,
                "efficiency": round(self.efficiency, 3), "overhead_ms": round(self.overhead_s * 1e3, 3),
                "memory_ms": round(self.memory_s * 1e3, 3), "kv_ms": round(self.kv_s * 1e3, 3),
                "sampling_ms": round(self.sampling_s * 1e3, 3),
                "tokens_per_step": round(self.tokens_per_step, 3), "step_cost": round(self.step_cost, 3),
                "bound": self.bound, "note": self.note, "line": self.line}


@dataclass(frozen=True)
class Coefficients:
    """What the model fitted: passed explicitly by the fitting script, the module's tables otherwise."""

    efficiency: dict[tuple[str, str, str], float]
    kv_efficiency: dict[tuple[str, str, str], float]
    overhead_s_per_layer: dict[tuple[str, str], float]
    sampling_s_per_vocab: dict[str, float]
    spec_first_s: float
    spec_next_s: float
    spec_next_share: float

    @classmethod
    def fitted(cls) -> Coefficients:
        return cls(EFFICIENCY, KV_EFFICIENCY, OVERHEAD_S_PER_LAYER, SAMPLING_S_PER_VOCAB, SPEC_FIRST_S, SPEC_NEXT_S,
                   SPEC_NEXT_SHARE)

    def overhead(self, engine: str, arch: str) -> float:
        """Seconds a kernel block: this engine on this device architecture, else the engine's cost fitted across
        every measured architecture (ANY_ARCH), else its median, else any median."""
        for key in ((engine, arch), (engine, ANY_ARCH)):
            exact = self.overhead_s_per_layer.get(key)
            if exact is not None:
                return exact
        pool = ([v for (e, _), v in self.overhead_s_per_layer.items() if e == engine]
                or list(self.overhead_s_per_layer.values()))
        return median(pool) if pool else 0.0


SPARSE_SHARE = 0.3  # active / total parameters below which a model decodes as a sparse MoE (experts' kernels)


def family_of(arch: str, active_share: float = 1.0) -> str | None:
    """The speed family of a GGUF architecture, `/moe` or `/dense` by the share of parameters a token runs through
    (a 35B-A3B reads its experts through other kernels than a dense 27B reads its matrices)."""
    base = FAMILIES.get(arch)
    if base is None:
        return None
    return f"{base}/{'moe' if active_share < SPARSE_SHARE else 'dense'}"


# Kernel blocks a decode step runs per layer: a transformer layer runs a mixer (attention, GDN or MLA) and an FFN (dense
# or routed), two blocks of kernels; a Nemotron-H layer is one block, a Mamba-2 mixer, an attention or an FFN alone
# (llama.cpp src/models/nemotron-h.cpp: each layer builds `build_mamba2_layer`, `build_attention_layer` or
# `build_ffn_layer` by its type, github.com/ggml-org/llama.cpp@0aebd861b88e). The launch and synchronisation cost of a
# step is counted per block: counting a Nemotron-H layer as a transformer layer doubled its share.
BLOCKS_PER_LAYER: dict[str, int] = {"nemotron_h": 1, "nemotron_h_moe": 1}
DEFAULT_BLOCKS_PER_LAYER = 2


def blocks(resolved: Resolved) -> int:
    """The kernel blocks (a mixer or an FFN) one decode step runs through."""
    arch = resolved.model.architecture
    return arch.layers * BLOCKS_PER_LAYER.get(arch.arch, DEFAULT_BLOCKS_PER_LAYER)


def weights_class(family: str | None) -> str | None:
    """What the weights' efficiency is kept by: every dense family streams its matrices through the same
    matrix-vector kernels (one `dense` class: Gemma 4 12B and E2B, a 24B Mistral and a 27B Qwen3.5 on the H100 fit
    one efficiency and one cost a block within 5 %, bench/speed-accuracy.md), a MoE family its experts through its
    own routing (its family)."""
    if family is None or not family.endswith("/dense"):
        return family
    return "dense"


def model_family(resolved: Resolved) -> str | None:
    a = resolved.model.architecture
    return family_of(a.arch, a.active_params_b / a.total_params_b)


def engine_kind(resolved: Resolved) -> str:
    """The engine kind the coefficients are kept by: the engine family's memory model (`EngineFamily.fit`)."""
    return family_for(resolved.stack).fit


def efficiency_for(coef: Coefficients, engine: str, family: str | None, arch: str, *,
                   table: dict[tuple[str, str, str], float] | None = None) -> tuple[float, str, float]:
    """(efficiency, basis, band) for an engine kind, a speed family and a device architecture, from `table` (the
    weights' efficiencies by default)."""
    table = coef.efficiency if table is None else table
    if family is not None:
        exact = table.get((engine, family, arch))
        if exact is not None:
            return exact, f"fitted for {family} on {arch}", BAND_BY_ARCH.get(arch, BAND_FITTED)
        sparsity = family.split("/")[-1]
        kin = [v for (e, f, a), v in table.items() if e == engine and a == arch and f.split("/")[-1] == sparsity]
        if kin:
            return (median(kin), f"{family} not fitted on {arch}: the median of its {sparsity} families there",
                    BAND_KIN)
        across = table.get((engine, family, ANY_ARCH))
        if across is not None:
            return (across, f"{family} measured on another device architecture only: the fit across architectures",
                    BAND_OTHER_DEVICE)
        others = [v for (e, f, a), v in table.items() if e == engine and f == family and a != ANY_ARCH]
        if others:
            return (median(others), f"{family} measured on another device architecture only", BAND_OTHER_DEVICE)
    mine = [v for (e, _, a), v in table.items() if e == engine and a != ANY_ARCH]
    pool = mine or [v for (_, _, a), v in table.items() if a != ANY_ARCH]
    if not pool:
        raise UsageError("the speed model has no fitted efficiency (run bench/speed/fit.py)")
    why = f"no measurement of family {family} with this engine" if family else "no speed family for this architecture"
    whose = "the engine's median efficiency" if mine else f"no fit for engine {engine}: the median of every engine's"
    return median(pool), f"{why}: {whose}", BAND_NO_FAMILY


def on_device(resolved: Resolved, device: Device) -> Resolved:
    """The app as it would run on `device` (same engine, argv and weights): what `explain --device` predicts."""
    return resolved if resolved.device.id == device.id and resolved.device == device else replace(resolved,
                                                                                                  device=device)


def predict(resolved: Resolved, context: int, *, acceptance: float | None = None, served: bool = True,
            speculative: bool = True, coef: Coefficients | None = None) -> Prediction:
    """The decode speed of `resolved` on its device with `context` tokens cached. `acceptance`: the measured one
    (default: the app's latest benchmark's, if any); `served`: through the engine's server (its sampling cost
    counted) rather than its bare kernels (llama-bench); `speculative=False`: the app's argv without its drafter."""
    coef = coef or Coefficients.fitted()
    device = resolved.device
    if device.memory_bandwidth_gb_s is None:
        raise UsageError(f"device {device.id!r} states no memory_bandwidth_gb_s: the speed model needs the card's "
                         "memory bandwidth in GB/s (its specification's figure); add it to the device file")
    r = sized(resolved)
    s = decided(r)
    if acceptance is None:  # the newest benchmark that measured one (a later figure may leave it out)
        measured = [b for b in r.app.benchmarks if b.acceptance is not None]
        acceptance = max(measured, key=lambda b: b.date).acceptance if measured else None
    roof = roofline(r, context)
    assert roof is not None  # the bandwidth is there
    engine = engine_kind(r)
    arch = r.model.architecture
    family = model_family(r)
    kind = device.architecture or device.arch
    eff, basis, band = efficiency_for(coef, engine, weights_class(family), kind)
    kv_eff = efficiency_for(coef, engine, family, kind, table=coef.kv_efficiency)[0] if coef.kv_efficiency else eff
    overhead = blocks(r) * coef.overhead(engine, kind)
    bandwidth = device.memory_bandwidth_gb_s * GB
    weights = (roof.weights_bytes + roof.state_bytes) / (bandwidth * eff)
    kv = roof.kv_bytes / s.kv_element_bytes * KV_REFERENCE_BYTES / (bandwidth * kv_eff)
    memory = weights + kv
    sampling = arch.vocab_size * coef.sampling_s_per_vocab.get(engine, 0.0) if served else 0.0
    tokens, fixed, share, verified, note = 1.0, 0.0, 0.0, 1, "no speculative decoding"
    if s.spec_method is not None and speculative:
        draft = s.spec_tokens or (DFLASH_DRAFT_TOKENS if s.spec_method == "dflash" else DEFAULT_DRAFT_TOKENS)
        if acceptance is None:
            note = f"{s.spec_method}: no measured acceptance, predicted without speculation (a lower estimate)"
        else:
            tokens, verified = 1 + acceptance * draft, draft + 1
            # a block drafter (DFlash) drafts its block in one pass: its step is counted as MTP's step of
            # BLOCK_STEP_DRAFT tokens (an assumption: no block drafter was measured on the lent GPU)
            steps = min(draft, BLOCK_STEP_DRAFT) if s.spec_method == "dflash" else draft
            # drafting: a fixed time (the host's and the draft head's launches) and, past the first draft token, a
            # share of the target's step (measured: the MTP step of a 35B-A3B and a 27B, bench/speed/h100-run6)
            fixed = coef.spec_first_s + coef.spec_next_s * (steps - 1)
            share = coef.spec_next_share * (steps - 1)
            plain = overhead + memory
            note = (f"{s.spec_method}: 1 + acceptance {acceptance:.0%} x draft {draft} = {tokens:.2f} tokens a step "
                    f"at {(plain * (1 + share) + fixed) / plain:.2f}x a plain step's cost")
    cost = ((overhead + memory) * (1 + share) + fixed) / (overhead + memory)
    bound = "memory"
    if device.compute_tflops is not None:
        compute = 2 * arch.active_params_b * 1e9 * verified / (device.compute_tflops * 1e12)
        if compute > memory * cost:  # the verify step's matrix work outlasts its reads
            memory, cost, bound = compute, 1.0, "compute"
    step = (overhead + memory) * cost + sampling
    value = tokens / step
    return Prediction(r.app.name, device.id, context, None if family is None else value, value * (1 - band),
                      value * (1 + band), band, basis, eff, overhead, memory, weights, kv, sampling, tokens, cost,
                      fixed if cost > 1 else 0.0, share if cost > 1 else 0.0, bound, note)


def full_context(resolved: Resolved) -> int:
    """The app's whole context: its argv's, else the model's own length."""
    r = sized(resolved)
    s = decided(r)
    return s.context.value or r.model.architecture.max_context


@dataclass(frozen=True)
class Speeds:
    """The two predictions people compare: an empty cache and the app's whole context."""

    short: Prediction
    full: Prediction

    def as_dict(self) -> dict[str, Data]:
        short, full = self.short.tokens_per_s, self.full.tokens_per_s
        return {"predicted_tokens_per_s": None if short is None else round(short, 1),
                "predicted_full_context_tokens_per_s": None if full is None else round(full, 1),
                "predicted": self.short.as_dict(), "predicted_full_context": self.full.as_dict()}


def speeds(resolved: Resolved) -> Speeds | None:
    """Both predictions on the app's device; None when the device states no bandwidth (the roofline's rule too)."""
    if resolved.device.memory_bandwidth_gb_s is None:
        return None
    return Speeds(predict(resolved, SHORT_CONTEXT), predict(resolved, full_context(resolved)))


__all__ = ["ANY_ARCH", "BAND_FITTED", "BAND_KIN", "BAND_NO_FAMILY", "BAND_OTHER_DEVICE", "BLOCKS_PER_LAYER",
           "Coefficients", "FAMILIES", "KV_REFERENCE_BYTES", "Prediction", "Speeds", "blocks", "efficiency_for",
           "engine_kind", "family_of", "full_context", "model_family", "on_device", "predict", "speeds",
           "weights_class"]
