"""Lucebox `dflash_server TARGET --draft DRAFT ...` (Luce-Org/lucebox-hub dflash runtime)."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import Arg, EngineSpec, EnvVar, MODELS_DIR, common_env, download, resolve_env
from generator.engines.llamacpp import speculative


def engine(r: Resolved) -> EngineSpec:
    app, stack = r.app, r.stack
    weight = r.model.weight(app.quantization)
    assert weight is not None
    target = download(weight)
    downloads = [target]
    args = [Arg((target.path,), "app.model + app.quantization"), *speculative(r, downloads)]
    args += [
        Arg(("--model-name", app.model_alias), "app.served_name"),
        Arg(("--host", "0.0.0.0", "--port", str(stack.port)), f"stack {stack.id} port"),
        Arg(("--max-ctx", str(app.context_length)), "app.context_length"),
    ]
    if stack.args:
        args.append(Arg(stack.args, f"stack {stack.id}"))
    if app.extra_args:
        args.append(Arg(app.extra_args, "app.extra_args"))
    stack_env, hami, genesis, app_env = common_env(r)
    kv = []
    if app.kv_cache_type:
        kv = [EnvVar("DFLASH27B_KV_K", app.kv_cache_type, "app.kv_cache_type"),
              EnvVar("DFLASH27B_KV_V", app.kv_cache_type_v or app.kv_cache_type, "app.kv_cache_type")]
    paths = [EnvVar("HF_HOME", MODELS_DIR, "chart")]
    env, overridden = resolve_env(stack_env, paths, hami, kv, genesis, app_env)
    return EngineSpec(image=stack.image, command=stack.command, args=tuple(args), env=env, overridden=overridden,
                      port=stack.port, health_path=stack.health_path, downloads=tuple(downloads))
