"""The registry of engine families: the one list of engine names, and what the catalog checks of each.

Every other place derives from it: the stack schema's `engine` (an unknown name stops at catalog load with its file
and line), the flag tables' `engine`, the family of a stack (`family_of`), and the family's module
`generator/engines/<family>.py` (its `FAMILY`, which `generator/engines/family.py` loads by this name). It sits in
the schema stage because the catalog checks a stack's engine when it is loaded, before any engine module runs; it
holds data only, no code of an engine.

Adding an engine: one `Declared` entry below, its module `generator/engines/<family>.py`, its flag table in
`catalog/flags/` and its tests (docs/architecture.md "Where to add … an engine").
"""

from dataclasses import dataclass
from typing import Annotated, NewType

from pydantic import AfterValidator, WithJsonSchema


@dataclass(frozen=True)
class Declared:
    """One engine family as the catalog sees it.

    family: the family's name and module (`generator/engines/<family>.py`);
    engine: the stacks' `engine` that selects it; fork: the stack `fork` that selects it among the engine's families
    (None: every other fork of the engine);
    gguf: the server fetches single GGUF files (every weight it loads names its `file`; a vision app needs the
    model's projector, `mmproj`);
    audio: the argv builder turns `audio: true` into an argument; slot_save: it turns `slot_save: true` into one.
    """

    family: str
    engine: str
    fork: str | None = None
    gguf: bool = False
    audio: bool = False
    slot_save: bool = False


REGISTRY: tuple[Declared, ...] = (
    Declared("vllm", "vllm", audio=True),
    Declared("llamacpp", "llamacpp", gguf=True, slot_save=True),
    Declared("lucebox", "llamacpp", fork="lucebox", gguf=True),  # Lucebox's dflash_server, not llama-server
    Declared("sglang", "sglang"),
)
ENGINES: tuple[str, ...] = tuple(dict.fromkeys(d.engine for d in REGISTRY))  # the stacks' engine names
Family = NewType("Family", str)  # a registered family's name (`Declared.family`)
FAMILIES: tuple[Family, ...] = tuple(Family(d.family) for d in REGISTRY)


def known_engine(name: str) -> str:
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)} (generator/schema/engines.py)")
    return name


# The engine name: a string the registry knows (checked wherever a model holds one: stacks, flag tables, ledger rows);
# its JSON schema lists the names, so a schema-keyed cache (generator/flags/cache.py) follows the registry.
Engine = Annotated[str, AfterValidator(known_engine), WithJsonSchema({"type": "string", "enum": list(ENGINES)})]


def declared(engine: str, fork: str) -> Declared:
    """The family a stack of `engine` and `fork` runs: the one declared for that fork, else the engine's default."""
    candidates = [d for d in REGISTRY if d.engine == engine]
    chosen = next((d for d in candidates if d.fork == fork), None) or next((d for d in candidates if d.fork is None),
                                                                           None)
    if chosen is None:
        raise ValueError(f"no family declared for engine {engine!r} fork {fork!r} (generator/schema/engines.py)")
    return chosen


def declaration(family: str) -> Declared:
    for d in REGISTRY:
        if d.family == family:
            return d
    raise ValueError(f"unknown engine family {family!r}; known: {', '.join(FAMILIES)}")


__all__ = ["ENGINES", "FAMILIES", "REGISTRY", "Declared", "Engine", "Family", "declaration", "declared",
           "known_engine"]
