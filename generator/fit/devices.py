"""Per device: what the fit gives an app on its own device and on each more device it targets (`devices:`,
docs/devices.md), from the same model facts.

For each device the plan says whether the app runs there at all (an exclusion names why: no image for the device's
CPU, no kernels for the weights or the KV cache on its GPU, nothing fits), and else

    context  = the entry's, or the largest that fits the device's limit (generator/fit/sizing.py `limit`), in steps of
               1,024 tokens, up to the model's maximum
    KV type  = the entry's, or (llama.cpp) of f16, q8_0 and the app's own the one that reaches the longest context,
               the more precise on a tie
    envelope = the sized GPU memory at that context (sizing.py), with its verdict
    roofline = the decode bound at an empty and at a full cache (roofline.py)

and what it gave up against the model's maximum and the app's own device. One plan per device, computed once, is
what `explain --device` and `list --device` show. The estimate and the roofline are imported where a plan is made: a
render only asks `variant_on`, which sizes (and rarely estimates) an app.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.catalog import Resolved, Target
from generator.core import Data
from generator.engines import Sized
from generator.engines import AnySettings, decided
from generator.fit.sizing import limit, size_gpu, sized
from generator.fit.ledger import Verdict, cap_mib
from generator.schema import SM

STEP_TOKENS = 1024  # a chosen context is a whole number of these (or the model's maximum)
# The kernels a GPU generation brings (compute capability, major.minor):
# - FP8 (E4M3/E5M2) tensor cores arrive with Ada, sm_89: vLLM's FP8 KV cache and FP8 weights need them;
# - NVFP4 (the FP4 tensor-core format) is Blackwell's, sm_100 and up (datacenter sm_100, GB10 sm_121, RTX 50 sm_120).
FP8_MIN = (8, 9)
NVFP4_MIN = (10, 0)
# llama.cpp KV types tried where the entry states none, most precise first (the app's own is tried last)
LLAMA_KV_LADDER = ("f16", "q8_0")


@dataclass(frozen=True)
class DevicePlan:
    """What the fit gives one app on one device; `excluded` non-empty: it does not run there, and why."""

    app: str
    device: str
    name: str
    accelerator: str  # the Olares spec.accelerator mode
    stack: str
    primary: bool  # the app's own `device`
    excluded: tuple[str, ...] = ()
    context: int = 0
    context_chosen: bool = False  # the fit chose it (the entry states none)
    max_context: int = 0
    kv: str = ""
    gpu_mib: int = 0  # the envelope: the sized (or stated) GPU memory
    limit_mib: int = 0
    verdict: str = ""
    roof_empty_tps: float | None = None
    roof_full_tps: float | None = None
    gave_up: tuple[str, ...] = ()

    @property
    def runs(self) -> bool:
        return not self.excluded

    def to_data(self) -> dict[str, Data]:
        return {"app": self.app, "device": self.device, "name": self.name, "accelerator": self.accelerator,
                "stack": self.stack, "primary": self.primary, "excluded": list(self.excluded),
                "context": self.context, "context_chosen": self.context_chosen, "max_context": self.max_context,
                "kv": self.kv, "gpu_mib": self.gpu_mib, "limit_mib": self.limit_mib, "verdict": self.verdict,
                "roof_empty_tokens_per_s": None if self.roof_empty_tps is None else round(self.roof_empty_tps, 1),
                "roof_full_tokens_per_s": None if self.roof_full_tps is None else round(self.roof_full_tps, 1),
                "gave_up": list(self.gave_up)}


def exclusions(r: Resolved) -> list[str]:
    """Why `r` cannot run on its device at all, before any memory is counted (empty: it can)."""
    device, stack = r.device, r.stack
    out = []
    if device.cpu_arch not in stack.platforms:
        out.append(f"stack {stack.id} publishes {'/'.join(stack.platforms)} images only; "
                   f"{device.name} is {device.cpu_arch}")
    cc = device.compute_capability
    if stack.cuda_archs and not any(_runs(cc, arch) for arch in stack.cuda_archs):
        out.append(f"stack {stack.id}'s kernels are built for {', '.join(stack.cuda_archs)} only; {device.name} is "
                   f"{device.arch}")
    weight = r.model.weight(r.app.quantization)
    if weight is not None and weight.format == "nvfp4" and cc < NVFP4_MIN:
        out.append(f"weights {weight.quant} are NVFP4, whose kernels are Blackwell's (sm_100+); {device.name} is "
                   f"{device.arch}")
    if weight is not None and weight.format == "fp8" and cc < FP8_MIN:
        out.append(f"weights {weight.quant} are FP8, whose kernels need Ada or newer (sm_89+); {device.name} is "
                   f"{device.arch}")
    kv = r.app.kv_cache_type or ""
    if kv.startswith("fp8") and cc < FP8_MIN:
        out.append(f"KV cache {kv} is FP8, whose kernels need Ada or newer (sm_89+); {device.name} is {device.arch}")
    return out


def _runs(cc: tuple[int, int], arch: str) -> bool:
    """A cubin built for `arch` runs on compute capability `cc`: the same major revision, a minor at least its own
    (NVIDIA's CUDA C++ Programming Guide, "Binary Compatibility")."""
    m = SM.match(arch)
    return m is not None and cc[0] == int(m.group(1)) and cc[1] >= int(m.group(2))


def _with(r: Resolved, **update: object) -> Resolved:
    return replace(r, app=r.app.model_copy(update=update))


def _fits(r: Resolved, tokens: int) -> bool:
    trial = _with(r, context_length=tokens)
    if r.app.gpu_memory_mib is None:
        return size_gpu(trial).fits_limit
    from generator.fit.estimate import estimate

    planned = Sized(trial)  # its GPU memory is stated (or the fit's): nothing to size, straight to its engine
    return estimate(planned, decided(planned)).verdict != "FAIL"


def largest_fitting(r: Resolved) -> int:
    """The largest context (a multiple of STEP_TOKENS, or the model's maximum) at which `r` fits its device; 0 if not
    even one step does."""
    top = r.model.architecture.max_context
    if _fits(r, top):
        return top
    low, high = 0, top // STEP_TOKENS  # in steps; `low` fits (0: none known to)
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if _fits(r, mid * STEP_TOKENS) else (low, mid - 1)
    return low * STEP_TOKENS


def _kv_label(r: Resolved) -> str:
    return _kv_of(decided(sized(r)))


def _kv_of(s: AnySettings) -> str:
    k, v = str(s.kv_k.value), str(s.kv_v.value)
    return k if k == v else f"K {k} / V {v}"


def _llama_server(r: Resolved) -> bool:
    """The app runs llama-server, whose -ctk/-ctv take the ggml KV types of LLAMA_KV_LADDER."""
    return decided(sized(r)).kv_ladder


def _choose(r: Resolved, entry_kv: bool) -> tuple[Resolved, int]:
    """The KV type and context of a variant whose entry states no context: per candidate type its largest fitting
    context; the longest wins, the more precise on a tie."""
    candidates = [r]
    if not entry_kv and _llama_server(r) and r.app.kv_cache_type not in LLAMA_KV_LADDER:
        candidates = [_with(r, kv_cache_type=t, kv_cache_type_v=None) for t in LLAMA_KV_LADDER] + [r]
    best, best_ctx = r, -1
    for candidate in candidates:
        ctx = largest_fitting(candidate)
        if ctx > best_ctx:
            best, best_ctx = candidate, ctx
    return best, best_ctx


def _settle(r: Resolved, target: Target | None) -> tuple[Resolved | None, tuple[str, ...], bool]:
    """The app as it runs on `r`'s device, its context and KV type chosen where the entry states none (unsized);
    else None and why it does not run there. The flag: the fit chose the context."""
    excluded = exclusions(r)
    if excluded:
        return None, tuple(excluded), False
    if target is None or target.entry.context_length is not None:
        return r, (), False
    r, context = _choose(r, target.entry.kv_cache_type is not None)
    if context == 0:
        need = size_gpu(_with(r, context_length=STEP_TOKENS))
        return None, (f"does not fit: {need.need_mib + need.margin_mib:,.0f} MiB at {STEP_TOKENS:,} tokens, above "
                      f"{need.limit_mib:,} MiB ({need.limited_by})",), True
    return _with(r, context_length=context), (), True


def _plan_one(r: Resolved, primary: Resolved, target: Target | None) -> DevicePlan:
    from generator.fit.estimate import estimate
    from generator.fit.roofline import roofline

    device = r.device
    head = DevicePlan(app=primary.app.name, device=device.id, name=device.name, accelerator=device.accelerator,
                      stack=r.stack.id, primary=target is None, max_context=r.model.architecture.max_context)
    settled, excluded, chosen = _settle(r, target)
    if settled is None:
        return replace(head, excluded=excluded)
    planned = sized(settled)
    s = decided(planned)  # decided once, no argv: the fit, the rooflines and the KV label read them
    fit = estimate(planned, s)
    context = planned.app.context_length
    empty, full = roofline(planned, 0, settings=s), roofline(planned, context, settings=s)
    verdict, over = judged_on_device(planned, fit.verdict) if target is not None else (fit.verdict, ())
    kv = _kv_of(s)
    return replace(head, context=context, context_chosen=chosen, kv=kv,
                   gpu_mib=cap_mib(planned), limit_mib=limit(settled)[0], verdict=verdict,
                   roof_empty_tps=empty.bound_tps if empty else None, roof_full_tps=full.bound_tps if full else None,
                   gave_up=tuple(_gave_up(planned, primary, target, chosen, kv)) + over)


def judged_on_device(planned: Resolved, verdict: Verdict) -> tuple[Verdict, tuple[str, ...]]:
    """`verdict` (the fit against the envelope a `devices:` entry states) judged against the device itself: an
    envelope larger than the card's memory never fits, whatever the fit found inside it (issue 40: an entry asking
    1 TiB on a 24 GB card was FIT). (verdict, why it changed). The app's own device is left to the HAMi rules: a
    measured envelope there may exceed the card on purpose."""
    cap = planned.app.gpu_memory_mib
    device = planned.device
    if cap is None or cap <= device.memory_mib:
        return verdict, ()
    return "FAIL", (f"asks {cap:,} MiB of GPU memory; {device.name} has {device.memory_mib:,} MiB",)


def variant_on(r: Resolved, device_id: str) -> Resolved | None:
    """`r` as it runs on `device_id` (its own device: `r`; a `devices:` entry: the variant with the context and KV
    type the fit chose, unsized); None when it does not target the device or does not run there."""
    if r.device.id == device_id:
        return r
    target = next((t for t in r.targets if t.device.id == device_id), None)
    return None if target is None else _settle(r.on(target), target)[0]


def _gave_up(r: Resolved, primary: Resolved, target: Target | None, chosen: bool, kv: str) -> list[str]:
    """What the app gives up on its device (`kv`: its KV label there)."""
    out = []
    top = r.model.architecture.max_context
    context = r.app.context_length
    if context < top:
        why = (f"the KV of more does not fit {r.device.name}'s limit" if chosen else "as the app states")
        out.append(f"context {context:,} of the model's {top:,} ({why})")
    if target is None:
        return out
    own = primary.app
    if context < own.context_length:
        out.append(f"a shorter context than on {primary.device.name} ({own.context_length:,})")
    own_kv = _kv_label(primary)
    if kv != own_kv:
        out.append(f"KV {kv} instead of {own_kv}")
    if own.speculative is not None and r.app.speculative is None:
        out.append(f"no {own.speculative.method} speculation (stack {r.stack.id})")
    if r.stack.id != primary.stack.id:
        out.append(f"stack {r.stack.id} instead of {primary.stack.id}")
    return out


def device_plans(r: Resolved) -> tuple[DevicePlan, ...]:
    """The app on its own device, then on each device of `devices:` in its order."""
    own = _plan_one(r, r, None)
    return (own, *(_plan_one(r.on(t), r, t) for t in r.targets))


def device_plan(r: Resolved, device_id: str) -> DevicePlan | None:
    """The plan of `r` on `device_id`, None when the app does not target it."""
    if r.device.id == device_id:
        return _plan_one(r, r, None)
    target = next((t for t in r.targets if t.device.id == device_id), None)
    return None if target is None else _plan_one(r.on(target), r, target)


__all__ = ["FP8_MIN", "NVFP4_MIN", "DevicePlan", "device_plan", "device_plans", "exclusions", "judged_on_device",
           "largest_fitting", "variant_on"]
