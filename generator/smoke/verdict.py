"""Judge a smoke: pass, regression or fail, against the app's baseline.

Baseline: the app's last passing smoke on the same stack image (ledger), else its most recent
recorded benchmark (app.benchmarks). A drop of more than the tolerance (default 10 %) is a
regression — the Lucebox v1.9.0 rebuild, 88.5 -> 69 t/s (-22 %), is the case this exists for
(docs/domain.md#crash-rules). Any failure reason (not ready, wrong model or context, HTTP error, timeout,
empty or degenerate output, speculation off) makes it a fail, whatever the speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal
from collections.abc import Iterable

from generator.schema import App
from generator.smoke.ledger import RunRecord, SmokeRecord
from generator.smoke.run import Measurement, Run, clean

Verdict = Literal["pass", "regression", "fail"]
DEFAULT_TOLERANCE = 0.10


@dataclass(frozen=True)
class Baseline:
    tokens_per_s: float
    source: str  # e.g. "benchmark 2026-05-04 (Lucebox v1.4.4)"


def baseline_for(app: App, image: str, history: Iterable[SmokeRecord]) -> Baseline | None:
    """The last passing smoke of `app` on `image`, else its most recent benchmark, else None."""
    for record in reversed(list(history)):
        if record.verdict == "pass" and record.image == image and record.tokens_per_s:
            return Baseline(record.tokens_per_s, f"smoke {record.date}, chart {record.chart_version}")
    bench = app.last_benchmark
    if bench is None:
        return None
    return Baseline(bench.tokens_per_s, f"benchmark {bench.date.isoformat()}, {bench.image or bench.method}")


def judge(tokens_per_s: float | None, failures: list[str], baseline: Baseline | None,
          tolerance: float = DEFAULT_TOLERANCE) -> tuple[Verdict, list[str]]:
    """The verdict and the reasons behind it (empty for a pass)."""
    if failures:
        return "fail", list(failures)
    if not tokens_per_s:
        return "fail", ["no throughput was measured"]
    if baseline is None:
        return "pass", []
    drop = 1.0 - tokens_per_s / baseline.tokens_per_s
    if drop > tolerance + 1e-9:
        return "regression", [f"{tokens_per_s:.1f} t/s is {drop:.1%} below the baseline "
                              f"{baseline.tokens_per_s:.1f} t/s ({baseline.source}); the tolerance is {tolerance:.0%}"]
    return "pass", []


def conclude(measurement: Measurement, app: App, history: Iterable[SmokeRecord], *, endpoint: str, max_tokens: int,
             tolerance: float = DEFAULT_TOLERANCE, date: str) -> SmokeRecord:
    """Baseline + verdict + figures of one smoke, as the record the ledger keeps and --json prints."""
    target = measurement.target
    baseline = baseline_for(app, target.image, history)
    verdict, reasons = judge(measurement.tokens_per_s, measurement.failures, baseline, tolerance)
    acceptance = measurement.acceptance
    return SmokeRecord(
        app=target.app, endpoint=clean(endpoint), chart_version=target.chart_version, image=target.image, date=date,
        runs=tuple(_run(r) for r in measurement.runs),
        tokens_per_s=_round(measurement.tokens_per_s, 2),
        acceptance=_round(acceptance, 4) if acceptance is not None and 0 <= acceptance <= 1 else None,
        baseline_tokens_per_s=_round(baseline.tokens_per_s if baseline else None, 2),
        verdict=verdict, reasons=tuple(clean(r) for r in reasons),
        decode_tokens_per_s=_round(measurement.decode_tokens_per_s, 2), ttft_s=_round(measurement.ttft_s, 3),
        baseline=baseline.source if baseline else None, max_tokens=max_tokens,
        notes=tuple(clean(n) for n in measurement.notes),
    )


def _run(run: Run) -> RunRecord:
    return RunRecord(cold=run.cold, ttft_s=_round(run.ttft_s, 3), completion_tokens=run.completion_tokens,
                     tokens_per_s=_round(run.tokens_per_s, 2), e2e_tokens_per_s=_round(run.e2e_tokens_per_s, 2),
                     acceptance=_round(run.acceptance, 4)
                     if run.acceptance is not None and run.acceptance <= 1 else None)


def _round(value: float | None, digits: int) -> float | None:
    """`value` rounded; None when absent, not finite or negative (no figure a ledger row may hold)."""
    if value is None or not math.isfinite(value) or value < 0:
        return None
    return round(float(value), digits)
