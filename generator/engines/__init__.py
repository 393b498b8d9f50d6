"""One module per engine family (the registry: generator/schema/engines.py; each module's `FAMILY`:
generator/engines/interface.py); the argv builder and the Router card's supports of a resolved app, by its family."""

from __future__ import annotations

from collections.abc import Callable

from generator.catalog import Resolved
from generator.engines.base import Arg, Download, EngineSpec, EnvVar, Mount, hami_limit
from generator.engines.family import FAMILIES, Family, family, family_for, family_of

# Every family's argv builder and what its argv lets the olares-v3 Router card declare (chart/plan.py
# MODEL_SUPPORTS: tools, thinking), read from the registry (tests/engines/test_registry.py).
BUILDERS: dict[Family, Callable[[Resolved], EngineSpec]] = {name: family(name).build for name in FAMILIES}
SUPPORTS: dict[Family, Callable[[list[str]], frozenset[str]]] = {name: family(name).supports for name in FAMILIES}


def engine_for(r: Resolved) -> EngineSpec:
    return family_for(r.stack).build(r)


def supports_for(r: Resolved, argv: list[str]) -> frozenset[str]:
    return family_for(r.stack).supports(argv)


__all__ = ["BUILDERS", "SUPPORTS", "Arg", "Download", "EngineSpec", "EnvVar", "Family", "Mount", "engine_for",
           "family_of", "hami_limit", "supports_for"]
