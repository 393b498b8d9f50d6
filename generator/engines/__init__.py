"""One module per engine family; `engine_for` picks it from the app's stack."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines import llamacpp, lucebox, vllm
from generator.engines.base import Arg, Download, EngineSpec, EnvVar, Mount, hami_limit


def engine_for(r: Resolved) -> EngineSpec:
    if r.stack.engine == "vllm":
        return vllm.engine(r)
    if r.stack.fork == "lucebox":
        return lucebox.engine(r)
    return llamacpp.engine(r)


__all__ = ["Arg", "Download", "EngineSpec", "EnvVar", "Mount", "engine_for", "hami_limit"]
