"""The parts an engine's fit module fills in (pools, parts, assumptions) and the verdict they give.

Its own module so that `fit.vllm` and `fit.llamacpp` build a `Ledger` and `fit.estimate` dispatches to them
without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from generator.engines import Sized

Verdict = Literal["FIT", "TIGHT", "FAIL"]
KV_COMPONENTS = ("KV ", "recurrent state", "drafter KV", "calibration: KV need")  # parts that are one request's KV
TIGHT_MIN_MIB = 256  # margins below max(256 MiB, 2 % of the cap) are TIGHT: one image rebuild can eat them
TIGHT_FRACTION = 0.02


def cap_mib(r: Sized) -> int:
    """The GPU memory (MiB) a sized app's parts are placed under. The fit reads it itself rather than through
    engines/base.py `cap_of`: the app it places goes back to no earlier stage (tests/test_walk.py)."""
    mib = r.app.gpu_memory_mib
    assert mib is not None, f"{r.app.name}: a Sized app has its GPU memory (generator/fit/sizing.py sized)"
    return mib


@dataclass(frozen=True)
class Part:
    component: str
    mib: float
    note: str
    pool: str


@dataclass(frozen=True)
class Pool:
    key: str
    title: str
    capacity_mib: float
    note: str


@dataclass
class Ledger:
    """What an engine module fills in: pools, the parts drawn from them, assumptions, calibrations used."""

    pools: list[Pool] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    calibrated: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # derived figures worth a line (KV available vs needed)

    def pool(self, key: str, title: str, capacity_mib: float, note: str) -> None:
        self.pools.append(Pool(key, title, capacity_mib, note))

    def add(self, pool: str, component: str, mib: float, note: str) -> None:
        self.parts.append(Part(component, mib, note, pool))

    def assume(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)


def verdict_of(pools: list[Pool], parts: list[Part], cap_mib: int) -> Verdict:
    tight = max(TIGHT_MIN_MIB, TIGHT_FRACTION * cap_mib)
    margins = [p.capacity_mib - sum(x.mib for x in parts if x.pool == p.key) for p in pools]
    worst = min(margins)
    return "FAIL" if worst < 0 else "TIGHT" if worst < tight else "FIT"
