"""Speculative-decoding acceptance, read back from a running server.

- llama.cpp (and forks): the response's `timings.draft_n` / `timings.draft_n_accepted`
  (docs/domain.md; `draft_n` is the ground truth that speculation is live).
- vLLM: deltas of the `/metrics` counters `vllm:spec_decode_num_accepted_tokens_total` and
  `vllm:spec_decode_num_draft_tokens_total` around a request (docs/domain.md), parsed with
  prometheus_client's text parser. Only the exact `_total` samples count: the `_created`
  timestamps and the `_per_pos_total` breakdown of the same families are left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from generator.core import require

ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
DRAFTED = "vllm:spec_decode_num_draft_tokens_total"


@dataclass(frozen=True)
class SpecCounts:
    """Draft tokens proposed and accepted (cumulative, or a delta between two scrapes)."""

    drafted: float
    accepted: float

    def __sub__(self, before: SpecCounts) -> SpecCounts:
        return SpecCounts(self.drafted - before.drafted, self.accepted - before.accepted)

    @property
    def plausible(self) -> bool:
        """Finite, not negative, and no more accepted than drafted (a hostile server may say anything)."""
        return (math.isfinite(self.drafted) and math.isfinite(self.accepted)
                and 0 <= self.accepted <= self.drafted)

    @property
    def acceptance(self) -> float | None:
        return self.accepted / self.drafted if self.plausible and self.drafted > 0 else None


def vllm_counts(text: str, model: str | None = None) -> SpecCounts | None:
    """The spec-decode counters in a Prometheus exposition, summed over engines; None when absent.

    When samples carry a `model_name` label and one matches `model`, only those are counted.
    Raises ValueError on text that is not Prometheus exposition format.
    """
    parser = require("prometheus_client.parser", "smoke")

    samples = [s for family in parser.text_string_to_metric_families(text) for s in family.samples
               if s.name in (ACCEPTED, DRAFTED)]
    if not samples:
        return None
    if model is not None and any(s.labels.get("model_name") == model for s in samples):
        samples = [s for s in samples if s.labels.get("model_name") == model]
    total = {ACCEPTED: 0.0, DRAFTED: 0.0}
    for sample in samples:
        total[sample.name] += float(sample.value)
    return SpecCounts(drafted=total[DRAFTED], accepted=total[ACCEPTED])


def llamacpp_counts(timings: Any) -> SpecCounts | None:
    """`draft_n` / `draft_n_accepted` from a llama.cpp `timings` object; None when speculation is off."""
    if not isinstance(timings, dict):
        return None
    drafted, accepted = timings.get("draft_n"), timings.get("draft_n_accepted")
    if not isinstance(drafted, (int, float)) or isinstance(drafted, bool):
        return None
    if not isinstance(accepted, (int, float)) or isinstance(accepted, bool):
        accepted = 0
    return SpecCounts(drafted=float(drafted), accepted=float(accepted))
