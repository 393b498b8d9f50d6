"""vLLM (upstream and the Genesis image): `vllm serve MODEL ...` with a JSON speculative config."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import Arg, EngineSpec, common_env, compact_json, resolve_env, EnvVar, MODELS_DIR


def _speculative(r: Resolved) -> list[Arg]:
    spec = r.app.speculative
    if spec is None:
        return []
    method = {"mtp": "mtp", "draft": "draft_model", "dflash": "dflash", "ngram": "ngram"}[spec.method]
    config: dict[str, object] = {"method": method}
    if spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None  # checked by the catalog loader
        config["model"] = drafter.weights[0].repo
    if spec.tokens is not None:
        config["num_speculative_tokens"] = spec.tokens
    return [Arg(("--speculative-config", compact_json(config)), "app.speculative")]


def engine(r: Resolved) -> EngineSpec:
    app, stack = r.app, r.stack
    weight = r.model.weight(app.quantization)
    assert weight is not None
    args = [Arg((weight.repo,), "app.model + app.quantization")]
    if weight.revision:
        args.append(Arg(("--revision", weight.revision), "model weights revision"))
    args += [
        Arg(("--served-model-name", app.model_alias), "app.served_name"),
        Arg(("--host", "0.0.0.0", "--port", str(stack.port)), f"stack {stack.id} port"),
        Arg(("--max-model-len", str(app.context_length)), "app.context_length"),
    ]
    if app.kv_cache_type:
        args.append(Arg(("--kv-cache-dtype", app.kv_cache_type), "app.kv_cache_type"))
    if app.gpu_memory_utilization is not None:
        args.append(Arg(("--gpu-memory-utilization", repr(app.gpu_memory_utilization)), "app.gpu_memory_utilization"))
    args += _speculative(r)
    if stack.args:
        args.append(Arg(stack.args, f"stack {stack.id}"))
    if app.extra_args:
        args.append(Arg(app.extra_args, "app.extra_args"))
    stack_env, hami, genesis, app_env = common_env(r)
    paths = [EnvVar("HF_HOME", MODELS_DIR, "chart")]
    env, overridden = resolve_env(stack_env, paths, hami, genesis, app_env)
    return EngineSpec(image=stack.image, command=stack.command, args=tuple(args), env=env, overridden=overridden,
                      port=stack.port, health_path=stack.health_path, downloads=())
