"""One module per engine family; the registry below maps each family (`engines/family.py`) to its argv builder."""

from __future__ import annotations

from collections.abc import Callable

from generator.catalog import Resolved
from generator.engines import llamacpp, lucebox, sglang, vllm
from generator.engines.base import Arg, Download, EngineSpec, EnvVar, Mount, hami_limit
from generator.engines.family import Family, family_of

# The registry: every family's argv builder (tests/engines/test_registry.py checks it covers every `Family`).
BUILDERS: dict[Family, Callable[[Resolved], EngineSpec]] = {
    "vllm": vllm.engine,
    "llamacpp": llamacpp.engine,
    "lucebox": lucebox.engine,
    "sglang": sglang.engine,
}


def engine_for(r: Resolved) -> EngineSpec:
    return BUILDERS[family_of(r.stack)](r)


__all__ = ["BUILDERS", "Arg", "Download", "EngineSpec", "EnvVar", "Family", "Mount", "engine_for", "family_of",
           "hami_limit"]
