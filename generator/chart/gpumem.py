"""An app's GPU memory as three named values, each with its origin (docs/devices.md "Three numbers").

- `scheduler`: what the pod asks HAMi's scheduler for: the bare MiB of `nvidia.com/gpumem` in requests and limits
  and the manifest's `requiredGPUMemory`/`limitedGPUMemory` on modes that have GPU memory of their own. It never
  exceeds the card (rule HAMI007, an error): a request above the card is never scheduled.
- `hami_cap`: the in-container cap HAMi-core enforces, `CUDA_DEVICE_MEMORY_LIMIT_0=<MiB>m`, always explicit.
- `engine_budget`: what the engine can size itself within: the lower of the cap and the card.

Normally all three are the app's `gpu_memory_mib` (its own or the fit's need plus margin). A measured belt (a
llama.cpp-family app whose upstream set a cap above the card on a measured ground, recorded in `measured:`) raises
only the in-container cap; the scheduler is then asked for the device's HAMi cap, at most the card. The maintainer's
own BeeLlama charts keep `CUDA_DEVICE_MEMORY_LIMIT_0=30000m` against HAMi-core's accounting underflow and ask for
`requiredGPUMemory: 1Gi` / `limitedGPUMemory: 24Gi` with `nvidia.com/gpu: 1` (github.com/aamsellem/olares-one-market
@59296d35fa0e86b4ee099332ac4937eb9e0f0f1c llamacppqwen36beellamaone/templates/deployment.yaml; its manifest's
accelerator entry): the catalog asks for the device's cap instead, because 1Gi lets HAMi place other GPU pods on a
card this app may fill, and 24Gi (24,576 MiB) is above the 24,463 MiB card.

The scheduler request is written as the platform's engine bases write it: a bare MiB integer of `nvidia.com/gpumem`,
the same in requests and limits, on the `nvidia` mode only, with the Deployment annotated
`applications.app.bytetrade.io/gpu-inject: "<engine container>"` (github.com/beclab/apps
@27e57e7bd64367a38672de4fcb592be8efacf434 llamacppllmbasev3/templates/llamacpp.yaml: "nvidia.com/gpumem needs a BARE
MiB int ... it must be in BOTH requests and limits with the same value. Dropped on gb10").
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog import Resolved
from generator.engines import Sized
from generator.engines import allocates_what_it_needs
from generator.schema import Device


@dataclass(frozen=True)
class GpuValue:
    mib: int
    origin: str  # where the figure comes from, for `catalog explain`


@dataclass(frozen=True)
class GpuMemory:
    scheduler: GpuValue
    hami_cap: GpuValue
    engine_budget: GpuValue

    def rows(self) -> tuple[tuple[str, GpuValue], ...]:
        return (("scheduler request (nvidia.com/gpumem, requiredGPUMemory/limitedGPUMemory)", self.scheduler),
                ("in-container HAMi cap (CUDA_DEVICE_MEMORY_LIMIT_0)", self.hami_cap),
                ("engine budget", self.engine_budget))


def measured_belt(r: Resolved, mib: int) -> str | None:
    """`<note> (<source>)` of the app's measured `gpu_memory_mib` ground equal to `mib` when that is above the card
    and the engine allocates what it needs (llama.cpp and its forks); else None. A vLLM or SGLang server sizes a share
    of the total it reads, so a cap above the card is no belt there."""
    if mib <= r.device.memory_mib or not allocates_what_it_needs(r.stack):
        return None
    for m in r.app.measured:
        if m.field == "gpu_memory_mib" and str(m.value).rstrip("m") == str(mib):
            return f"{m.note} ({m.source})"
    return None


def gpu_memory(r: Sized, *, fitted: bool) -> GpuMemory:
    """The three values of a sized app; `fitted`: the fit set its GPU memory (the app left it out)."""
    # read here, not through engines/base.py `cap_of`: the planned app goes back to no earlier stage
    # (tests/test_walk.py)
    mib = r.app.gpu_memory_mib
    assert mib is not None, f"{r.app.name}: a Sized app has its GPU memory (generator/fit/sizing.py sized)"
    device: Device = r.device
    own = f"the fit's need plus margin on {device.id}" if fitted else "app.gpu_memory_mib"
    belt = measured_belt(r, mib)
    if belt is not None:
        request = min(device.hami_cap_mib, device.memory_mib)
        scheduler = GpuValue(request, f"{device.id} hami_cap_mib: the measured belt {mib} MiB is above the "
                                      f"{device.memory_mib:,} MiB card, and a request never exceeds it")
        cap = GpuValue(mib, f"app.gpu_memory_mib, a measured belt: {belt}")
    else:
        scheduler = cap = GpuValue(mib, own)
    budget = GpuValue(min(cap.mib, device.memory_mib),
                      "the in-container cap" if cap.mib <= device.memory_mib else
                      f"{device.id} memory_mib: the card, below the in-container cap")
    return GpuMemory(scheduler=scheduler, hami_cap=cap, engine_budget=budget)


__all__ = ["GpuMemory", "GpuValue", "gpu_memory", "measured_belt"]
