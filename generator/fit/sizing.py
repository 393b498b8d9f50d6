"""GPU memory sized by the fit: an app that leaves `gpu_memory_mib` out gets its need plus a margin.

    cap  = min(limit, round_up(need + margin, 256 MiB))
    need = every part the fit places (vLLM: the budget's parts and what is allocated after the KV pool)
    margin = max(512 MiB, 5 % of the need)
    limit  = the device's HAMi cap, and the device total minus the app's `gpu_room` when it leaves room

That one number becomes `nvidia.com/gpumem`, `CUDA_DEVICE_MEMORY_LIMIT_0` and the manifest's GPU memory. A vLLM
app that states no `gpu_memory_utilization` also gets the one that yields the budget: vLLM reserves
util x the total it reads (generator/fit/vllm.py), so util = (cap - what comes after the KV pool - margin / 2) /
total, floored to 3 decimals: half the margin stays inside the budget (KV headroom), half after it. A vLLM app
that states its utilization but not its GPU memory gets a cap that holds util x total, what comes after the KV pool
and half the margin (vLLM reserves its budget whatever it needs), within the limit.

Why this margin (docs/fit.md "GPU memory sized by the fit"): 5 % covers the fit's accuracy on measured figures
(within 3 %, docs/fit.md "Accuracy") plus the 2 % an image rebuild can move (the TIGHT threshold); 512 MiB is the
largest allocation seen to arrive after vLLM sized its KV pool on this device (Genesis P38's workspace, "512 MiB
requested" in the Fast 2.5.5 note). A sized app therefore comes out FIT, never TIGHT.

An app that states `gpu_memory_mib` keeps it; FIT001 fails it when it is too small, FIT002 warns when it locks
away at least 2 GiB more than the sized number would (2 GiB: a small speech app, e.g. the maintainer's OmniVoice
"~2GB VRAM").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from collections.abc import Callable
from functools import cache
from importlib import import_module
from typing import cast

from generator.catalog import Resolved
from generator.engines import Sized
from generator.engines import family_for
from generator.engines import AnySettings, decided
from generator.fit import vllm as fit_vllm
from generator.fit.ledger import Ledger

MARGIN_MIN_MIB = 512
MARGIN_FRACTION = 0.05
STEP_MIB = 256  # caps are whole multiples of 256 MiB
UTIL_DECIMALS = 3
FAR_ABOVE_MIB = 2048  # FIT002: a stated cap this far above the sized one locks memory another app could use


@dataclass(frozen=True)
class GpuSizing:
    """What the fit would give an app: its need, the margin, the cap and (vLLM) the utilization."""

    app: str
    need_mib: float  # everything the fit places on the card
    after_kv_mib: float  # vLLM: the part of the need allocated after the KV pool (outside the budget)
    margin_mib: float
    cap_mib: int  # the sized cap: need + margin rounded up, within the limit
    limit_mib: int
    limited_by: str  # what sets the limit: the device's HAMi cap or the room the app leaves
    utilization: float | None  # vLLM: the utilization that yields the budget under `cap_mib`
    total_mib: float | None  # vLLM: the total it multiplies
    stated_mib: int | None  # the app's own gpu_memory_mib, if it states one
    utilization_stated: bool = False  # vLLM: the app states its utilization; the cap holds that budget

    @property
    def fits_limit(self) -> bool:
        return self.need_mib + self.margin_mib <= self.limit_mib

    @property
    def locked_mib(self) -> int:
        """How much a stated cap reserves beyond the sized one (0 when it states none or less)."""
        return max(0, (self.stated_mib or 0) - self.cap_mib)

    def lines(self) -> list[str]:
        out = [f"GPU memory: need {self.need_mib:,.0f} MiB + margin {self.margin_mib:,.0f} MiB "
               f"(max({MARGIN_MIN_MIB} MiB, {MARGIN_FRACTION:.0%})) -> {self.cap_mib:,} MiB in steps of {STEP_MIB}, "
               f"at most {self.limit_mib:,} MiB ({self.limited_by})"]
        if self.utilization is not None and self.total_mib is not None and self.utilization_stated:
            held = self.utilization * self.total_mib + self.after_kv_mib + self.margin_mib / 2
            out[0] = (f"GPU memory: need {self.need_mib:,.0f} MiB + margin {self.margin_mib:,.0f} MiB, but the app "
                      f"states utilization {self.utilization}, which vLLM reserves whatever it needs: "
                      f"{self.utilization} x {self.total_mib:,.0f} + {self.after_kv_mib:,.0f} after the KV pool "
                      f"+ {self.margin_mib / 2:,.0f} (half the margin) = {held:,.0f} MiB -> {self.cap_mib:,} MiB "
                      f"in steps of {STEP_MIB}, at most {self.limit_mib:,} MiB ({self.limited_by})")
        elif self.utilization is not None and self.total_mib is not None:
            out.append(f"vLLM utilization for that cap: ({self.cap_mib:,} - {self.after_kv_mib:,.0f} after the KV pool "
                       f"- {self.margin_mib / 2:,.0f}) / {self.total_mib:,.0f} = {self.utilization}")
        if self.stated_mib is not None:
            locked = f"; it locks away {self.locked_mib:,} MiB more" if self.locked_mib else ""
            out.append(f"the app states gpu_memory_mib {self.stated_mib:,}{locked}")
        return out


def margin(need_mib: float) -> float:
    return float(max(MARGIN_MIN_MIB, math.ceil(MARGIN_FRACTION * need_mib)))


def limit(r: Resolved) -> tuple[int, str]:
    device = r.device
    room = r.app.gpu_room
    if room is not None and device.memory_mib - room.mib < device.hami_cap_mib:
        return device.memory_mib - room.mib, (f"{device.name}'s {device.memory_mib:,} MiB minus {room.mib:,} MiB left "
                                              f"for {room.beside}")
    return device.hami_cap_mib, f"{device.name}'s HAMi cap"


def _floor(value: float, decimals: int) -> float:
    scale = float(10**decimals)
    return math.floor(value * scale + 1e-9) / scale


def needs(ledger: Ledger) -> tuple[float, float]:
    """(everything placed, the part placed after vLLM's KV pool) in MiB."""
    total = sum(p.mib for p in ledger.parts if p.pool != "kv")  # the pinned KV pool is drawn from `cap` too
    after = sum(p.mib for p in ledger.parts if p.pool == "outside")
    return total, after


Place = Callable[[Sized, AnySettings, Ledger], None]  # a memory model: places an app's parts in the ledger


@cache
def memory_model(name: str) -> Place:
    """The memory model a family's `fit` names (generator/engines/interface.py EngineFamily.fit): the `build` of
    generator/fit/<name>.py, loaded by that name as generator/engines/family.py loads a family's module, so a family
    with a memory model of its own adds its module and edits no table here (tests/engines/test_registry.py checks
    that every registered family's model loads)."""
    found = getattr(import_module(f"{__package__}.{name}"), "build", None)
    assert callable(found), f"generator/fit/{name}.py: a memory model defines build(r, settings, ledger)"
    return cast(Place, found)


Fraction = Callable[[AnySettings, int], float]  # a memory model's share of the memory its engine reads, for a cap


@cache
def fraction_model(name: str) -> Fraction:
    """The `fraction` of generator/fit/<name>.py: a family whose settings size a memory fraction
    (`Settings.memory_fraction`, SGLang's --mem-fraction-static) defines it there, next to its `build`."""
    found = getattr(import_module(f"{__package__}.{name}"), "fraction", None)
    assert callable(found), f"generator/fit/{name}.py: a memory-fraction model defines fraction(settings, cap_mib)"
    return cast(Fraction, found)


def place(r: Sized, s: AnySettings, ledger: Ledger) -> None:
    """The memory model the app's family names places its parts."""
    memory_model(family_for(r.stack).fit)(r, s, ledger)


def size_from(r: Resolved, s: AnySettings, ledger: Ledger) -> GpuSizing:
    """The sizing given the parts an engine module placed for `r` (the cap they were placed under is irrelevant:
    no part depends on it)."""
    need, after = needs(ledger)
    room = margin(need)
    ceiling, why = limit(r)
    wanted = need + room
    util = total = None
    stated_util = None if "gpu_memory_utilization" in r.sized else r.app.gpu_memory_utilization
    vllm_budget = s.utilization_budget
    if vllm_budget and stated_util is not None:
        # vLLM reserves util x total whatever it needs: the cap holds that budget, what comes after the KV pool
        # and half the margin (the other half is inside the budget's headroom), as for a sized utilization.
        reserved, _ = fit_vllm.reported_total(r, ceiling)
        wanted = max(wanted, stated_util * reserved + after + room / 2)
    cap = min(ceiling, math.ceil(wanted / STEP_MIB) * STEP_MIB)
    if vllm_budget:
        total, _ = fit_vllm.reported_total(r, cap)
        util = stated_util
        if util is None:
            util = min(1.0, max(0.01, _floor((cap - after - room / 2) / total, UTIL_DECIMALS)))
    if s.memory_fraction and stated_util is None:
        # SGLang's --mem-fraction-static for that cap (its memory model's `fraction`, generator/fit/sglang.py), kept
        # in the same app field as vLLM's utilization: the engine's share of the memory it reads
        util = fraction_model(family_for(r.stack).fit)(s, cap)
    return GpuSizing(app=r.app.name, need_mib=need, after_kv_mib=after, margin_mib=room, cap_mib=cap,
                     limit_mib=ceiling, limited_by=why, utilization=util, total_mib=total,
                     stated_mib=None if "gpu_memory_mib" in r.sized else r.app.gpu_memory_mib,
                     utilization_stated=vllm_budget and stated_util is not None)


def _provisional(r: Resolved) -> Sized:
    """`r` with a cap (the device's) so that its settings can be decided; the parts do not depend on it."""
    if r.app.gpu_memory_mib is not None:
        return Sized(r)
    return Sized(replace(r, app=r.app.model_copy(update={"gpu_memory_mib": r.device.hami_cap_mib})))


def size_gpu(r: Resolved) -> GpuSizing:
    """The fit's GPU memory for `r`, whether or not the app states one."""
    base = _provisional(r)
    s = decided(base)  # typed settings from the app: no argv is built to size it
    ledger = Ledger()
    place(base, s, ledger)
    return replace(size_from(base, s, ledger), stated_mib=r.app.gpu_memory_mib)


def sized(r: Resolved) -> Sized:
    """`r` with the fields the fit fills in when the app leaves them out (`gpu_memory_mib`, and for vLLM
    `gpu_memory_utilization` with it); `r` itself when the app states its GPU memory."""
    if r.app.gpu_memory_mib is not None:
        return Sized(r)
    sizing = size_gpu(r)
    update: dict[str, object] = {"gpu_memory_mib": sizing.cap_mib}
    filled = ["gpu_memory_mib"]
    if sizing.utilization is not None and r.app.gpu_memory_utilization is None:
        update["gpu_memory_utilization"] = sizing.utilization
        filled.append("gpu_memory_utilization")
    return Sized(replace(r, app=r.app.model_copy(update=update), sized=tuple(filled)))


__all__ = ["FAR_ABOVE_MIB", "GpuSizing", "Place", "MARGIN_FRACTION", "MARGIN_MIN_MIB", "STEP_MIB", "limit", "margin",
           "memory_model", "needs", "place", "size_from", "size_gpu", "sized"]
