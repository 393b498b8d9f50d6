"""HAMi rules: every GPU pod carries an explicit, well-formed, non-zero per-device memory limit that agrees
with the GPU memory the chart requests (docs/domain.md#crash-rules crash 1; docs/domain.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.chart import GpuMemory, gpu_memory, measured_belt
from generator.engines import EnvVar
from generator.core import Finding
from generator.rules import AppContext, rule
from generator.rules.locate import at_env, env_where

LIMIT = "CUDA_DEVICE_MEMORY_LIMIT_0"
GLOBAL = "CUDA_DEVICE_MEMORY_LIMIT"
FORMAT = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")
UNITS = {"k": 1024, "m": 1024**2, "g": 1024**3}
SRC = "docs/domain.md#crash-rules crash 1; docs/domain.md and §8 R38-R39; docs/domain.md#hami; docs/domain.md"


def strtoul(text: str) -> int:
    """C `strtoul(text, NULL, 0)`: optional 0x (hex) or leading 0 (octal), stops at the first bad digit."""
    text = text.strip()
    base, digits = 10, "0123456789"
    if text[:2].lower() == "0x":
        base, digits, text = 16, "0123456789abcdef", text[2:]
    elif text.startswith("0") and len(text) > 1:
        base, digits, text = 8, "01234567", text[1:]
    taken = ""
    for ch in text.lower():
        if ch not in digits:
            break
        taken += ch
    return int(taken, base) if taken else 0


def hami_bytes(value: str) -> int:
    """What HAMi-core's get_limit_from_env makes of a value: unit from the last character, strtoul on the rest."""
    value = value.strip()
    if value and value[-1].lower() in UNITS:
        return strtoul(value[:-1]) * UNITS[value[-1].lower()]
    return strtoul(value)


def _limits(ctx: AppContext) -> list[EnvVar]:
    return [e for e in ctx.engine.env if e.name in (LIMIT, GLOBAL)]


def _measured_belt(ctx: AppContext, mib: float) -> str | None:
    """The note of the app's measured `gpu_memory_mib` ground equal to `mib` above the card, for a llama.cpp app."""
    return measured_belt(ctx.resolved, round(mib)) if float(mib).is_integer() else None


def _planned(ctx: AppContext) -> GpuMemory:
    """The three GPU-memory values of the planned app (generator/chart/gpumem.py)."""
    return ctx.chart.gpu if ctx.chart.gpu is not None else gpu_memory(ctx.resolved, fitted=False)


def _mib(value_bytes: int) -> str:
    return f"{value_bytes / 1024**2:,.0f} MiB" if value_bytes >= 1024**2 else f"{value_bytes} bytes"


@rule("HAMI001", "error", "every GPU app sets CUDA_DEVICE_MEMORY_LIMIT_0 explicitly",
      "Without it Olares' HAMi injects `0m`; the first CUDA Driver API allocation then fails (`CUDA driver error: "
      "invalid argument` in vLLM's EagleProposer.__init__, Lucebox too)", SRC)
def explicit_limit(ctx: AppContext) -> Iterable[Finding]:
    var = next((e for e in ctx.engine.env if e.name == LIMIT), None)
    if var is None or not var.value.strip():
        where = f" ({env_where(var)} is empty)" if var is not None else ""
        yield ctx.finding("HAMI001", "error", f"the engine env has no `{LIMIT}`{where}: Olares' HAMi injects "
                          "`0m` and the first CUDA Driver API allocation fails",
                          f"remove the empty override; the generator sets `{LIMIT}` from gpu_memory_mib",
                          "gpu_memory_mib")


@rule("HAMI002", "error", "the HAMi limit is not zero",
      "`CUDA_DEVICE_MEMORY_LIMIT_0=0m` parses to 0: allocations through the CUDA Driver API fail "
      "(`CUDA driver error: invalid argument` in EagleProposer.__init__ -> torch.zeros)", SRC)
def nonzero_limit(ctx: AppContext) -> Iterable[Finding]:
    for var in _limits(ctx):
        if var.value.strip() and hami_bytes(var.value) == 0:
            yield at_env(ctx, "HAMI002", "error", var,
                         f"`{var.name}={var.value}` ({env_where(var)}) parses to 0 under HAMi: the first CUDA "
                         "Driver API allocation fails with `CUDA driver error: invalid argument` (the 0m crash)",
                         f"remove the override so `{LIMIT}` is {ctx.app.gpu_memory_mib}m from gpu_memory_mib")


@rule("HAMI003", "error", "the HAMi limit is an integer with an optional k/m/g unit, no leading zero",
      "HAMi-core reads the unit from the last character and the number with strtoul base 0: `24300Mi` is 24300 "
      "bytes, `024300m` is octal, `23.5g` is 23 GiB",
      "docs/domain.md (get_limit_from_env), §8 R38; docs/domain.md#hami")
def limit_format(ctx: AppContext) -> Iterable[Finding]:
    for var in _limits(ctx):
        value = var.value.strip()
        if value and hami_bytes(value) != 0 and not FORMAT.match(value):
            yield at_env(ctx, "HAMI003", "error", var,
                         f"`{var.name}={var.value}` ({env_where(var)}) is not HAMi's format: HAMi reads it as "
                         f"{_mib(hami_bytes(value))}",
                         f"write the MiB as `<integer>m`, e.g. `{ctx.app.gpu_memory_mib}m`")


@rule("HAMI004", "error", "the HAMi limit is not above the device's memory",
      "HAMi reports the limit as the device total without clamping it to the card: vLLM sizes its KV pool into "
      "memory that does not exist and OOMs", "docs/domain.md (HAMi-core PRs #80-82), §8 R38")
def within_device(ctx: AppContext) -> Iterable[Finding]:
    device = ctx.resolved.device
    for var in _limits(ctx):
        mib = hami_bytes(var.value) / 1024**2
        if mib > device.memory_mib and _measured_belt(ctx, mib):
            # measured beats modeled (docs/fit.md): upstream set this limit on a measured ground (the HAMi-core
            # UINT64 underflow belt) on a llama.cpp server, which allocates what it loads, not a share of the total
            yield at_env(ctx, "HAMI004", "warning", var,
                         f"`{var.name}={var.value}` is {mib:,.0f} MiB, above the {device.memory_mib:,} MiB of "
                         f"{device.name}: kept, upstream measured it ({_measured_belt(ctx, mib)})",
                         "measure the app at the device's cap before lowering it (`catalog calibrate`)")
        elif mib > device.memory_mib:
            yield at_env(ctx, "HAMI004", "error", var,
                         f"`{var.name}={var.value}` ({env_where(var)}) is {mib:,.0f} MiB, above the "
                         f"{device.memory_mib:,} MiB of {device.name}", f"cap it at most at {device.hami_cap_mib}m")


def _quantity_mib(text: object) -> float | None:
    match = re.match(r"^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti)?$", str(text))
    if not match:
        return None
    scale = {None: 1 / 1024**2, "Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024**2}[match.group(2)]
    return float(match.group(1)) * scale


def _gpumem_mib(value: object) -> float | None:
    """`nvidia.com/gpumem` is a bare integer of MiB (docs/domain.md#hami)."""
    if isinstance(value, (int, float)):
        return float(value)
    return float(str(value)) if str(value).isdigit() else _quantity_mib(value)


def requested_gpu_mib(ctx: AppContext) -> dict[str, float | None]:
    """Every place the chart states the GPU memory, in MiB."""
    res = ctx.chart.values.engine.resources
    accel = ctx.chart.manifest.spec.accelerator[0]
    return {
        "values engine.resources.requests nvidia.com/gpumem": _gpumem_mib(res.requests.gpumem),
        "values engine.resources.limits nvidia.com/gpumem": _gpumem_mib(res.limits.gpumem),
        "manifest requiredGPUMemory": _quantity_mib(accel.required_gpu_memory),
        "manifest limitedGPUMemory": _quantity_mib(accel.limited_gpu_memory),
    }


@rule("HAMI005", "error", "the HAMi limit equals the gpumem the container requests and the manifest's GPU memory "
      "(unless a measured belt raises only the in-container cap)",
      "HAMi's scheduler places the pod by nvidia.com/gpumem while libvgpu enforces the env limit: when they differ "
      "the pod is scheduled for one size and capped at another", "docs/domain.md (set it explicitly, equal to gpumem); "
      "docs/domain.md#hami; docs/devices.md \"Three numbers\"")
def limit_matches_request(ctx: AppContext) -> Iterable[Finding]:
    var = next((e for e in ctx.engine.env if e.name == LIMIT), None)
    if var is None or hami_bytes(var.value) == 0:
        return
    limit = hami_bytes(var.value) / 1024**2
    planned = _planned(ctx)
    belt = planned.hami_cap.mib != planned.scheduler.mib and abs(limit - planned.hami_cap.mib) <= 0.5
    want = planned.scheduler.mib if belt else limit  # a measured belt: the request is the planned one, not the cap
    for place, mib in requested_gpu_mib(ctx).items():
        if mib is not None and abs(mib - want) > 0.5:
            yield at_env(ctx, "HAMI005", "error", var,
                         f"`{var.name}={var.value}` ({env_where(var)}) is {limit:,.0f} MiB "
                         f"but {place} is {mib:,.0f} MiB",
                         "set the GPU memory once, in gpu_memory_mib, and drop the env override")


@rule("HAMI006", "warning", "gpu_memory_mib stays within the device's HAMi cap",
      "Olares One apps run under a 24300 MiB cap; a larger request leaves no room for the display and other pods",
      "docs/domain.md (device cap 24300m unless an app states a lower one)")
def within_cap(ctx: AppContext) -> Iterable[Finding]:
    device = ctx.resolved.device
    if ctx.gpu_memory_mib > device.hami_cap_mib and _measured_belt(ctx, ctx.gpu_memory_mib) is None:
        yield ctx.finding("HAMI006", "warning", f"gpu_memory_mib {ctx.app.gpu_memory_mib} is above {device.name}'s "
                          f"HAMi cap {device.hami_cap_mib} MiB", f"use at most {device.hami_cap_mib}", "gpu_memory_mib")


@rule("HAMI007", "error", "the scheduler request (nvidia.com/gpumem, requiredGPUMemory/limitedGPUMemory) never exceeds "
      "the device's memory",
      "HAMi's scheduler places a pod only on a card with that much free memory: a request above the card is never "
      "scheduled and the app never starts. A measured belt may raise only the in-container cap",
      "docs/devices.md \"Three numbers\"; "
      "github.com/aamsellem/olares-one-market@59296d35fa0e86b4ee099332ac4937eb9e0f0f1c "
      "llamacppqwen36beellamaone/templates/deployment.yaml (30000m belt in the env, the request within the card)")
def request_within_device(ctx: AppContext) -> Iterable[Finding]:
    device = ctx.resolved.device
    for place, mib in requested_gpu_mib(ctx).items():
        if mib is not None and mib > device.memory_mib + 0.5:
            yield ctx.finding("HAMI007", "error", f"{place} is {mib:,.0f} MiB, above the {device.memory_mib:,} MiB of "
                              f"{device.name}: the scheduler never places the pod",
                              f"set gpu_memory_mib at most {device.hami_cap_mib}; a cap measured above the card goes "
                              "in `measured:` (field gpu_memory_mib) and then raises only CUDA_DEVICE_MEMORY_LIMIT_0",
                              "gpu_memory_mib")
