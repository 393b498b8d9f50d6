"""FIT001: the app's memory (weights, KV at its context, state, drafter, engine overheads) fits its HAMi cap;
FIT002: a stated cap does not lock away memory the app never uses; FIT003: the app leaves the room it declares."""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Callable, Iterable

from generator.core import Finding, Severity
from generator.fit import Fit
from generator.fit.estimate import estimate
from generator.fit import FAR_ABOVE_MIB
from generator.engines import Sized
from generator.engines import Value, decided
from generator.rules import AppContext, rule
from generator.rules.locate import fit, settings


def _trial(ctx: AppContext, tokens: int, cap: int | None = None) -> Fit:
    """The fit of the app at `tokens` of context and, when given, under a GPU memory cap of `cap` MiB."""
    r = ctx.resolved
    if cap is not None and cap != r.app.gpu_memory_mib:  # another cap: the settings decided under it (no argv)
        r = Sized(replace(r, app=r.app.model_copy(update={"gpu_memory_mib": cap})))  # the cap the trial decides
        return estimate(r, replace(decided(r), context=Value(tokens)))
    return estimate(r, replace(settings(ctx), context=Value(tokens)))


def max_context(ctx: AppContext, pool: str, margin: float = 0.0, *, high: int | None = None,
                cap: int | None = None, accept: Callable[[Fit], bool] | None = None) -> int:
    """The largest context (multiple of 1024, at most `high`, default the app's) whose estimate leaves `pool` at
    least `margin` MiB (or that `accept` accepts), under `cap` when given; 0 if none."""
    def fits(tokens: int) -> bool:
        trial = _trial(ctx, tokens, cap)
        return accept(trial) if accept is not None else trial.margin(pool) >= margin

    low, top = 0, (settings(ctx).context.value if high is None else high) // 1024
    while low < top:
        mid = (low + top + 1) // 2
        low, top = (mid, top) if fits(mid * 1024) else (low, mid - 1)
    return low * 1024


def _largest(result: Fit, pool: str, count: int = 3) -> str:
    parts = sorted((p for p in result.parts if p.pool == pool and p.mib > 0), key=lambda p: -p.mib)[:count]
    return ", ".join(f"{p.component} {p.mib:,.0f}" for p in parts)


def _weights(result: Fit, pool: str) -> float:
    return sum(p.mib for p in result.parts if p.component.startswith("weights") and p.pool == pool)


def _better(result: Fit) -> Callable[[Fit], bool]:
    """What a fix must reach: no FAIL (an error) for a failing app, FIT for a TIGHT one (a warning)."""
    if result.verdict == "TIGHT":
        return lambda trial: trial.verdict == "FIT"
    return lambda trial: trial.verdict != "FAIL"


def _fix(ctx: AppContext, result: Fit, pool: str) -> str:
    """The fix, computed: which constraint binds (the model's maximum context, the stated cap `gpu_memory_mib`, the
    context, the weights) and numbers that pass when applied, each tried on the fit before it is advised; never a
    context above the model's maximum."""
    s = settings(ctx)
    if pool == "outside":
        parts = {p.component for p in result.parts if p.pool == "outside"}
        if any("P5B" in c for c in parts):
            return "remove P5B (GENESIS_ENABLE_P5B*), or lower gpu_memory_utilization to leave room after the KV pool"
        return "lower gpu_memory_utilization so the cap keeps room for what is allocated after the KV pool"
    explain = f" (`catalog explain {ctx.app.name}` shows the breakdown)"
    passes = _better(result)
    context, most = s.context.value, ctx.resolved.model.architecture.max_context
    ceiling = min(context, most)
    model_name = ctx.resolved.model.name
    # vLLM's budget is utilization x the device's total, not the cap (docs/fit.md): raising the cap is no fix there
    stated = result.sizing.stated_mib if result.sizing is not None and not s.pool_from_device_total else None
    # 1. the model's maximum context binds: at that context the app fits as it is
    if context > most and passes(_trial(ctx, most)):
        return f"lower the context to at most {most:,} tokens ({model_name}'s maximum): the app fits there{explain}"
    at_ceiling = _trial(ctx, ceiling) if ceiling != context else result
    sizing = at_ceiling.sizing
    lower = f"lower the context to at most {most:,} tokens ({model_name}'s maximum), and " if context > most else ""
    # 2. the stated cap binds: the cap the fit sizes at this context is within the device and passes
    if stated is not None and sizing is not None and sizing.cap_mib > stated and \
            passes(_trial(ctx, ceiling, sizing.cap_mib)):
        weights = _weights(result, pool)
        why = (f"the weights alone ({weights:,.0f} MiB on the GPU) exceed gpu_memory_mib {stated:,}"
               if weights > stated else f"gpu_memory_mib {stated:,} is under what the app needs at {ceiling:,} tokens "
               f"({sizing.need_mib:,.0f} MiB + margin {sizing.margin_mib:,.0f})")
        return f"{why}: {lower}raise gpu_memory_mib to {sizing.cap_mib:,}, or leave it out (the fit sizes it){explain}"
    # 3. the context binds: the largest context that fits the most the device allows
    limit = sizing.limit_mib if sizing is not None else result.cap_mib
    cap = limit if stated is not None else None
    tokens = max_context(ctx, pool, high=ceiling, cap=cap, accept=passes)
    tried = _trial(ctx, tokens, cap) if tokens else None
    if tried is not None and stated is not None and tried.sizing is not None:
        sized = _trial(ctx, tokens, tried.sizing.cap_mib)  # the cap the fit sizes there, if it passes too
        if passes(sized):
            cap, tried = tried.sizing.cap_mib, sized
    if tried is not None and passes(tried):
        raising = cap is not None and stated is not None and cap > stated
        raise_cap = f"raise gpu_memory_mib to {cap:,} (or leave it out) and " if raising else ""
        spare = " to be FIT, not TIGHT" if result.verdict == "TIGHT" else ""
        more = f", or {s.also_shrinks}" if s.also_shrinks else ""
        return (f"{raise_cap}lower the context to at most {tokens:,} tokens{spare}: the most that fits "
                f"{limit:,} MiB on {ctx.resolved.device.name}; or a smaller KV type{more}{explain}")
    # 4. the weights bind: not even the smallest context fits the device
    floor = _trial(ctx, 1024, limit)
    fixed = floor.used(pool)
    weights = _weights(floor, pool)
    room = limit - (fixed - weights) - (floor.sizing.margin_mib if floor.sizing is not None else 0.0)
    return (f"the weights ({weights:,.0f} MiB) and what every context needs ({fixed - weights:,.0f} MiB) do not fit "
            f"{limit:,} MiB on {ctx.resolved.device.name} even at 1,024 tokens: use weights of at most "
            f"{max(room, 0.0):,.0f} MiB (a smaller quantization){explain}")


@rule("FIT001", "error", "the app fits its HAMi cap (error when FAIL, warning when TIGHT)",
      "An app that does not fit OOMs at boot (vLLM: 'KV cache is needed, which is larger than the available KV cache "
      "memory') or at the first long request (Fast 2.5.5: P5B + P38, '512 MiB requested when only 646 MiB free')",
      "generator/fit/estimate.py (docs/fit.md); docs/domain.md-§7, §8 R16, R40; Fast upgradeDescription 2.5.1-2.5.7")
def memory_fit(ctx: AppContext) -> Iterable[Finding]:
    result = fit(ctx)
    if result.verdict == "FIT":
        return
    pool = result.tightest
    severity: Severity = "error" if result.verdict == "FAIL" else "warning"
    message = f"{result.summary()}; largest parts: {_largest(result, pool.key)} MiB"
    fix = _fix(ctx, result, pool.key)
    if _follows_context_limit(ctx, fix):  # one error per cause: ENG010 says it, and its fix makes the app fit
        severity, message = "info", f"{message} (after the error above: ENG010, the context past the model's maximum)"
    yield ctx.finding("FIT001", severity, message, fix, "context_length")


def _follows_context_limit(ctx: AppContext, fix: str) -> bool:
    """The app fails only because its context is above the model's maximum, where ENG010 fails it: at the maximum
    it fits (the fix says so)."""
    most, s = ctx.resolved.model.architecture.max_context, settings(ctx)
    allowed = s.long_context_allowed(ctx.engine)  # rules/engine.py ENG010: then only a warning, FIT001 stays
    return not allowed and s.context.value > most and \
        fix.startswith(f"lower the context to at most {most:,} tokens (") and "the app fits there" in fix


@rule("FIT002", "warning", "a stated gpu_memory_mib is not far above what the fit sizes (at most 2 GiB more)",
      "HAMi reserves the whole stated cap on the card: memory the app never uses is locked away from every other app "
      "(2 GiB holds a small speech app, e.g. the maintainer's OmniVoice '~2GB VRAM')",
      "generator/fit/sizing.py (docs/fit.md 'GPU memory sized by the fit'); HAMi nvidia.com/gpumem scheduling")
def cap_far_above_need(ctx: AppContext) -> Iterable[Finding]:
    sizing = fit(ctx).sizing
    if sizing is None or sizing.stated_mib is None or sizing.locked_mib < FAR_ABOVE_MIB:
        return
    yield ctx.finding("FIT002", "warning", f"gpu_memory_mib {sizing.stated_mib:,} locks away {sizing.locked_mib:,} MiB "
                      f"the app does not need: the fit sizes it at {sizing.cap_mib:,} MiB (need {sizing.need_mib:,.0f} "
                      f"+ margin {sizing.margin_mib:,.0f})",
                      f"leave gpu_memory_mib out (the fit sets {sizing.cap_mib:,}) or state {sizing.cap_mib:,}",
                      "gpu_memory_mib")


@rule("FIT003", "error", "the app leaves the GPU room it declares (gpu_room) on its device",
      "A voice app sized to share the card with its speech stack must leave that stack its memory, or one of them "
      "cannot start (the maintainer's E2B: '~12GB total with STT+TTS'; E4B: util 0.85 'leaves room for TTS')",
      "generator/fit/sizing.py; catalog/apps gpu_room sources")
def leaves_room(ctx: AppContext) -> Iterable[Finding]:
    room = ctx.app.gpu_room
    sizing = fit(ctx).sizing
    if room is None or sizing is None:
        return
    device = ctx.resolved.device
    cap = ctx.app.gpu_memory_mib or sizing.cap_mib
    if sizing.stated_mib is not None and cap + room.mib > device.memory_mib:
        yield ctx.finding("FIT003", "error", f"gpu_memory_mib {cap:,} + the {room.mib:,} MiB left for {room.beside} "
                          f"exceed {device.name}'s {device.memory_mib:,} MiB",
                          f"state at most {device.memory_mib - room.mib:,}, or leave gpu_memory_mib out",
                          "gpu_memory_mib")
    elif sizing.stated_mib is None and not sizing.fits_limit:
        yield ctx.finding("FIT003", "error", f"needs {sizing.need_mib:,.0f} MiB + margin {sizing.margin_mib:,.0f}, "
                          f"more than the {sizing.limit_mib:,} MiB it may take while leaving {room.mib:,} MiB for "
                          f"{room.beside}", "lower the context, the KV type or the batch (max-num-seqs), or the room",
                          "gpu_room")
