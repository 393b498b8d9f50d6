"""FIT001: the app's memory (weights, KV at its context, state, drafter, engine overheads) fits its HAMi cap;
FIT002: a stated cap does not lock away memory the app never uses; FIT003: the app leaves the room it declares."""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Iterable

from generator.core.findings import Finding, Severity
from generator.fit.estimate import Fit, estimate
from generator.fit.sizing import FAR_ABOVE_MIB
from generator.engines.settings import Value, VllmSettings
from generator.rules import AppContext, rule
from generator.rules.locate import fit, settings


def max_context(ctx: AppContext, pool: str, margin: float = 0.0) -> int:
    """The largest context (multiple of 1024) whose estimate leaves `pool` at least `margin` MiB; 0 if none."""
    s = settings(ctx)

    def fits(tokens: int) -> bool:
        trial: Fit = estimate(ctx.resolved, ctx.engine, replace(s, context=Value(tokens)))
        return trial.margin(pool) >= margin

    low, high = 0, s.context.value // 1024
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid * 1024) else (low, mid - 1)
    return low * 1024


def _largest(result: Fit, pool: str, count: int = 3) -> str:
    parts = sorted((p for p in result.parts if p.pool == pool and p.mib > 0), key=lambda p: -p.mib)[:count]
    return ", ".join(f"{p.component} {p.mib:,.0f}" for p in parts)


def _fix(ctx: AppContext, result: Fit, pool: str) -> str:
    s = settings(ctx)
    if pool == "outside":
        parts = {p.component for p in result.parts if p.pool == "outside"}
        if any("P5B" in c for c in parts):
            return "remove P5B (GENESIS_ENABLE_P5B*), or lower gpu_memory_utilization to leave room after the KV pool"
        return "lower gpu_memory_utilization so the cap keeps room for what is allocated after the KV pool"
    tight = result.verdict == "TIGHT"
    tokens = max_context(ctx, pool, result.tight_mib if tight else 0.0)
    goal = f" to keep {result.tight_mib:,.0f} MiB spare" if tight else ""
    hint = f"lower the context to at most {tokens:,} tokens{goal}" if tokens else "use smaller weights"
    if isinstance(s, VllmSettings):  # its speculative tokens take KV pool too
        return (f"{hint}, a smaller KV type, or fewer speculative tokens "
                f"(`catalog explain {ctx.app.name}` shows the breakdown)")
    return f"{hint} or a smaller KV type (`catalog explain {ctx.app.name}` shows the breakdown)"


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
    yield ctx.finding("FIT001", severity, message, _fix(ctx, result, pool.key), "context_length")


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
