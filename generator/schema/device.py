"""The device an app runs on."""

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator

from generator.schema.common import Id, MiB, Name, Sources, Strict

# What `cudaMemGetInfo` reports as the total inside a pod (vLLM sizes its budget from it, docs/fit.md):
# `device` = the card's own total, whatever the HAMi cap; `hami_cap` = the pod's HAMi limit.
ReportedTotal = Literal["device", "hami_cap"]
# Peak memory bandwidth in decimal GB/s (10^9 bytes a second), as the card's specification states it: the roofline's
# numerator (generator/fit/roofline.py, docs/fit.md "Roofline"). The fastest accelerators reach ~8,000 GB/s (HBM3e).
Bandwidth = Annotated[float, Field(gt=0, le=100_000)]
# Dense FP16/BF16 tensor-core throughput in TFLOPS (10^12 a second, without sparsity), as the card's specification
# states it: the speed model's compute roof (generator/fit/speed.py). The largest accelerators state ~2,500.
Tflops = Annotated[float, Field(gt=0, le=100_000)]
# The Olares `spec.accelerator` mode a device installs under (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e
# docs/developer/develop/package/manifest.md: `nvidia` for a discrete NVIDIA GPU, `nvidia-gb10` for the DGX Spark,
# whose unified memory is sized through the pod's memory rather than `gpumem`). Only the NVIDIA modes: the engines
# of this catalog are CUDA builds.
AcceleratorMode = Literal["nvidia", "nvidia-gb10"]
CpuArch = Literal["amd64", "arm64"]  # the node's CPU: the architecture a container image must publish
MemoryKind = Literal["discrete", "unified"]  # VRAM of its own, or one pool shared with the CPU
SM = re.compile(r"^sm_(\d{1,2})(\d)[a-z]?$")  # sm_120 -> compute capability 12.0, sm_89 -> 8.9
# A CUDA version as major.minor ("13.2"): what a driver supports, what an image's toolkit needs (docs/devices.md
# "The driver's CUDA"); nvidia-container-cli refuses an image whose `cuda>=X.Y` is above the driver's.
CudaVersion = Annotated[str, Field(pattern=r"^[1-9][0-9]?\.[0-9]{1,2}$")]


def cuda_tuple(version: str) -> tuple[int, int]:
    """"13.2" -> (13, 2), to compare CUDA versions."""
    major, minor = version.split(".")
    return int(major), int(minor)


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
    compute_tflops: Tflops | None = None  # None: the speed model checks no compute roof (generator/fit/speed.py)
    memory_kind: MemoryKind = "discrete"
    cpu_arch: CpuArch = "amd64"
    accelerator: AcceleratorMode = "nvidia"
    architecture: Name | None = None  # the GPU generation by its NVIDIA name: Ampere, Ada, Blackwell
    # what a desktop session (compositor, browser) holds on the card where it was measured; already out of hami_cap_mib
    desktop_overhead_mib: MiB | None = None
    driver_version: Name | None = None  # the NVIDIA driver the device runs, e.g. 595.84
    driver_cuda: CudaVersion | None = None  # the newest CUDA that driver supports; None: not recorded, not checked
    sources: Sources

    @field_validator("arch")
    @classmethod
    def _sm(cls, value: str) -> str:
        if not SM.match(value):
            raise ValueError(f"{value!r} is not a CUDA architecture; write sm_<major><minor>, e.g. sm_120 or sm_89")
        return value

    @property
    def compute_capability(self) -> tuple[int, int]:
        """The CUDA compute capability `arch` names: sm_120 -> (12, 0), sm_121 -> (12, 1), sm_89 -> (8, 9)."""
        m = SM.match(self.arch)
        assert m is not None  # checked when loaded
        return int(m.group(1)), int(m.group(2))
