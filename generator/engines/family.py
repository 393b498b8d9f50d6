"""The engine families and the one place that tells a stack's family.

A stack names its `engine` (`generator/schema/stack.py` `Engine`: the catalog's names, checked when the catalog is
loaded, so an unknown engine stops there with its file and line) and its `fork`; the family is what the code
dispatches on: argv builder (`generator/engines/__init__.py`), effective settings (`engines/settings.py`), memory fit
(`fit/sizing.py place`). Every dispatch is exhaustive over `Family` (`assert_never`): a new family is a type error at
each of them until it is handled, never a fall-through to another engine.
"""

from __future__ import annotations

from typing import Literal, assert_never, get_args

from generator.schema import Stack
from generator.schema.stack import Engine

Family = Literal["vllm", "llamacpp", "lucebox", "sglang"]
FAMILIES: tuple[Family, ...] = get_args(Family)


def family_of(stack: Stack) -> Family:
    """The family of a stack: its engine, and for llama.cpp the Lucebox fork, whose server is not llama-server."""
    engine = stack.engine
    if engine == "vllm":
        return "vllm"
    if engine == "llamacpp":
        return "lucebox" if stack.fork == "lucebox" else "llamacpp"
    if engine == "sglang":
        return "sglang"
    assert_never(engine)


def stack_engine(family: Family) -> tuple[Engine, str | None]:
    """The stack `engine` and `fork` a family is declared with (the inverse of `family_of`; None: the fork is not
    implied by the family): Lucebox is llama.cpp's `lucebox` fork, the others their own engine."""
    if family == "lucebox":
        return "llamacpp", "lucebox"
    if family == "vllm" or family == "llamacpp" or family == "sglang":
        return family, None
    assert_never(family)


def allocates_what_it_needs(stack: Stack) -> bool:
    """Whether the server allocates what its model needs (llama.cpp and its forks, Lucebox), rather than a fraction
    of the device it sizes its pool from (vLLM's utilization, SGLang's mem_fraction_static): only for the former is a
    HAMi limit above the card harmless headroom."""
    family = family_of(stack)
    return family in ("llamacpp", "lucebox")


__all__ = ["FAMILIES", "Family", "allocates_what_it_needs", "family_of", "stack_engine"]
