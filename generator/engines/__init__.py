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


# What each family's argv lets the olares-v3 Router card declare (chart/plan.py MODEL_SUPPORTS: tools, thinking).
SUPPORTS: dict[Family, Callable[[list[str]], frozenset[str]]] = {
    "vllm": vllm.supports,
    "llamacpp": llamacpp.supports,
    "lucebox": lucebox.supports,
    "sglang": sglang.supports,
}


def supports_for(r: Resolved, argv: list[str]) -> frozenset[str]:
    return SUPPORTS[family_of(r.stack)](argv)


__all__ = ["BUILDERS", "SUPPORTS", "Arg", "Download", "EngineSpec", "EnvVar", "Family", "Mount", "engine_for",
           "family_of", "hami_limit", "supports_for"]
