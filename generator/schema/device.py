"""The device an app runs on."""

from __future__ import annotations

from generator.schema.common import Id, MiB, Name, Sources, Strict


class Device(Strict):
    id: Id
    name: Name
    gpu: Name
    arch: Name  # e.g. sm_120
    memory_mib: MiB  # physical VRAM
    hami_cap_mib: MiB  # the per-pod HAMi cap apps default to
    gpu_sharing: Name  # e.g. HAMi
    sources: Sources
