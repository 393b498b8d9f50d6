"""Lucebox `dflash_server TARGET --draft DRAFT ...` (Luce-Org/lucebox-hub dflash runtime)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from generator.catalog import Resolved
from generator.engines.argv import Flag, Given
from generator.engines.base import Arg, EngineSpec, EnvVar, Head, Own, Sized, build, engine_env, given_args
from generator.engines.interface import EngineFamily, Knobs
from generator.engines.llamacpp import PARSER, SERVER, speculative
from generator.engines.llamacpp import supports as llamacpp_supports
from generator.engines.settings import LuceboxSettings, lucebox_of, lucebox_settings
from generator.schema import declaration

if TYPE_CHECKING:
    from generator.engines.readback import Launcher, Mapped, Spelling, Token
    from generator.schema import Stack


def own(head: Head) -> Own:
    app = head.r.app
    target = head.fetch(head.weight)
    args = [
        Arg((target.path,), "app.model + app.quantization"),
        *speculative(head),
        Arg(("--model-name", app.model_alias), "app.served_name"),
        head.listen(),
        Arg(("--max-ctx", str(app.context_length)), "app.context_length"),
    ]
    return Own(args, _kv_env(head.r))


def _kv_env(r: Resolved) -> list[EnvVar]:
    """dflash_server reads its KV types from the environment."""
    app = r.app
    if not app.kv_cache_type:
        return []
    return [EnvVar("DFLASH27B_KV_K", app.kv_cache_type, "app.kv_cache_type"),
            EnvVar("DFLASH27B_KV_V", app.kv_cache_type_v or app.kv_cache_type, "app.kv_cache_type")]


def engine(r: Sized) -> EngineSpec:
    return build(r, own)


def decide(r: Sized) -> LuceboxSettings:
    """The app's Lucebox settings, decided from its fields without an argv: `--max-ctx` as `own` writes it unless
    the stack's args or the app's extra_args override it (the speculative spelling comes before it), and the env."""
    flags = {"--max-ctx": Flag("--max-ctx", str(r.app.context_length), "app.context_length", 0)}
    env, _ = engine_env(r, _kv_env(r))
    return lucebox_of(r, Given(flags, given_args(r)), env)


def supports(argv: list[str]) -> frozenset[str]:
    """As llama.cpp's (its stacks are llama.cpp's `lucebox` fork)."""
    return llamacpp_supports(argv)


# ---- import: dflash_server's argv read back (generator/importer/) -------------------------------------------

def read(tokens: list[Token], spell: Spelling, stack: Stack | None) -> Mapped:
    from generator.engines.readback import (Mapped, Reader, common, positive_int, speculative_spelled, stack_args,
                                            take_port)

    reader = Reader(tokens, spell)
    out = Mapped()
    target = reader.positional()
    if target is not None:
        out.model_path = target
    speculative_spelled(reader, out, stack)
    name = reader.value("--model-name")
    if name is not None:
        out.fields["served_name"] = name[0]
        out.origins["served_name"] = name[1]
    common(reader, out)
    take_port(reader, out, stack)
    ctx = reader.value("--max-ctx")
    if ctx is not None and positive_int(ctx[0]) is not None:
        out.fields["context_length"] = int(ctx[0])
        out.origins["context_length"] = ctx[1]
    elif ctx is not None:
        reader.put_back("--max-ctx")
    stack_args(reader, out, stack)
    out.extra = reader.rest()
    return out


# dflash_server reads its KV cache types from DFLASH27B_KV_K / DFLASH27B_KV_V (what `own` writes)
def launcher() -> Launcher:
    from generator.engines.readback import Launcher

    return Launcher(read, "--max-ctx", program=re.compile(r"^dflash_server$"), kv_env=("DFLASH27B_KV_K",
                                                                                       "DFLASH27B_KV_V"))


# A Lucebox stack is llama.cpp's `lucebox` fork: smoke reads it as a llama.cpp server, its memory as llama.cpp's.
FAMILY = EngineFamily(declaration("lucebox"), engine, supports, lucebox_settings, decide, fit="llamacpp", server=SERVER,
                      knobs=Knobs(("--max-ctx",), False, (), "", None, "%d", None), parser=PARSER, allocates=True,
                      local_smoke=True, launcher_of=launcher)
