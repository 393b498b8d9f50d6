"""The device an app runs on."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from generator.schema.common import Id, MiB, Name, Sources, Strict

# What `cudaMemGetInfo` reports as the total inside a pod (vLLM sizes its budget from it, docs/fit.md):
# `device` = the card's own total, whatever the HAMi cap; `hami_cap` = the pod's HAMi limit.
ReportedTotal = Literal["device", "hami_cap"]
# Peak memory bandwidth in decimal GB/s (10^9 bytes a second), as the card's specification states it: the roofline's
# numerator (generator/fit/roofline.py, docs/fit.md "Roofline"). The fastest accelerators reach ~8,000 GB/s (HBM3e).
Bandwidth = Annotated[float, Field(gt=0, le=100_000)]


class Device(Strict):
    id: Id
    name: Name
    gpu: Name
    arch: Name  # e.g. sm_120
    memory_mib: MiB  # physical VRAM
    hami_cap_mib: MiB  # the per-pod HAMi cap apps default to
    gpu_sharing: Name  # e.g. HAMi
    reported_total: ReportedTotal = "hami_cap"  # what an engine in a pod reads as the total (see above)
    memory_bandwidth_gb_s: Bandwidth | None = None  # None: no roofline for this device's apps
    sources: Sources
