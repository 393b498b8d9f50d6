"""vLLM (upstream and the Genesis image): `vllm serve MODEL ...` with a JSON speculative config."""

from __future__ import annotations

from generator.catalog import Resolved
import json

from generator.engines.base import Arg, EngineSpec, Head, Own, build, chat_template_path, compact_json

SPEC_METHODS = {"mtp": "mtp", "draft": "draft_model", "dflash": "dflash", "ngram": "ngram"}  # catalog -> vLLM


def _speculative(r: Resolved) -> list[Arg]:
    spec = r.app.speculative
    if spec is None:
        return []
    config: dict[str, str | int] = {"method": SPEC_METHODS[spec.method]}
    if spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None  # checked by the catalog loader
        config["model"] = drafter.weights[0].repo
    if spec.tokens is not None:
        config["num_speculative_tokens"] = spec.tokens
    return [Arg(("--speculative-config", compact_json(config)), "app.speculative")]


def own(head: Head) -> Own:
    """vLLM downloads the weights itself (HF_HOME): no init-container files."""
    app, weight = head.r.app, head.weight
    args = [Arg((weight.repo,), "app.model + app.quantization")]
    if weight.revision:
        args.append(Arg(("--revision", weight.revision), "model weights revision"))
    args += [
        Arg(("--served-model-name", app.model_alias), "app.served_name"),
        head.listen(),
        Arg(("--max-model-len", str(app.context_length)), "app.context_length"),
    ]
    if app.kv_cache_type:
        args.append(Arg(("--kv-cache-dtype", app.kv_cache_type), "app.kv_cache_type"))
    if app.gpu_memory_utilization is not None:
        args.append(Arg(("--gpu-memory-utilization", repr(app.gpu_memory_utilization)), "app.gpu_memory_utilization"))
    if app.audio:  # the maintainer's E4B: '{"image": 1, "audio": 1}'
        limits = json.dumps({"image": 1 if app.vision else 0, "audio": 1})
        args.append(Arg(("--limit-mm-per-prompt", limits), "app.audio"))
    if app.chat_template:
        args.append(Arg(("--chat-template", chat_template_path()), "app.chat_template"))
    return Own(args + _speculative(head.r))


def engine(r: Resolved) -> EngineSpec:
    return build(r, own)


def supports(argv: list[str]) -> frozenset[str]:
    """What the Router card may declare from the argv (chart/plan.py MODEL_SUPPORTS): tools with
    `--enable-auto-tool-choice` and a `--tool-call-parser` (vLLM docs, tool calling), thinking with a
    `--reasoning-parser` (vLLM docs, reasoning outputs)."""
    found = set()
    if "--enable-auto-tool-choice" in argv and "--tool-call-parser" in argv:
        found.add("tools")
    if "--reasoning-parser" in argv:
        found.add("thinking")
    return frozenset(found)
