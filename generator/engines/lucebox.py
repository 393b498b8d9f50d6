"""Lucebox `dflash_server TARGET --draft DRAFT ...` (Luce-Org/lucebox-hub dflash runtime)."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import Arg, EngineSpec, EnvVar, Head, Own, build
from generator.engines.interface import EngineFamily
from generator.engines.llamacpp import PARSER, SERVER, speculative
from generator.engines.llamacpp import supports as llamacpp_supports
from generator.engines.settings import lucebox_settings
from generator.schema.engines import declaration


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
    kv = []
    if app.kv_cache_type:  # dflash_server reads its KV types from the environment
        kv = [EnvVar("DFLASH27B_KV_K", app.kv_cache_type, "app.kv_cache_type"),
              EnvVar("DFLASH27B_KV_V", app.kv_cache_type_v or app.kv_cache_type, "app.kv_cache_type")]
    return Own(args, kv)


def engine(r: Resolved) -> EngineSpec:
    return build(r, own)


def supports(argv: list[str]) -> frozenset[str]:
    """As llama.cpp's (its stacks are llama.cpp's `lucebox` fork)."""
    return llamacpp_supports(argv)


# A Lucebox stack is llama.cpp's `lucebox` fork: smoke reads it as a llama.cpp server, its memory as llama.cpp's.
FAMILY = EngineFamily(declaration("lucebox"), engine, supports, lucebox_settings, fit="llamacpp", server=SERVER,
                      parser=PARSER, allocates=True)
