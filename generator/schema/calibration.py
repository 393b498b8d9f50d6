"""Measured memory figures that refine the fit estimate (`generator/fit/estimate.py`).

A calibration row records one number an engine printed (or a maintainer measured) for a known setting:
what was measured, the value in MiB or GiB, the settings it was measured at, and where it comes from.
"""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from generator.schema.common import Date, MiB, Name, PositiveInt, Strict, Tokens

Measure = Literal[
    "weights_loaded",  # GPU memory the weights took ("Model loading took X GiB")
    "kv_available",  # KV memory vLLM found inside util x cap ("Available KV cache memory")
    "kv_needed",  # KV (+ recurrent state) vLLM asked for one request at `context` tokens
    "cuda_graphs",  # vLLM "Graph capturing finished in N secs, took X GiB"
    # llama.cpp boot-log buffers (generator/fit/calibrate.py), per `device` (CPU, CUDA0, CUDA_Host ...)
    "model_buffer",  # load_tensors: "<dev> model buffer size = X MiB"
    "kv_buffer",  # llama_kv_cache: "size = X MiB (N cells, L layers, ...)" (one row per cache)
    "recurrent_state",  # llama_memory_recurrent: "size = X MiB (...)"
    "compute_buffer",  # sched_reserve: "<dev> compute buffer size = X MiB"
    "cuda_context",  # the process's GPU memory (NVML) minus every buffer llama.cpp reported on that GPU
    "gpu_total",  # the process's GPU memory as NVML reports it
]


class Calibration(Strict):
    measure: Measure
    value_mib: Annotated[float, Field(gt=0, le=2**20)] | None = None  # at most 1 TiB, as MiB (common.py)
    value_gib: Annotated[float, Field(gt=0, le=1024)] | None = None
    what: Annotated[str, Field(min_length=3, max_length=2000)]  # the log line or observation, in words
    source: Annotated[str, Field(min_length=3, max_length=2000)]
    quant: Name | None = None  # model-level rows: which weight file was measured
    context: Tokens | None = None  # tokens (kv_needed)
    cap_mib: MiB | None = None  # HAMi cap / device total the engine saw
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    image: Name | None = None  # engine image (or version) the figure was measured with
    date: Date | None = None
    device: Name | None = None  # llama.cpp buffer's device, or the GPU measured (name, driver)
    ubatch: PositiveInt | None = None  # llama.cpp -ub the figure was measured at
    kv_type: Name | None = None  # cache type(s) the figure was measured with, "K/V"

    @model_validator(mode="after")
    def _one_value(self) -> "Calibration":
        if (self.value_mib is None) == (self.value_gib is None):
            raise ValueError("give exactly one of value_mib or value_gib")
        if self.measure == "kv_needed" and self.context is None:
            raise ValueError("kv_needed needs the `context` (tokens) it was measured at")
        if self.measure == "kv_available" and (self.cap_mib is None or self.gpu_memory_utilization is None):
            raise ValueError("kv_available needs `cap_mib` and `gpu_memory_utilization`")
        return self

    @property
    def mib(self) -> float:
        return self.value_mib if self.value_mib is not None else self.value_gib * 1024  # type: ignore[operator]


__all__ = ["Calibration", "Measure"]
