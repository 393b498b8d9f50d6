"""llama.cpp `llama-server` and its forks (atomic, buun): GGUF files fetched by an init container."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import Arg, Download, EngineSpec, EnvVar, MODELS_DIR, common_env, download, fill, resolve_env


def speculative(r: Resolved, downloads: list[Download]) -> list[Arg]:
    """The stack's spelling of the app's speculative decoding; a drafter file joins `downloads`."""
    spec = r.app.speculative
    if spec is None:
        return []
    drafter_path = None
    if spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None  # checked by the catalog resolver
        fetched = download(drafter.weights[0])
        downloads.append(fetched)
        drafter_path = fetched.path
    spelling = r.stack.speculative_args[spec.method]  # the catalog resolver checked the stack offers the method
    return [Arg(fill(spelling, spec.tokens, drafter_path), "app.speculative")]


def engine(r: Resolved) -> EngineSpec:
    app, stack = r.app, r.stack
    weight = r.model.weight(app.quantization)
    assert weight is not None
    target = download(weight)
    downloads = [target]
    args = [
        Arg(("--model", target.path), "app.model + app.quantization"),
        Arg(("--alias", app.model_alias), "app.served_name"),
        Arg(("--host", "0.0.0.0", "--port", str(stack.port)), f"stack {stack.id} port"),
        Arg(("--ctx-size", str(app.context_length)), "app.context_length"),
    ]
    if app.kv_cache_type:
        args.append(Arg(("--cache-type-k", app.kv_cache_type, "--cache-type-v", app.kv_cache_type_v or app.kv_cache_type),
                        "app.kv_cache_type"))
    args += speculative(r, downloads)
    if app.vision and r.model.mmproj is not None:
        projector = download(r.model.mmproj)
        downloads.append(projector)
        args.append(Arg(("--mmproj", projector.path), "app.vision"))
    if stack.args:
        args.append(Arg(stack.args, f"stack {stack.id}"))
    if app.extra_args:
        args.append(Arg(app.extra_args, "app.extra_args"))
    stack_env, hami, genesis, app_env = common_env(r)
    paths = [EnvVar("HF_HOME", MODELS_DIR, "chart")]
    env, overridden = resolve_env(stack_env, paths, hami, genesis, app_env)
    return EngineSpec(image=stack.image, command=stack.command, args=tuple(args), env=env, overridden=overridden,
                      port=stack.port, health_path=stack.health_path, downloads=tuple(downloads))
