"""The memory fit: what an app allocates on its GPU against the HAMi cap it runs under -> FIT / TIGHT / FAIL.

An estimate is a list of parts (component, MiB, note), each drawn from a pool with a capacity:
- vLLM: `budget` = gpu_memory_utilization x the total vLLM reads (the device's `reported_total`: on the Olares
  One the card's 24,463 MiB, not the HAMi cap; docs/fit.md), which must hold weights, activations, graphs and
  then the KV of one request at the full context; `outside` = the HAMi cap minus the budget, which must hold what
  is allocated after vLLM sized its KV pool (Genesis P38's lazy workspace, P5B's padded pages, CUDA graphs when
  they are not profiled).
- llama.cpp and forks: one pool, the cap.
The engine modules (`fit/vllm.py`, `fit/llamacpp.py`; their shared types in `fit/ledger.py`) build the parts;
measured rows of the catalog (`calibration:` on the app or the model) replace or scale the estimate where they
apply. docs/fit.md explains every formula and assumption.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from generator.core import Data
from generator.engines import Sized
from generator.engines import AnySettings, decided
from generator.fit.ledger import (KV_COMPONENTS, TIGHT_FRACTION, TIGHT_MIN_MIB, Ledger, Part, Pool, Verdict, cap_mib,
                                  verdict_of)
from generator.fit.sizing import GpuSizing, place, size_from

@dataclass(frozen=True)
class Fit:
    app: str
    engine: str
    cap_mib: int
    context: int
    verdict: Verdict
    pools: tuple[Pool, ...]
    parts: tuple[Part, ...]
    assumptions: tuple[str, ...]
    calibrated: tuple[str, ...]
    facts: tuple[str, ...] = ()
    sizing: GpuSizing | None = None  # what the fit gives this app as GPU memory (generator/fit/sizing.py)

    def used(self, pool: str) -> float:
        return sum(p.mib for p in self.parts if p.pool == pool)

    def margin(self, pool: str) -> float:
        return next(p.capacity_mib for p in self.pools if p.key == pool) - self.used(pool)

    def part(self, component: str) -> Part | None:
        return next((p for p in self.parts if p.component == component), None)

    def kv_needed_mib(self, pool: str = "budget") -> float:
        return sum(p.mib for p in self.parts if p.pool == pool and p.component.startswith(KV_COMPONENTS))

    def kv_available_mib(self, pool: str = "budget") -> float:
        """What the pool leaves for KV once everything else is placed (vLLM: util x cap - non-KV)."""
        return self.margin(pool) + self.kv_needed_mib(pool)

    @property
    def tightest(self) -> Pool:
        return min(self.pools, key=lambda p: self.margin(p.key))

    @property
    def tight_mib(self) -> float:
        return max(TIGHT_MIN_MIB, TIGHT_FRACTION * self.cap_mib)

    def breakdown(self) -> list[tuple[str, float, str]]:
        """(component, MiB, note) rows, pool by pool, each pool closed by its capacity and margin."""
        rows: list[tuple[str, float, str]] = []
        for pool in self.pools:
            rows += [(p.component, round(p.mib, 1), p.note) for p in self.parts if p.pool == pool.key]
            rows.append((f"= {pool.title}: used", round(self.used(pool.key), 1), ""))
            rows.append((f"= {pool.title}: capacity", round(pool.capacity_mib, 1), pool.note))
            rows.append((f"= {pool.title}: margin", round(self.margin(pool.key), 1), ""))
        return rows

    def summary(self) -> str:
        pool = self.tightest
        margin = self.margin(pool.key)
        word = {"FAIL": "short by", "TIGHT": "only", "FIT": "margin"}[self.verdict]
        amount = f"{abs(margin):,.0f} MiB" + (" left" if self.verdict == "TIGHT" else "")
        return (f"{self.verdict} at {self.context:,} tokens on a {self.cap_mib:,} MiB cap: {pool.title} {word} "
                f"{amount} "
                f"({self.used(pool.key):,.0f} of {pool.capacity_mib:,.0f} MiB)")

    def as_dict(self) -> dict[str, Data]:
        """JSON data (`catalog explain --json`): every field, the margins per pool and the summary."""
        out: dict[str, Data] = asdict(self)
        out["margins"] = {p.key: round(self.margin(p.key), 1) for p in self.pools}
        out["summary"] = self.summary()
        return out




def estimate(r: Sized, settings: AnySettings | None = None) -> Fit:
    """The fit of one sized app with the settings its engine will really get (decided from the app when not given:
    generator/engines/settings.py `decided`, the settings the argv carries)."""
    s = settings or decided(r)
    ledger = Ledger()
    place(r, s, ledger)
    cap = cap_mib(r)
    sizing = size_from(r, s, ledger)
    return Fit(app=r.app.name, engine=s.engine, cap_mib=cap, context=s.context.value,
               verdict=verdict_of(ledger.pools, ledger.parts, cap), pools=tuple(ledger.pools),
               parts=tuple(ledger.parts), assumptions=tuple(ledger.assumptions), calibrated=tuple(ledger.calibrated),
               facts=tuple(ledger.facts) + tuple(sizing.lines()), sizing=sizing)


__all__ = ["KV_COMPONENTS", "Fit", "Ledger", "Part", "Pool", "TIGHT_FRACTION", "TIGHT_MIN_MIB", "Verdict", "estimate",
           "verdict_of"]
