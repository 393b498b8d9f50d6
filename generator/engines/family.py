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


__all__ = ["FAMILIES", "Family", "family_of"]
