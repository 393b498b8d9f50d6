"""The device an app runs on."""

from __future__ import annotations

from generator.schema.common import Id, PositiveInt, Sources, Strict


class Device(Strict):
    id: Id
    name: str
    gpu: str
    arch: str  # e.g. sm_120
    memory_mib: PositiveInt  # physical VRAM
    hami_cap_mib: PositiveInt  # the per-pod HAMi cap apps default to
    gpu_sharing: str  # e.g. HAMi
    sources: Sources
