"""vLLM (upstream and the Genesis image): `vllm serve MODEL ...` with a JSON speculative config."""

from __future__ import annotations

import json
import re
from typing import Any

from generator.catalog import Resolved
from generator.engines.base import Arg, EngineSpec, Head, Own, build, chat_template_path, compact_json
from generator.core.errors import Problem
from generator.engines.interface import EngineFamily, Get, Launcher, Parser, Said, Server, Text, count, semver
from generator.engines.readback import Mapped, Reader, Spelling, Syntax, Token, server_fields, stack_args
from generator.engines.settings import vllm_settings
from generator.schema import Stack
from generator.schema.engines import declaration

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


def _said(said: Said, get: Get, text: Text) -> tuple[str | None, str | None, int | None]:
    """`GET /version` (vllm/entrypoints/openai/api_server.py `show_version`: `{"version": VLLM_VERSION}`) and the
    `/v1/models` `ModelCard` (vllm-project/vllm@0052bed36509c7a5a2d8e48265334e40cf2f5a0e
    vllm/entrypoints/openai/protocol.py: `root` = the model the server was started with, `max_model_len`)."""
    card, version = said.card, said.version
    return (text(version.get("version")) if version else None, text(card.get("root")) if card else None,
            count(card.get("max_model_len")) if card else None)


def _answers_version(said: Said) -> bool:
    return said.version is not None and isinstance(said.version.get("version"), str)


# ---- import: `vllm serve`'s argv read back (generator/importer/) -------------------------------------------

READ_SPEC_METHODS = {v: k for k, v in SPEC_METHODS.items()}  # vLLM -> catalog
READ_SPEC_KEYS = {"method", "model", "num_speculative_tokens"}


def read(tokens: list[Token], spell: Spelling, stack: Stack | None) -> Mapped:
    reader = Reader(tokens, spell)
    out = server_fields(reader, stack, reader.positional() or reader.value("--model"), "--max-model-len",
                         "--gpu-memory-utilization", whole=True)
    spec = reader.value("--speculative-config")
    if spec is not None:
        mapped = _vllm_speculative(spec[0])
        if mapped is None:
            reader.put_back("--speculative-config")
            out.notes.append(Problem(str(spec[1]), None, None, "--speculative-config holds keys the catalog does not "
                                     "model (it knows method, model, num_speculative_tokens); kept in extra_args"))
        else:
            fields, drafter = mapped
            out.fields["speculative"] = fields
            out.origins["speculative"] = spec[1]
            out.drafter_repo = drafter
    stack_args(reader, out, stack)
    out.extra = reader.rest()
    return out


def _vllm_speculative(text: str) -> tuple[dict[str, Any], str | None] | None:
    try:
        config = json.loads(text)
    except ValueError:
        return None
    if not isinstance(config, dict) or not set(config) <= READ_SPEC_KEYS:
        return None
    method = READ_SPEC_METHODS.get(str(config.get("method")))
    if method is None:
        return None
    fields: dict[str, Any] = {"method": method}
    tokens = config.get("num_speculative_tokens")
    if tokens is not None:
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
            return None
        fields["tokens"] = tokens
    model = config.get("model")
    if model is not None and not isinstance(model, str):
        return None
    return fields, model


LAUNCHER = Launcher(read, "--max-model-len", program=re.compile(r"^vllm$"), subcommand="serve",
                    syntax=Syntax(equals=True, underscores=True), chat_template_flag="--chat-template",
                    own_speculative=True, upstream_images=("vllm/vllm-openai", "docker.io/vllm/vllm-openai"))
SERVER = Server("vLLM", "vllm", _said, semver, sniff=_answers_version, sniff_order=1, metrics=True)
FAMILY = EngineFamily(declaration("vllm"), engine, supports, vllm_settings, fit="vllm", server=SERVER,
                      parser=Parser(abbreviations=True), launcher=LAUNCHER)
