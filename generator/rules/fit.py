"""FIT001: the app's memory (weights, KV at its context, state, drafter, engine overheads) fits its HAMi cap."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from generator.core.findings import Finding, Severity
from generator.fit.estimate import Fit, estimate
from generator.engines.settings import Value
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
    if s.engine == "vllm":
        return f"{hint}, a smaller KV type, or fewer speculative tokens (`catalog explain {ctx.app.name}` shows the breakdown)"
    return f"{hint} or a smaller KV type (`catalog explain {ctx.app.name}` shows the breakdown)"


@rule("FIT001", "error", "the app fits its HAMi cap (error when FAIL, warning when TIGHT)",
      "An app that does not fit OOMs at boot (vLLM: 'KV cache is needed, which is larger than the available KV cache "
      "memory') or at the first long request (Fast 2.5.5: P5B + P38, '512 MiB requested when only 646 MiB free')",
      "generator/fit/estimate.py (docs/fit.md); stacks.md §6-§7, §8 R16, R40; Fast upgradeDescription 2.5.1-2.5.7")
def memory_fit(ctx: AppContext) -> Iterable[Finding]:
    result = fit(ctx)
    if result.verdict == "FIT":
        return
    pool = result.tightest
    severity: Severity = "error" if result.verdict == "FAIL" else "warning"
    message = f"{result.summary()}; largest parts: {_largest(result, pool.key)} MiB"
    yield ctx.finding("FIT001", severity, message, _fix(ctx, result, pool.key), "context_length")
