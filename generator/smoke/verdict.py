"""Judge a smoke: pass, regression, fail, suspect or error, against the app's baseline and its physical bound.

Baseline: the app's last smoke ACCEPTED as a baseline on the same stack image (`catalog smoke
--accept-baseline` on a pass), else its most recent recorded benchmark (app.benchmarks). A pass alone
never moves the baseline: a tiny model on CPU answering under the app's alias would otherwise become the
figure every real smoke is compared with. A drop of more than the tolerance (default 10 %) is a regression —
the Lucebox v1.9.0 rebuild, 88.5 -> 69 t/s (-22 %), is the case this exists for (docs/domain.md#crash-rules).

- `error`: nothing could be measured (connection refused, DNS, a timeout before the first token). Printed,
  exit 1, not written to the ledger unless asked, and ignored by the prune gate.
- `fail`: any failure reason (wrong identity, not ready, wrong model or context, HTTP error, empty or
  degenerate output, speculation off), whatever the speed.
- `suspect`: the figure is above `bound_tps`, the fastest this app can physically decode (its roofline,
  given by the caller with a short reason): not this app's figure, never a pass.
- `regression`: below the baseline by more than the tolerance, or a measured speculative acceptance below
  `acceptance_floor`. With no accepted smoke and no benchmark, the baseline is the speed model's prediction
  (generator/fit/speed.py), with its band as the tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal
from collections.abc import Iterable

from generator.schema import App
from generator.smoke.identity import prompt_set_sha256
from generator.smoke.ledger import RunRecord, SmokeRecord
from generator.smoke.run import Measurement, Run, clean

Verdict = Literal["pass", "regression", "fail", "suspect", "error"]
DEFAULT_TOLERANCE = 0.10


@dataclass(frozen=True)
class Baseline:
    tokens_per_s: float
    source: str  # e.g. "benchmark 2026-05-04 (Lucebox v1.4.4)"
    tolerance: float | None = None  # a predicted baseline's own band (generator/fit/speed.py), wider than a smoke's


def baseline_for(app: App, image: str, history: Iterable[SmokeRecord]) -> Baseline | None:
    """The last smoke of `app` on `image` accepted as a baseline, else its most recent benchmark, else None."""
    for record in reversed(list(history)):
        if record.accepted_baseline and record.verdict == "pass" and record.image == image and record.tokens_per_s:
            return Baseline(record.tokens_per_s, f"smoke {record.date}, chart {record.chart_version}, accepted")
    bench = app.last_benchmark
    if bench is None:
        return None
    return Baseline(bench.tokens_per_s, f"benchmark {bench.date.isoformat()}, {bench.image or bench.method}")


def judge(tokens_per_s: float | None, failures: list[str], baseline: Baseline | None,
          tolerance: float = DEFAULT_TOLERANCE, *, bound_tps: float | None = None, bound_reason: str = "",
          acceptance: float | None = None, acceptance_floor: float | None = None,
          error: str | None = None) -> tuple[Verdict, list[str]]:
    """The verdict and the reasons behind it (empty for a pass)."""
    if error is not None:
        return "error", [f"could not measure: {error}"]
    if failures:
        return "fail", list(failures)
    if not tokens_per_s:
        return "fail", ["no throughput was measured"]
    reasons: list[str] = []
    if bound_tps is not None and tokens_per_s > bound_tps * (1 + 1e-9):
        why = f" ({bound_reason})" if bound_reason else ""
        reasons.append(f"{tokens_per_s:.1f} t/s is above {bound_tps:.1f} t/s, the fastest this app can decode"
                       f"{why}: this figure is not this app's (another model or a cache answered)")
    if acceptance_floor is not None and acceptance is not None and acceptance < acceptance_floor - 1e-9:
        reasons.append(f"speculative acceptance {acceptance:.1%} is below the floor {acceptance_floor:.0%}: "
                       "the drafter is not the app's, or speculation is broken")
    if baseline is not None:
        drop = 1.0 - tokens_per_s / baseline.tokens_per_s
        tolerance = max(tolerance, baseline.tolerance or 0.0)
        if drop > tolerance + 1e-9:
            reasons.append(f"{tokens_per_s:.1f} t/s is {drop:.1%} below the baseline {baseline.tokens_per_s:.1f} "
                           f"t/s ({baseline.source}); the tolerance is {tolerance:.0%}")
    if bound_tps is not None and tokens_per_s > bound_tps * (1 + 1e-9):
        return "suspect", reasons
    return ("regression", reasons) if reasons else ("pass", [])


def conclude(measurement: Measurement, app: App, history: Iterable[SmokeRecord], *, endpoint: str, max_tokens: int,
             tolerance: float = DEFAULT_TOLERANCE, date: str, bound_tps: float | None = None,
             bound_reason: str = "", acceptance_floor: float | None = None,
             runs_requested: int | None = None, chart_content: str | None = None, accept_baseline: bool = False,
             image: str | None = None, predicted: Baseline | None = None) -> SmokeRecord:
    """Baseline + verdict + figures of one smoke, as the record the ledger keeps and --json prints.

    `bound_tps` (with `bound_reason`): the fastest the app can decode (its roofline), None when unknown;
    `acceptance_floor`: the least speculative acceptance the app's stack gives, None when unknown. `image`:
    the image observed on the pod, when the caller read it; else the catalog's, and the row says so. `predicted`:
    the speed model's figure for this app (generator/fit/speed.py, its band as the tolerance): the baseline where no
    accepted smoke or benchmark exists, and a note of measured / predicted on every smoke."""
    target = measurement.target
    bound, reason, floor = bound_tps, bound_reason, acceptance_floor
    baseline = baseline_for(app, target.image, history) or predicted
    acceptance = measurement.acceptance
    acceptance = acceptance if acceptance is not None and 0 <= acceptance <= 1 else None
    verdict, reasons = judge(measurement.tokens_per_s, measurement.failures, baseline, tolerance,
                             bound_tps=bound, bound_reason=reason, acceptance=acceptance, acceptance_floor=floor,
                             error=measurement.error)
    notes = list(measurement.notes)
    if predicted is not None and measurement.tokens_per_s:
        ratio = measurement.tokens_per_s / predicted.tokens_per_s
        notes.append(f"measured {measurement.tokens_per_s:.1f} t/s = {ratio:.0%} of the predicted "
                     f"{predicted.tokens_per_s:.1f} t/s ({predicted.source})")
    if floor is not None and target.speculative and acceptance is None and verdict != "error":
        notes.append(f"speculative acceptance was not measured; the floor {floor:.0%} is not checked")
    accepted = accept_baseline and verdict == "pass"
    if accept_baseline and not accepted:
        notes.append(f"--accept-baseline: not accepted, the verdict is {verdict} (only a pass becomes the baseline)")
    return SmokeRecord(
        app=target.app, endpoint=clean(endpoint), chart_version=target.chart_version, image=image or target.image,
        date=date, runs=tuple(_run(r) for r in measurement.runs),
        tokens_per_s=_round(measurement.tokens_per_s, 2),
        acceptance=_round(acceptance, 4),
        baseline_tokens_per_s=_round(baseline.tokens_per_s if baseline else None, 2),
        verdict=verdict, reasons=tuple(clean(r) for r in reasons),
        decode_tokens_per_s=_round(measurement.decode_tokens_per_s, 2), ttft_s=_round(measurement.ttft_s, 3),
        baseline=baseline.source if baseline else None, max_tokens=max_tokens,
        notes=tuple(clean(n) for n in notes),
        identity=measurement.identity, identity_matched=tuple(measurement.matched),
        image_source="observed" if image else "catalog", chart_content=chart_content, tolerance=tolerance,
        runs_requested=runs_requested, prompt_sha256=prompt_set_sha256(target.prompts, max_tokens),
        bound_tokens_per_s=_round(bound, 2), acceptance_floor=floor, accepted_baseline=accepted,
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
