"""llama.cpp `llama-server` and its forks (atomic, buun): GGUF files fetched by an init container."""

from __future__ import annotations

import re

from generator.catalog import Resolved
from generator.engines.base import SLOT_DIR, Arg, EngineSpec, Head, Own, build, chat_template_path, fill
from generator.engines.interface import EngineFamily, Get, Launcher, Parser, Said, Server, Text, count
from generator.engines.readback import (
    Mapped,
    Origin,
    Reader,
    Spelling,
    Syntax,
    Token,
    common,
    speculative_spelled,
    stack_args,
    take_context,
    take_field,
    take_port,
)
from generator.engines.settings import llama_settings
from generator.schema import Stack
from generator.schema.engines import declaration

BUILD = re.compile(r"(?:^|[-_:])b(\d{3,})(?=$|[-_.])")  # `server-cuda13-b8740`, `b8740-3f7c1d2`


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
    if app.vision and r.model.mmproj is not None:
        args.append(Arg(("--mmproj", head.fetch(r.model.mmproj).path), "app.vision"))
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


def build_of(text: str) -> str | None:
    """`b8740` from an image tag (ggml-org/llama.cpp's `server-cuda13-b8740`) or a `build_info` (`b8740-3f7c1d2`)."""
    match = BUILD.search(text)
    return f"b{match.group(1)}" if match else None


def _said(said: Said, get: Get, text: Text) -> tuple[str | None, str | None, int | None]:
    """`GET /props` (ggml-org/llama.cpp@001d906a6d86e2490e394361e7cc6f478b100088 tools/server/server-context.cpp,
    `get_res_props`): `build_info`, `model_path`, `default_generation_settings.n_ctx` (the per-slot context); the
    `/v1/models` card's `meta.n_ctx` (same file, `get_res_model_info`) where /props does not say it."""
    props, card = said.props, said.card
    meta = card.get("meta") if card else None
    context = count(said.generation.get("n_ctx")) or (count(meta.get("n_ctx")) if isinstance(meta, dict) else None)
    return (text(props.get("build_info")) if props else None, text(props.get("model_path")) if props else None,
            context)


def _answers_props(said: Said) -> bool:
    return said.props is not None and ("build_info" in said.props or "model_path" in said.props)


# ---- import: llama-server's argv read back (generator/importer/) ---------------------------------------------

# Aliases of the flags `read` takes, for a chart whose stack has no flag table (each listed in
# catalog/flags/llamacpp-b8740.yaml).
ALIASES = {"-m": "--model", "-a": "--alias", "-c": "--ctx-size", "-ctk": "--cache-type-k", "-ctv": "--cache-type-v",
           "-mm": "--mmproj", "-hf": "--hf-repo", "-hfr": "--hf-repo", "-hff": "--hf-file"}


def read(tokens: list[Token], spell: Spelling, stack: Stack | None) -> Mapped:
    reader = Reader(tokens, spell)
    out = Mapped()
    model = reader.value("--model")
    if model is not None:
        out.model_path = model
    else:
        repo = reader.value("--hf-repo")
        if repo is not None:
            out.hf_repo = repo
            hf_file = reader.value("--hf-file")
            out.hf_file = hf_file[0] if hf_file else None
    take_field(reader, out, "--alias", "served_name")
    common(reader, out)
    take_port(reader, out, stack)
    take_context(reader, out, "--ctx-size", "not a positive token count (0 means the model's own length)")
    k, v = reader.peek("--cache-type-k"), reader.peek("--cache-type-v")
    if k is not None and v is not None:
        kk = reader.value("--cache-type-k")
        reader.value("--cache-type-v")
        out.fields["kv_cache_type"] = k
        if v != k:
            out.fields["kv_cache_type_v"] = v
        out.origins["kv_cache_type"] = kk[1] if kk else Origin("", None)
    speculative_spelled(reader, out, stack)
    mmproj = reader.value("--mmproj")
    if mmproj is not None:
        out.mmproj_path = mmproj
    stack_args(reader, out, stack)
    out.extra = reader.rest()
    return out


# ghcr.io/ggml-org/llama.cpp images are llama.cpp's own (a drafted stack's fork is `upstream`)
LAUNCHER = Launcher(read, "--ctx-size", program=re.compile(r"^llama-server"), syntax=Syntax(ALIASES),
                    chat_template_flag="--chat-template-file", upstream_images=("ghcr.io/ggml-org/",))
SERVER = Server("llama.cpp", "llamacpp", _said, build_of, sniff=_answers_props, sniff_order=0, default=True)
PARSER = Parser(strict_ints=True)
FAMILY = EngineFamily(declaration("llamacpp"), engine, supports, llama_settings, fit="llamacpp", server=SERVER,
                      parser=PARSER, llama_server=True, allocates=True, launcher=LAUNCHER)
