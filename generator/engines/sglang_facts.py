"""The app's facts SGLang's memory arithmetic (engines/sglang.py `plan_from`) reads besides its settings, decided with
them (engines/settings.py `SglangSettings.memory`), so that the fit plans SGLang's pool under any cap handed no app
(tests/test_walk.py). Its own module so that it is loaded with the first SGLang app, not with every command."""

from __future__ import annotations

from typing import NamedTuple

from generator.catalog import Resolved
from generator.schema import Architecture


class SglangMemory(NamedTuple):
    """What SGLang's memory arithmetic (engines/sglang.py `plan_from`) reads of an app besides its settings, decided
    with them: the fit plans the pool under any cap from these, handed no app (tests/test_walk.py)."""

    device_mib: float | None  # the card's memory where its driver reports it whatever the HAMi cap; None: the cap
    weights_mib: float  # a weights_loaded calibration row, else the weight file's size (`_weights_mib`)
    architecture: Architecture
    context: int  # the app's context_length (the plan's context when none is given)


def _weights_mib(r: Resolved) -> float:
    """The weights SGLang loads: a weights_loaded calibration row (the app's, else the model's for its quantization),
    else the weight file's size."""
    weight = r.model.weight(r.app.quantization)
    assert weight is not None, "checked by the catalog loader"
    rows = [c for c in r.app.calibration if c.measure == "weights_loaded"]
    rows += [c for c in r.model.calibration if c.measure == "weights_loaded" and c.quant == r.app.quantization]
    return rows[0].mib if rows else weight.size_gib * 1024


def sglang_memory(r: Resolved) -> SglangMemory:
    """The app's facts SGLang's memory arithmetic reads (`SglangMemory`). The total SGLang reads in the pod is the
    card's on a device whose driver reports it whatever the HAMi cap (device.reported_total, docs/fit.md), else the
    cap (None here: the plan's cap)."""
    device = float(r.device.memory_mib) if r.device.reported_total == "device" else None
    return SglangMemory(device, _weights_mib(r), r.model.architecture, r.app.context_length)


__all__ = ["SglangMemory", "sglang_memory"]
