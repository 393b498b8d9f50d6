"""vLLM (upstream and the Genesis image): `vllm serve MODEL ...` with a JSON speculative config."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from generator.catalog import Resolved
from generator.engines.argv import Flag, Given
from generator.engines.base import (Arg, EngineSpec, Head, Own, Sized, build, chat_template_path, compact_json,
                                    engine_env, given_args)
from generator.core import Problem
from generator.engines.interface import (
    EngineFamily,
    Get,
    Knobs,
    Parser,
    Said,
    Server,
    Text,
    count,
    semver,
)
from generator.engines.settings import VllmSettings, vllm_of, vllm_settings
from generator.schema import declaration

if TYPE_CHECKING:
    from generator.engines.bootlog import BootReader, Parsed, Provenance, Reading, Row
    from generator.engines.readback import Launcher, Mapped, Spelling, Token
    from generator.schema import Stack

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
    if app.audio:
        args.append(Arg(("--limit-mm-per-prompt", _limits(head.r)), "app.audio"))
    if app.chat_template:
        args.append(Arg(("--chat-template", chat_template_path()), "app.chat_template"))
    return Own(args + _speculative(head.r))


def _limits(r: Resolved) -> str:
    """The maintainer's E4B: '{"image": 1, "audio": 1}'."""
    return json.dumps({"image": 1 if r.app.vision else 0, "audio": 1})


def engine(r: Sized) -> EngineSpec:
    return build(r, own)


def decide(r: Sized) -> VllmSettings:
    """The app's vLLM settings, decided from its fields without an argv: the flags `own` writes (as typed Flags),
    overridden by the stack's args and the app's extra_args, and the env the container gets."""
    app = r.app
    flags = [Flag("--max-model-len", str(app.context_length), "app.context_length", 0)]
    if app.kv_cache_type:
        flags.append(Flag("--kv-cache-dtype", app.kv_cache_type, "app.kv_cache_type", 0))
    if app.gpu_memory_utilization is not None:
        flags.append(Flag("--gpu-memory-utilization", repr(app.gpu_memory_utilization), "app.gpu_memory_utilization",
                          0))
    if app.audio:
        flags.append(Flag("--limit-mm-per-prompt", _limits(r), "app.audio", 0))
    given = Given({f.flag: f for f in flags}, given_args(r))
    spec = app.speculative
    decided = None
    if spec is not None and given.text.last("--speculative-config") is None:  # the config `own` writes, typed
        where = Flag("--speculative-config", None, "app.speculative", 0).where()
        decided = (SPEC_METHODS[spec.method], spec.tokens, where)
    env, _ = engine_env(r, [])
    return vllm_of(r, given, env, decided)


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
    from generator.engines.readback import Reader, server_fields, stack_args

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


# vllm/vllm-openai images run `vllm serve` as their entrypoint (github.com/vllm-project/vllm@dead20baf70df
# docker/Dockerfile, its last stage `vllm-openai`: `ENTRYPOINT ["vllm", "serve"]`): a container that sets only
# `args` (the second public store's llamacppdiffusiongemma26a4bone) serves with them.
def launcher() -> Launcher:
    from generator.engines.readback import Launcher, Syntax

    return Launcher(read, "--max-model-len", program=re.compile(r"^vllm$"), subcommand="serve",
                    syntax=Syntax(equals=True, underscores=True), chat_template_flag="--chat-template",
                    own_speculative=True, upstream_images=("vllm/vllm-openai", "docker.io/vllm/vllm-openai"),
                    entrypoint=(re.compile(r"^(docker\.io/)?vllm/vllm-openai:"), "vllm serve"))


# ---- calibrate: the lines of a vLLM boot log (generator/fit/calibrate.py runs the reader) ------------------
#
# Line formats, from the engine's source at the pinned version:
# vLLM 0.20.0 (the wheel the catalog's vLLM flag tables are read from; 0.19.1 and 0.21.0 print the same lines):
# `vllm/v1/worker/gpu_model_runner.py` "Model loading took %s GiB memory and %.6f seconds",
# "Graph capturing finished in %.0f secs, took %.2f GiB"; `vllm/v1/worker/gpu_worker.py` "Available KV cache
# memory: %s GiB" and (debug) "Initial free memory: %s GiB; Requested memory: %f (util), %s GiB";
# `vllm/v1/core/kv_cache_utils.py` "GPU KV cache size: %s tokens", "Maximum concurrency for %s tokens per request:
# %.2fx" and the max-seq-len error "To serve at least one request with the models's max seq len (M), (X GiB KV cache
# is needed, which is larger than the available KV cache memory (Y GiB). Based on the available memory, the
# estimated maximum model length is N."; `vllm/v1/engine/core.py` "Initializing a V1 LLM engine (v%s) with config:
# model=..."; `vllm/entrypoints/utils.py` "non-default args: %s".

@cache
def _figures() -> list[tuple[str, re.Pattern[str]]]:
    """The figure lines, compiled on the first log read."""
    from generator.engines.bootlog import NUMBER

    return [
        ("weights_gib", re.compile(r"Model loading took " + NUMBER + r" GiB memory")),
        ("kv_available_gib", re.compile(r"Available KV cache memory: " + NUMBER + r" GiB")),
        ("kv_tokens", re.compile(r"GPU KV cache size: " + NUMBER + r" tokens")),
        ("concurrency", re.compile(r"Maximum concurrency for " + NUMBER + r" tokens per request: " + NUMBER + r"x")),
        ("graphs_gib", re.compile(r"Graph capturing finished in " + NUMBER + r" secs, took " + NUMBER + r" GiB")),
        ("needed", re.compile(r"max seq len \(" + NUMBER + r"\), \(" + NUMBER
                              + r" GiB KV cache is needed, which is larger than "
                              r"the available KV cache memory \(" + NUMBER + r" GiB\)")),
        ("estimated_max", re.compile(r"the estimated maximum model length is " + NUMBER)),
        ("requested", re.compile(r"Requested memory: " + NUMBER + r" \(util\), " + NUMBER + r" GiB")),
    ]


_VLLM_MODEL = re.compile(r"Initializing a V1 LLM engine \(v([^)]+)\) with config: model='([^']+)'")
_VLLM_ARGS_MODEL = re.compile(r"non-default args: .*'model': '([^']+)'")


def read_boot_line(out: Parsed, line: str, number: int) -> None:
    """One line of a vLLM boot log: the engine, its version and model, and each figure it prints."""
    from generator.engines.bootlog import add

    assert out.models is not None
    if match := _VLLM_MODEL.search(line):
        out.engine, out.version, out.model = "vllm", match.group(1), out.model or match.group(2)
        out.models.append((number, match.group(2)))
    elif (match := _VLLM_ARGS_MODEL.search(line)) and not out.model:
        out.engine, out.model = "vllm", match.group(1)
        out.models.append((number, match.group(1)))
    for kind, pattern in _figures():
        if match := pattern.search(line):
            out.engine = "vllm"
            add(out, _vllm_reading(kind, match, number, line))


def _vllm_reading(kind: str, m: re.Match[str], number: int, line: str) -> Reading:
    from generator.engines.bootlog import Reading, figure, whole

    if kind == "concurrency":
        return Reading(kind, figure(m.group(2)), number, line, context=whole(m.group(1)))
    if kind == "graphs_gib":
        return Reading(kind, figure(m.group(2)), number, line)
    if kind == "needed":
        return Reading(kind, figure(m.group(2)), number, line, context=whole(m.group(1)),
                       detail=str(figure(m.group(3))))
    if kind == "requested":
        return Reading(kind, figure(m.group(2)), number, line, detail=str(figure(m.group(1))))
    return Reading(kind, figure(m.group(1)), number, line)


def vllm_rows(parsed: Parsed, p: Provenance) -> list[Row]:
    """vLLM readings -> kv_available, kv_needed, weights_loaded, cuda_graphs rows."""
    from generator.engines.bootlog import GIB_MIB, Row, cal, figure

    rows: list[Row] = []
    cap, util = p.cap_mib, p.util
    if (req := parsed.first("requested")) is not None:
        util = float(req.detail)
        cap = round(req.value * GIB_MIB / util) if util else cap
    if (w := parsed.first("weights_gib")) is not None and p.quant:
        rows.append(Row("model", cal("weights_loaded", None, f"vLLM `{w.text[-120:]}`", p, value_gib=w.value,
                                      quant=p.quant)))
    available = parsed.first("kv_available_gib")
    needed = parsed.first("needed")
    avail_gib = available.value if available else (figure(needed.detail) if needed else None)
    if avail_gib is not None and cap and util:
        line = available.text if available else needed.text if needed else ""
        rows.append(Row("app", cal("kv_available", None, f"vLLM: {avail_gib} GiB KV cache available (`{line[:160]}`)",
                                    p, value_gib=avail_gib, cap_mib=cap, gpu_memory_utilization=util)))
    if needed is not None:
        rows.append(Row("app", cal("kv_needed", None, f"vLLM: {needed.value} GiB KV cache needed at max seq len "
                                    f"{needed.context:,}", p, value_gib=needed.value, context=needed.context)))
    estimate = parsed.first("estimated_max")
    if estimate is not None and avail_gib is not None:
        what = f"vLLM: the estimated maximum model length {int(estimate.value):,} "
        rows.append(Row("app", cal("kv_needed", None, what +
                                    f"fits the {avail_gib} GiB available", p, value_gib=avail_gib,
                                    context=int(estimate.value))))
    tokens = parsed.first("kv_tokens")
    if tokens is not None and available is not None and estimate is None:
        rows.append(Row("app", cal("kv_needed", None, f"vLLM: GPU KV cache size {int(tokens.value):,} tokens in "
                                    f"{available.value} GiB", p, value_gib=available.value, context=int(tokens.value))))
    for conc in parsed.all("concurrency"):
        if available is not None and conc.value > 0 and conc.context:
            rows.append(Row("app", cal("kv_needed", None, f"vLLM: maximum concurrency {conc.value}x for "
                                        f"{conc.context:,} tokens in {available.value} GiB", p,
                                        value_gib=round(available.value / conc.value, 3), context=conc.context)))
    if (graphs := parsed.first("graphs_gib")) is not None and graphs.value > 0:
        rows.append(Row("app", cal("cuda_graphs", None, f"vLLM: graph capturing took {graphs.value} GiB", p,
                                    value_gib=graphs.value)))
    return rows


BOOT_LOG_NEEDS = ("'Available KV cache memory: X GiB', 'Model loading took X GiB', 'GPU KV cache size: N tokens' or "
                  "the max-seq-len error with 'the estimated maximum model length is N'")


def boot() -> BootReader:
    from generator.engines.bootlog import BootReader

    return BootReader(read_boot_line, vllm_rows, BOOT_LOG_NEEDS)


SERVER = Server("vLLM", "vllm", _said, semver, sniff=_answers_version, sniff_order=1, metrics=True)
FAMILY = EngineFamily(declaration("vllm"), engine, supports, vllm_settings, decide, fit="vllm", server=SERVER,
                      knobs=Knobs(("--max-model-len",), False, ("--max-num-seqs",), "seqs",
                                  "--override-generation-config", '{"max_new_tokens": %d}', "--api-key"),
                      olares_base="vllmllmbasev3", parser=Parser(abbreviations=True), launcher_of=launcher,
                      boot_of=boot)
