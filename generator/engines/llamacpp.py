"""llama.cpp `llama-server` and its forks (atomic, buun): GGUF files fetched by an init container."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import SLOT_DIR, Arg, EngineSpec, Head, Own, build, chat_template_path, fill


def speculative(head: Head) -> list[Arg]:
    """The stack's spelling of the app's speculative decoding; a drafter file joins the downloads."""
    r = head.r
    spec = r.app.speculative
    if spec is None:
        return []
    drafter_path = None
    if spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None  # checked by the catalog resolver
        drafter_path = head.fetch(drafter.weights[0]).path
    spelling = r.stack.speculative_args[spec.method]  # the catalog resolver checked the stack offers the method
    return [Arg(fill(spelling, spec.tokens, drafter_path), "app.speculative")]


def own(head: Head) -> Own:
    r = head.r
    app = r.app
    target = head.fetch(head.weight)
    args = [
        Arg(("--model", target.path), "app.model + app.quantization"),
        Arg(("--alias", app.model_alias), "app.served_name"),
        head.listen(),
        Arg(("--ctx-size", str(app.context_length)), "app.context_length"),
    ]
    if app.kv_cache_type:
        v_type = app.kv_cache_type_v or app.kv_cache_type
        args.append(Arg(("--cache-type-k", app.kv_cache_type, "--cache-type-v", v_type), "app.kv_cache_type"))
    args += speculative(head)
    if app.vision and r.mmproj is not None:
        args.append(Arg(("--mmproj", head.fetch(r.mmproj).path), "app.mmproj" if app.mmproj else "app.vision"))
    if app.chat_template:
        args.append(Arg(("--chat-template-file", chat_template_path()), "app.chat_template"))
    if app.slot_save:
        args.append(Arg(("--slot-save-path", SLOT_DIR), "app.slot_save"))
    return Own(args)


def engine(r: Resolved) -> EngineSpec:
    return build(r, own)


def supports(argv: list[str]) -> frozenset[str]:
    """What the Router card may declare from the argv: tools with `--jinja` (llama.cpp docs/function-calling.md:
    tool calls need --jinja, a generic format serves any template); the catalog holds no reasoning fact for
    llama.cpp models, so no thinking."""
    return frozenset({"tools"}) if "--jinja" in argv else frozenset()
