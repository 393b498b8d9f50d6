"""Measured beats modeled (docs/fit.md "Measured beats modeled"): a value upstream set on a measured ground is
kept; where the fit disagrees, `check` warns with both numbers and what would settle it, never rewrites it.

An app's `measured:` entries name the field (`env.NAME`, `args.--flag`, or an app field such as
`gpu_memory_utilization`), the value and what was measured. MEAS001 warns when the chart renders another value
(the catalog overrode a measurement), or when the fit models another number than the measured one (the model's
parts are assumed where the measurement is not: `catalog calibrate APP --log FILE` reads a boot log into
calibration rows and shows which one holds).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule
from generator.rules.locate import fit

# Fields whose modeled value the fit gives (generator/fit/sizing.py GpuSizing), keyed by the measured field.
CAP_FIELDS = ("env.CUDA_DEVICE_MEMORY_LIMIT_0", "gpu_memory_mib")
UTILIZATION_FIELDS = ("gpu_memory_utilization", "args.--gpu-memory-utilization")
TOLERANCE = 0.005  # relative: 0.92 vs 0.9204 is the same number written twice


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.rstrip("m"))
    except ValueError:
        return None


def _same(a: str | None, b: str | None) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return abs(x - y) <= TOLERANCE * max(abs(x), abs(y), 1e-9)
    return a == b


def rendered(ctx: AppContext, field: str) -> str | None:
    """The value the planned chart gives `field`, as text (None: the chart sets none)."""
    if field.startswith("env."):
        return ctx.engine.env_map.get(field[4:])
    if field.startswith("args."):
        argv, flag = ctx.engine.argv, field[5:]
        values = [argv[i + 1] for i, token in enumerate(argv[:-1]) if token == flag]
        return values[-1] if values else (flag if flag in argv else None)
    value = getattr(ctx.app, field, None)
    return None if value is None else str(value)


def modeled(ctx: AppContext, field: str) -> str | None:
    """What the fit sizes for `field` (None where the fit models no number for it)."""
    sizing = fit(ctx).sizing
    if sizing is None:
        return None
    if field in CAP_FIELDS:
        return f"{sizing.cap_mib}m" if field.startswith("env.") else str(sizing.cap_mib)
    if field in UTILIZATION_FIELDS and sizing.utilization is not None:
        return f"{sizing.utilization:.3f}"
    return None


@rule("MEAS001", "warning", "a value upstream measured is rendered as measured, and the fit agrees with it",
      "a modeled number that replaces a measured one undoes a fix someone measured (the HAMi-core UINT64 "
      "underflow after ~99K tokens under a 24300m limit; Gemma 4 26B vision's 128K at 0.92, 135.85 t/s)",
      "the app's `measured` entries (docs/fit.md \"Measured beats modeled\"); generator/fit/sizing.py")
def measured_kept(ctx: AppContext) -> Iterable[Finding]:
    for index, m in enumerate(ctx.app.measured):
        ours = rendered(ctx, m.field)
        calibrate = f"`catalog calibrate {ctx.app.name} --log FILE` on a boot log of the measured chart"
        if not _same(ours, m.value):
            yield ctx.finding("MEAS001", "warning", f"{m.field} is {ours or 'not set'} in the chart, but upstream "
                              f"measured {m.value} ({m.note}; {m.source})",
                              f"render {m.value} (measured beats modeled), or measure the other value and record it: "
                              f"{calibrate}", "measured", index)
            continue
        model = modeled(ctx, m.field)
        if model is not None and not _same(model, m.value):
            yield ctx.finding("MEAS001", "warning", f"{m.field}: the fit models {model}, upstream measured "
                              f"{m.value} ({m.note}); the measured value is kept",
                              f"a measurement settles which parts of the fit are assumed: {calibrate}",
                              "measured", index)
