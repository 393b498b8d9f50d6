"""The engine families and the one place that tells a stack's family.

The registry is `generator/schema/engines.py` (the catalog checks a stack's `engine` against it when it is loaded,
so an unknown engine stops there with its file and line). Each registered family has its module
`generator/engines/<family>.py` with one `FAMILY` (`engines/interface.py` `EngineFamily`: argv builder, settings
reader, memory fit, what its server says, its parser's traits, its launcher for import, its boot-log reader for
calibrate), loaded here by the family's name: adding an engine
edits no dispatch, it adds a module and a registry entry.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from generator.engines.interface import EngineFamily, Parser, Server
from generator.schema import Stack
from generator.schema import ENGINES, FAMILIES, Family, declaration, declared


@cache
def family(name: Family) -> EngineFamily:
    """The registered family `name` (its module's `FAMILY`)."""
    decl = declaration(name)
    module = import_module(f"generator.engines.{decl.family}")
    found = getattr(module, "FAMILY", None)
    assert isinstance(found, EngineFamily) and found.declared == decl, (
        f"generator/engines/{decl.family}.py: FAMILY must be the EngineFamily of {decl} (engines/interface.py)")
    return found


def family_of(stack: Stack) -> Family:
    """The family of a stack: its engine, and the fork that selects a family of its own (llama.cpp's Lucebox)."""
    return Family(stack.family.family)


def family_for(stack: Stack) -> EngineFamily:
    return family(family_of(stack))


def stack_engine(name: Family) -> tuple[str, str | None]:
    """The stack `engine` and `fork` a family is declared with (the inverse of `family_of`; None: the fork is not
    implied by the family)."""
    decl = declaration(name)
    return decl.engine, decl.fork


def server_of(engine: str) -> Server:
    """What a server of the stack engine `engine` says about itself (its default family's)."""
    return family(Family(declared(engine, "").family)).server


def parser_of(engine: str, fork: str) -> Parser:
    return family(Family(declared(engine, fork).family)).parser


def allocates_what_it_needs(stack: Stack) -> bool:
    """Whether the server allocates what its model needs (llama.cpp and its forks, Lucebox), rather than a fraction
    of the device it sizes its pool from (vLLM's utilization, SGLang's mem_fraction_static): only for the former is a
    HAMi limit above the card harmless headroom."""
    return family_for(stack).allocates


__all__ = ["ENGINES", "FAMILIES", "Family", "allocates_what_it_needs", "family", "family_for", "family_of",
           "parser_of", "server_of", "stack_engine"]
