"""Engine and stack rules: settings the pinned image cannot run (docs/domain.md;
docs/domain.md#crash-rules crashes 2, 3, 4, 6). Every rule reads the resolved argv/env, so an `extra_args` or `env`
override is judged exactly as the engine will see it."""

from __future__ import annotations

from collections.abc import Iterable

from generator.engines import Argv, Flag
from generator.core import Finding, Severity
from generator.engines import ALL_TURBO, TURBO_TYPES
from generator.engines import Value
from generator.rules import AppContext, rule
from generator.rules.locate import at_flag, settings

# llama.cpp KV types per fork: generator/engines/kvbytes.py TURBO_TYPES (each family's settings answer
# `kv_type_supported`).
QUANTIZED_V = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"} | ALL_TURBO


def _image(ctx: AppContext) -> str:
    return ctx.resolved.stack.image


def _kv_shown(ctx: AppContext) -> str:
    s = settings(ctx)
    return f"`--kv-cache-dtype {s.kv_k.value}` ({s.kv_k.where() or 'from kv_cache_type'})"


def _spec_shown(ctx: AppContext) -> str:
    s = settings(ctx)
    return f"speculative decoding ({s.spec_method}, {s.spec_source or 'from speculative'})"


def _turboquant_vllm(ctx: AppContext) -> bool:
    return settings(ctx).turboquant_kv


@rule("ENG001", "error", "xxhash prefix-cache hashing only where the image has the xxhash package",
      "`--prefix-caching-hash-algo xxhash` imports the optional xxhash package: `ModuleNotFoundError: xxhash` after a "
      "few requests (Fast 2.5.2 -> 2.5.3)", "docs/domain.md#crash-rules crash 4; docs/domain.md (vllm/config/cache.py)")
def xxhash(ctx: AppContext) -> Iterable[Finding]:
    flag = Argv(ctx.engine).last("--prefix-caching-hash-algo")
    stack = ctx.resolved.stack
    if flag and (flag.value or "").startswith("xxhash") and "xxhash" in stack.missing_python_packages:
        yield at_flag(ctx, "ENG001", "error", flag, f"{flag.shown()} ({flag.where()}) needs the xxhash Python package, "
                      f"which {stack.image} lacks: `ModuleNotFoundError: xxhash` after a few requests",
                      "drop the flag (the default sha256 works) or use an image with xxhash installed")


@rule("ENG002", "error", "TurboQuant KV + speculative decoding + CUDA graphs needs --enforce-eager or Genesis P65/P67",
      "Upstream vLLM crashes capturing CUDA graphs on `query_start_loc.tolist()` (turboquant_attn.py:583) or emits "
      "degenerate output (#40807, #40831, #40880)", "docs/domain.md#crash-rules crash 2; docs/domain.md")
def turboquant_spec_graphs(ctx: AppContext) -> Iterable[Finding]:
    s = settings(ctx)
    if not _turboquant_vllm(ctx) or not s.spec_method or s.graphs_off:
        return
    if any(s.genesis_on(p) for p in ("P65", "P67", "P67B")):
        return
    genesis = "Genesis without P65/P67" if s.genesis else "upstream vLLM, no Genesis"
    flag = s.kv_k.source  # the flag that sets the KV type (the plan's settings, not the argv read again)
    message = (f"{_kv_shown(ctx)} with {_spec_shown(ctx)} and CUDA graphs on {_image(ctx)} ({genesis}): the graph "
               "capture crashes on `query_start_loc.tolist()` (turboquant_attn.py:583)")
    fix = ("add `--enforce-eager` to extra_args (measured 72.55 t/s, -17.5 % vs Genesis) or run on genesis-vllm "
           "with P65 (+ P22, P38)")
    yield at_flag(ctx, "ENG002", "error", flag, message, fix) if flag else ctx.finding("ENG002", "error", message, fix,
                                                                                     "kv_cache_type")


@rule("ENG003", "error", "TurboQuant KV on vLLM runs with Genesis P22 + P38",
      "Without the pre-allocated workspaces, prompts past ~4-8K tokens crash: `AssertionError: Workspace is locked "
      "but allocation requires ...` (#41565, #41726, #42544, #43357)",
      "docs/domain.md#crash-rules crash 3; docs/domain.md")
def turboquant_workspace(ctx: AppContext) -> Iterable[Finding]:
    s = settings(ctx)
    if not _turboquant_vllm(ctx) or s.genesis:  # on Genesis, GEN004 judges P22/P38
        return
    flag = s.kv_k.source
    message = (f"{_kv_shown(ctx)} on {_image(ctx)} without Genesis P22 + P38: prompts past ~4-8K tokens crash with "
               "`AssertionError: Workspace is locked but allocation requires ...`")
    fix = "run TurboQuant on the genesis-vllm stack (P22 + P38 are default-on) or use an fp8 KV cache"
    yield at_flag(ctx, "ENG003", "error", flag, message, fix) if flag else ctx.finding("ENG003", "error", message, fix)


def _kv_values(ctx: AppContext) -> list[tuple[str, Value[str]]]:
    return settings(ctx).kv_values()


@rule("ENG004", "error", "TurboQuant KV types only on a stack whose image has them",
      "An image without the TurboQuant kernels rejects the cache type at boot (invalid choice / unknown cache type)",
      "docs/domain.md; §5")
def turboquant_type_supported(ctx: AppContext) -> Iterable[Finding]:
    s, stack = settings(ctx), ctx.resolved.stack
    for label, value in _kv_values(ctx):
        dtype = str(value.value)
        if not s.kv_type_supported(dtype, stack):
            message = (f"{label} cache type `{dtype}` ({value.where() or 'from kv_cache_type'}) is not supported by "
                       f"{stack.image} ({stack.id})")
            fix = "use a type this stack lists (q8_0/q4_0 upstream, turbo* on atomic/buun/beellama, tq3_0 on Lucebox)"
            yield at_flag(ctx, "ENG004", "error", value.source, message, fix) if value.source else \
                ctx.finding("ENG004", "error", message, fix, "kv_cache_type")


@rule("ENG005", "error", "TurboQuant on a hybrid (GDN) model needs a stack with turboquant_hybrid",
      "vLLM before #39931 rejects TurboQuant for attention + Mamba/GDN models with NotImplementedError at boot",
      "docs/domain.md (v0.20.0), §8 R2")
def turboquant_hybrid(ctx: AppContext) -> Iterable[Finding]:
    stack = ctx.resolved.stack
    hybrid = ctx.resolved.model.architecture.recurrent
    if _turboquant_vllm(ctx) and hybrid and "turboquant_hybrid" not in stack.features:
        yield ctx.finding("ENG005", "error", f"{_kv_shown(ctx)} on hybrid model {ctx.resolved.model.name} with "
                          f"{stack.image}: NotImplementedError at boot (needs vLLM #39931 or Genesis P4)",
                          "use a stack with turboquant_hybrid (vllm-nightly, vllm-gemma4-0505, genesis-vllm)",
                          "kv_cache_type")


def _vision_flag(ctx: AppContext) -> Flag | None:
    return Argv(ctx.engine).last("--mmproj", "-mm", "--limit-mm-per-prompt")


@rule("ENG006", "error", "vision together with speculative decoding only on a stack that wires both",
      "The atomic fork does not wire mmproj with MTP (the 26B-A4B app ships text-only); upstream llama.cpp disables "
      "speculative decoding with --mmproj", "docs/domain.md#crash-rules crash 6; docs/domain.md")
def vision_with_mtp(ctx: AppContext) -> Iterable[Finding]:
    s, stack = settings(ctx), ctx.resolved.stack
    if not (s.vision and s.spec_method) or "vision_with_mtp" in stack.features:
        return
    flag = _vision_flag(ctx)
    shown = f"{flag.shown()} ({flag.where()})" if flag else "vision: true"
    message = (f"{shown} with {_spec_shown(ctx)} on {stack.image}: this stack does not wire the vision projector "
               "together with speculative decoding")
    fix = "drop vision (ship text-only, as gemma426ba4bone does) or drop speculative decoding"
    yield at_flag(ctx, "ENG006", "error", flag, message, fix) if flag else ctx.finding("ENG006", "error", message, fix,
                                                                                     "vision")


@rule("ENG010", "error", "the context is not above the model's maximum context",
      "Past max_position_embeddings the engine refuses to start (vLLM) or quality collapses past the trained "
      "RoPE range",
      "catalog/models architecture.max_context (model config.json / GGUF metadata)")
def context_limit(ctx: AppContext) -> Iterable[Finding]:
    s, arch = settings(ctx), ctx.resolved.model.architecture
    context = s.context.value
    if context <= arch.max_context:
        return
    severity: Severity = "warning" if s.long_context_allowed(ctx.engine) else "error"
    where = s.context.where() or "from context_length"
    message = f"context {context:,} ({where}) is above {ctx.resolved.model.name}'s maximum {arch.max_context:,}"
    fix = f"set context_length to at most {arch.max_context}"
    if s.context.source is not None:
        yield at_flag(ctx, "ENG010", severity, s.context.source, message, fix)
    else:
        yield ctx.finding("ENG010", severity, message, fix, "context_length")


@rule("ENG011", "error", "--enable-auto-tool-choice comes with --tool-call-parser",
      "vLLM refuses tool_choice=auto requests (HTTP 400) or fails at start without a parser", "docs/domain.md")
def tool_choice(ctx: AppContext) -> Iterable[Finding]:
    argv = Argv(ctx.engine)
    auto = argv.present("--enable-auto-tool-choice")
    if settings(ctx).auto_tool_choice_needs_parser and auto and argv.last("--tool-call-parser") is None:
        parser = "qwen3_coder" if ctx.resolved.model.family.startswith("qwen") else "gemma4"
        yield at_flag(ctx, "ENG011", "error", auto, f"{auto.shown()} ({auto.where()}) without `--tool-call-parser`: "
                      "tool_choice=auto requests fail", f"add `--tool-call-parser {parser}`")


@rule("ENG012", "error", "a quantized V cache runs with flash attention on (llama.cpp)",
      "llama.cpp refuses a quantized V cache without flash attention (`V cache quantization requires flash_attn`)",
      "docs/domain.md")
def quantized_v_needs_fa(ctx: AppContext) -> Iterable[Finding]:
    s = settings(ctx)
    if s.kv_v.value not in QUANTIZED_V or not s.flash_attn_off:
        return
    fa = s.flash_attn_source
    message = (f"V cache `{s.kv_v.value}` ({s.kv_v.where() or 'from kv_cache_type'}) with "
               f"{fa.shown() if fa else '-fa off'} ({fa.where() if fa else ''}): "
               "llama.cpp refuses a quantized V cache without flash attention")
    yield at_flag(ctx, "ENG012", "error", fa, message, "use `-fa on` (or auto) or an f16 V cache") if fa else \
        ctx.finding("ENG012", "error", message, "use `-fa on`", "kv_cache_type")


@rule("ENG013", "warning", "the stack's exact image is recorded in a source",
      "An image no source records may not be the one the app was measured with; pin it before publishing",
      "catalog/stacks image_recorded")
def image_recorded(ctx: AppContext) -> Iterable[Finding]:
    stack = ctx.resolved.stack
    if not stack.image_recorded:
        yield ctx.finding("ENG013", "warning", f"stack {stack.id}: no source records the image {stack.image} "
                          "(image_recorded: false)", "record the image the app ran (chart or log) in the stack file",
                          "stack")


@rule("ENG014", "error", "self-speculative MTP uses weights that carry the MTP head",
      "Weights without the MTP layer give the engine nothing to draft with: boot error or 0 % acceptance (a quantized "
      "mtp.fc is skipped by vLLM's loader)", "docs/domain.md")
def mtp_weights(ctx: AppContext) -> Iterable[Finding]:
    spec, r = ctx.app.speculative, ctx.resolved
    weight = r.model.weight(ctx.app.quantization)
    if spec and spec.method == "mtp" and not spec.drafter and weight is not None and not weight.mtp_weights:
        yield ctx.finding("ENG014", "error", f"speculative mtp without a drafter uses the model's own MTP head, but "
                          f"{weight.repo} ({ctx.app.quantization}) has no MTP weights (mtp_weights: false)",
                          "use a weight file with the MTP head (e.g. an *-MTP GGUF) or set a drafter", "quantization")


__all__ = ["QUANTIZED_V", "TURBO_TYPES"]
