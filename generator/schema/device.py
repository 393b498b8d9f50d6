"""The device an app runs on."""

from __future__ import annotations

from typing import Literal

from generator.schema.common import Id, MiB, Name, Sources, Strict

# What `cudaMemGetInfo` reports as the total inside a pod (vLLM sizes its budget from it, docs/fit.md):
# `device` = the card's own total, whatever the HAMi cap; `hami_cap` = the pod's HAMi limit.
ReportedTotal = Literal["device", "hami_cap"]


class Device(Strict):
    id: Id
    name: Name
    gpu: Name
    arch: Name  # e.g. sm_120
    memory_mib: MiB  # physical VRAM
    hami_cap_mib: MiB  # the per-pod HAMi cap apps default to
    gpu_sharing: Name  # e.g. HAMi
    reported_total: ReportedTotal = "hami_cap"  # what an engine in a pod reads as the total (see above)
    sources: Sources
