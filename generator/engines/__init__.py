"""One module per engine family (the registry: generator/schema/engines.py; each module's `FAMILY`:
generator/engines/interface.py); the argv builder and the Router card's supports of a resolved app, by its family.
A family's module is imported when an app of that family is first built (`engines/family.py` `family`)."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import Arg, Download, EngineSpec, EnvVar, Mount, Sized, hami_limit
from generator.engines.family import Family, family_for, family_of


def engine_for(r: Sized) -> EngineSpec:
    """The app's argv and env, built by its family (`r` sized: generator/fit/sizing.py `sized`)."""
    return family_for(r.stack).build(r)


def supports_for(r: Resolved, argv: list[str]) -> frozenset[str]:
    return family_for(r.stack).supports(argv)


__all__ = ["Arg", "Download", "EngineSpec", "EnvVar", "Family", "Mount", "Sized", "engine_for",
           "family_of", "hami_limit", "supports_for"]
