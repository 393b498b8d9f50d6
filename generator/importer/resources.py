"""The pod's and the manifest's CPU, memory and GPU memory -> the app's `resources`, `gpu_memory_mib` and
`device`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from generator.core import Data
from generator.catalog import Catalog
from generator.chart import whole_cores
from generator.importer.helmview import doc_key, path_to
from generator.importer.workload import Launch, Origin
from generator.lint import parse_quantity
from generator.schema import App
from generator.importer import objects
from generator.importer.context import HAMI_ENV, _Ctx, _env_default

GPUMEM = "nvidia.com/gpumem"


# --- the app ------------------------------------------------------------------------------------------

def _hami_mib(value: str) -> int | None:
    match = re.fullmatch(r"([1-9][0-9]*)([kKmMgG]?)", value.strip())
    if not match:
        return None
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit == "m":
        return number
    if unit == "g":
        return number * 1024
    if unit == "k":
        return number // 1024 if number % 1024 == 0 else None
    return number // 2**20 if number % 2**20 == 0 else None


def _mib(value: Any) -> int | None:
    try:
        q = parse_quantity(value)
    except ValueError:
        return None
    mib = q / Decimal(2**20)
    return int(mib) if mib == int(mib) and mib > 0 else None


def _quantity(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if re.fullmatch(r"[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?", text) else None


def _resources(ctx: _Ctx, launch: Launch, app: dict[str, Data]) -> None:
    res = objects.section(launch.container, "resources")
    requests, limits = dict(objects.section(res, "requests")), dict(objects.section(res, "limits"))
    anchor = ctx.lines.container_anchor(launch.workload, launch.name)
    origin = ctx.lines.origin(launch.workload.source, "resources:", after=anchor)
    out = _container_resources(ctx, requests, limits, origin)
    _manifest_resources(ctx, out)
    defaults = App.model_fields["resources"].default.model_dump()
    missing = [k for k in defaults if k not in out]
    if missing:
        ctx.note(origin, "not set in the chart, the catalog default is used: "
                 + ", ".join(f"{k} {defaults[k]}" for k in missing))
    full = {**defaults, **out}
    app["resources"] = full


def _container_resources(ctx: _Ctx, requests: dict[str, Any], limits: dict[str, Any],
                         origin: Origin) -> dict[str, str]:
    """The container's CPU and memory requests and limits as catalog fields; other resources are unmapped."""
    out: dict[str, str] = {}
    for key, src, name in (("cpu_request", requests, "cpu"), ("cpu_limit", limits, "cpu"),
                           ("memory_request", requests, "memory"), ("memory_limit", limits, "memory")):
        if name in src:
            quantity = _quantity(src[name])
            if quantity is None and (found := _env_default(ctx, str(src[name]))) is not None:
                quantity = _quantity(found[1])  # a manifest env's default (beclab/apps SGLANG_CPU_REQUEST ...)
                if quantity is not None:
                    ctx.note(origin, f"resources {name} {quantity} is manifest env {found[0]}'s default")
            if quantity is None:
                ctx.unmapped(origin, f"resources {name} {src[name]!r} is not a quantity the catalog takes")
            else:
                out[key] = quantity
    for part, src in (("requests", requests), ("limits", limits)):
        for key, value in src.items():
            if key in ("cpu", "memory", GPUMEM):
                continue
            ctx.unmapped(origin, f"resources.{part}.{key}: {value} (the catalog requests GPU memory through "
                                 f"{GPUMEM} and HAMi)" if key.startswith("nvidia.com/") else
                         f"resources.{part}.{key}: {value} is not modelled")
    return out


def _manifest_resources(ctx: _Ctx, out: dict[str, str]) -> None:
    """The manifest's disk into `out`; its CPU and memory must match the container's (`out`)."""
    spec: Mapping[str, Any] = objects.section(ctx.r.manifest, "spec")
    flat = {k: spec.get(k) for k in ("requiredDisk", "limitedDisk", "requiredCpu", "limitedCpu", "requiredMemory",
                                     "limitedMemory", "requiredGpu", "limitedGpu") if k in spec}
    accel = next((a for a in spec.get("accelerator") or () if isinstance(a, dict)), None) if isinstance(
        spec.get("accelerator"), list) else None
    source = dict(flat)
    if accel:
        source.update({k: v for k, v in accel.items() if k != "mode"})
    for key, name in (("disk_request", "requiredDisk"), ("disk_limit", "limitedDisk")):
        if name in source:
            quantity = _quantity(source[name])
            if quantity is None:
                ctx.unmapped(ctx.manifest_origin(f"{name}:"), f"spec {name} {source[name]!r} is not a quantity")
            else:
                out[key] = quantity
    # the manifest's CPU and memory must match the container's (the catalog holds one value for both)
    for key, name in (("cpu_request", "requiredCpu"), ("cpu_limit", "limitedCpu"),
                      ("memory_request", "requiredMemory"), ("memory_limit", "limitedMemory")):
        if name in source and key in out:
            # olares-v2 writes whole cores (generator/chart/plan.py whole_cores: `1500m` -> `2`)
            theirs = whole_cores(out[key]) if ctx.profile.integer_cpu and key.startswith("cpu") else out[key]
            try:
                same = parse_quantity(str(source[name])) == parse_quantity(theirs)
            except ValueError:
                same = False
            if not same:
                ctx.unmapped(ctx.manifest_origin(f"{name}:"),
                             f"spec {name} {source[name]} differs from the container's {out[key]} (the catalog "
                             "writes the container's value in both)")


def _gpu_memory(ctx: _Ctx, launch: Launch, app: dict[str, Data]) -> None:
    candidates = _gpu_candidates(ctx, launch)
    if not candidates:
        unknown = _set_at_install(ctx, launch, ("resources", "limits", GPUMEM)) or _set_at_install(
            ctx, launch, ("resources", "requests", GPUMEM))
        if unknown:
            envs = ", ".join(unknown)
            ctx.result.missing.append(f"gpu_memory_mib: the chart computes {GPUMEM} from manifest env {envs}, which "
                                      "has no default (the user sets it at install); a catalog app states its GPU "
                                      "memory")
            return
        ctx.result.missing.append("gpu_memory_mib (the chart sets no CUDA_DEVICE_MEMORY_LIMIT_0, nvidia.com/gpumem "
                                  "or GPU memory in the manifest)")
        return
    label, mib, origin = candidates[0]
    app["gpu_memory_mib"] = mib
    ctx.result.gpu_memory_from = (label, str(origin))  # read by importer/__init__.py (issue 23)
    if not label.startswith(HAMI_ENV):
        ctx.note(origin, f"gpu_memory_mib {mib} from {label} (the chart sets no {HAMI_ENV}; the catalog renders one)")
    others = {value for _, value, _ in candidates[1:]}
    if label.startswith(HAMI_ENV) and len(others) == 1 and min(others) < mib:
        # one scheduler request below the in-container cap: a measured belt (generator/chart/gpumem.py, docs/devices.md
        # "Three numbers"), which the catalog renders from `measured:`, not a disagreement
        measured = app.get("measured")
        recorded = isinstance(measured, list) and any(
            isinstance(m, dict) and m.get("field") == "gpu_memory_mib" and str(m.get("value")).rstrip("m") == str(mib)
            for m in measured)
        ctx.note(candidates[1][2], f"the scheduler is asked for {min(others)} MiB, below the in-container cap "
                 f"{mib} MiB: a measured belt; " + ("its measurement comes from the chart's catalog block" if recorded
                                                    else "record its measurement in `measured:` (field "
                                                         "gpu_memory_mib)"))
        return
    for other, value, where in candidates[1:]:
        if value != mib and not other.startswith("spec requiredGpu"):
            ctx.unmapped(where, f"{other} ({value} MiB) differs from gpu_memory_mib {mib} taken from {label}")
        elif other.startswith("spec requiredGpu") and value != mib:
            ctx.unmapped(where, f"{other}: the catalog requests and limits the same GPU memory ({mib} MiB)")


def _set_at_install(ctx: _Ctx, launch: Launch, tail: tuple[str, ...]) -> tuple[str, ...]:
    """The manifest envs with no default (set at install) a container value is computed from (helmview
    `Rendered.unknown`); () when it is not."""
    where = path_to(launch.workload.body, launch.container)
    if where is None:
        return ()
    return ctx.r.unknown.get(doc_key(launch.workload), {}).get((*where, *tail), ())


def _gpu_candidates(ctx: _Ctx, launch: Launch) -> list[tuple[str, int, Origin]]:
    """Every GPU memory figure of the chart, first the one the catalog takes: (label, MiB, where)."""
    candidates: list[tuple[str, int, Origin]] = []
    hami = launch.env.get(HAMI_ENV)
    if hami is not None and hami.value is not None:
        mib = _hami_mib(hami.value)
        if mib is None:
            ctx.unmapped(hami.origin, f"{HAMI_ENV}={hami.value}: not a whole number of MiB")
        else:
            candidates.append((f"{HAMI_ENV} {hami.value}", mib, hami.origin))
    res = objects.section(launch.container, "resources")
    anchor = ctx.lines.container_anchor(launch.workload, launch.name)
    for part in ("limits", "requests"):
        value = objects.section(res, part).get(GPUMEM)
        if value is not None and _set_at_install(ctx, launch, ("resources", part, GPUMEM)):
            continue  # computed from an env with no default: `_gpu_memory` says so
        if value is not None:
            try:
                mib = int(str(value))
                candidates.append((f"{GPUMEM} {part} {value}", mib, ctx.lines.origin(launch.workload.source,
                                                                                   GPUMEM, after=anchor)))
            except ValueError:
                ctx.unmapped(ctx.lines.origin(launch.workload.source, GPUMEM, after=anchor),
                             f"{GPUMEM} {value}: not a number of MiB")
    spec: Mapping[str, Any] = objects.section(ctx.r.manifest, "spec")
    accel = next((a for a in spec.get("accelerator") or () if isinstance(a, dict)), {}) \
        if isinstance(spec.get("accelerator"), list) else {}
    for name in ("limitedGPUMemory", "requiredGPUMemory", "limitedGpu", "requiredGpu"):
        value = accel.get(name, spec.get(name))
        if value is not None:
            mib = _mib(value)
            if mib is not None:
                candidates.append((f"spec {name} {value}", mib, ctx.manifest_origin(f"{name}:")))
    return candidates


def _device(ctx: _Ctx, cat: Catalog, app: dict[str, Data]) -> None:
    own = app.pop("device", None)  # the chart's catalog block names it (importer/carry.py)
    if own in cat.devices:
        app["device"] = own
        return
    if own is not None:
        ctx.note("device", f"the chart's catalog block names device {own}, which the catalog has no devices/ file for")
    devices = sorted(cat.devices.values(), key=lambda d: d.id)
    if not devices:
        ctx.result.missing.append("device (the catalog has no devices/)")
        return
    if len(devices) == 1:
        app["device"] = devices[0].id
        return
    # the device the catalog's apps name most (its market's device: a chart carries one `nvidia` envelope, which
    # several desktop cards of the catalog could hold, docs/devices.md); with none, the smallest cap that holds it
    home = Counter(r.app.device for r in cat.apps.values() if r.app.device in cat.devices)
    need = app.get("gpu_memory_mib")
    mib = need if isinstance(need, int) else 0
    fitting = [d for d in devices if d.hami_cap_mib >= mib]
    targeted = [d for d in cat.market.devices if d in cat.devices]
    if home:
        chosen = cat.devices[min(home, key=lambda d: (-home[d], d))]
        why = "the device most of the catalog's apps name"
    elif targeted:  # a store with no app yet: the first device its market.yaml targets is its own
        chosen = cat.devices[targeted[0]]
        why = "the first device catalog/market.yaml targets"
    else:
        chosen = (min(fitting, key=lambda d: d.hami_cap_mib) if fitting
                  else max(devices, key=lambda d: d.hami_cap_mib))
        why = "the smallest HAMi cap that holds the app"
    app["device"] = chosen.id
    ctx.note("device", f"the chart names no device; {chosen.id} chosen ({why})")


__all__ = ["GPUMEM"]
