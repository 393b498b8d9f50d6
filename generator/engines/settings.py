"""The effective engine settings of one app, read from its resolved argv and env (last flag wins).

Rules and the memory fit read settings here, never from the app fields alone, so an override through
`extra_args` or `env` is judged exactly as the engine will see it. Defaults that the engine applies when a
flag is absent are named constants with their source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from generator.engines.argv import Argv, Flag, env_var, normalize
from generator.catalog import Resolved
from generator.engines import EngineSpec
from generator.engines.genesis_env import PatchState, patch_states

# vLLM defaults for the pinned 0.19-0.21 images (stacks.md §1.2: "current main 0.92, older releases 0.9").
VLLM_DEFAULT_UTILIZATION = 0.9
VLLM_DEFAULT_BATCHED_TOKENS = 8192  # V1 with chunked prefill (assumption; Genesis prod uses 8192)
VLLM_DEFAULT_MAX_SEQS = 256
# llama.cpp defaults (stacks.md §3.1).
LLAMA_DEFAULT_UBATCH = 512
LLAMA_DEFAULT_PARALLEL = 1  # `-np -1` = auto; the catalog's stacks pin 1
LUCEBOX_DEFAULT_KV = "q8_0"  # DFLASH27B_KV_K/V default (stacks.md §5.2)
LUCEBOX_AUTO_TQ3_ABOVE = 6144  # DFLASH27B_KV_TQ3=1 is set when --max-ctx > 6144 and no KV type is given

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


@dataclass(frozen=True)
class Value:
    """A setting's effective value and the flag or field it came from."""

    value: object
    source: Flag | None = None  # None: the app field / engine default named in `note`
    note: str = ""

    def where(self) -> str:
        return self.source.where() if self.source else self.note


@dataclass
class Settings:
    engine: str  # vllm | llamacpp | lucebox
    context: Value
    kv_k: Value
    kv_v: Value
    spec_method: str | None = None
    spec_tokens: int | None = None
    spec_source: str = ""
    vision: bool = False
    extra: dict[str, Value] = field(default_factory=dict)  # engine-specific: util, batched, ubatch, ...
    genesis: dict[str, PatchState] = field(default_factory=dict)

    def get(self, key: str, default: object = None) -> object:
        found = self.extra.get(key)
        return found.value if found is not None else default

    def genesis_on(self, patch_id: str) -> bool:
        state = self.genesis.get(patch_id)
        return bool(state and state.on)


def _json(text: str | None) -> dict:
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _vllm_spec(argv: Argv, r: Resolved) -> tuple[str | None, int | None, str]:
    flag = argv.last("--speculative-config")
    if flag is None:
        return None, None, ""
    config = _json(flag.value)
    method = config.get("method") or ("draft" if config.get("model") else None)
    if isinstance(method, str) and method.endswith("_mtp"):
        method = "mtp"  # legacy *_mtp names are rewritten to mtp (stacks.md §1.3)
    tokens = config.get("num_speculative_tokens")
    return (str(method) if method else "mtp"), (tokens if isinstance(tokens, int) else None), flag.where()


def _vllm_vision(argv: Argv, r: Resolved) -> bool:
    if not r.model.architecture.vision or argv.present("--language-model-only"):
        return False
    limits = _json((argv.last("--limit-mm-per-prompt") or Flag("", None, "", 0)).value)
    image = limits.get("image", 1)
    count = image.get("count", 1) if isinstance(image, dict) else image
    return count != 0


def _cudagraph_mode(argv: Argv) -> str | None:
    dotted = argv.last("--compilation-config.cudagraph_mode", "-cc.cudagraph_mode")
    if dotted is not None and dotted.value:
        return dotted.value.upper()
    config = _json((argv.last("--compilation-config", "-cc") or Flag("", None, "", 0)).value)
    mode = config.get("cudagraph_mode")
    return str(mode).upper() if mode is not None else None


def vllm_settings(r: Resolved, engine: EngineSpec) -> Settings:
    argv = Argv(engine)
    ctx = argv.last("--max-model-len")
    kv = argv.last("--kv-cache-dtype")
    kv_value = Value(kv.value if kv else "auto", kv)
    method, tokens, spec_where = _vllm_spec(argv, r)
    s = Settings("vllm", Value(human_int(ctx.value) if ctx else r.app.context_length, ctx), kv_value, kv_value,
                 method, tokens, spec_where, _vllm_vision(argv, r))
    util, batched, seqs = argv.last("--gpu-memory-utilization"), argv.last("--max-num-batched-tokens"), argv.last("--max-num-seqs")
    s.extra["util"] = Value(as_float(util.value) if util else VLLM_DEFAULT_UTILIZATION, util, "vLLM default")
    s.extra["batched"] = Value(human_int(batched.value) if batched else VLLM_DEFAULT_BATCHED_TOKENS, batched, "vLLM default")
    s.extra["seqs"] = Value(human_int(seqs.value) if seqs else VLLM_DEFAULT_MAX_SEQS, seqs, "vLLM default")
    kvbytes = argv.last("--kv-cache-memory-bytes")
    if kvbytes is not None:
        s.extra["kv_bytes"] = Value(human_int(kvbytes.value), kvbytes)
    _vllm_switches(s, argv, r, engine)
    return s


def _vllm_switches(s: Settings, argv: Argv, r: Resolved, engine: EngineSpec) -> None:
    last = argv.present("--enable-prefix-caching", "--no-enable-prefix-caching")
    hybrid = r.model.architecture.recurrent is not None
    # pins before v0.28 leave prefix caching off for hybrid models unless asked (stacks.md §1.2)
    prefix = normalize(last.flag) == "--enable-prefix-caching" if last else not hybrid
    s.extra["prefix_caching"] = Value(prefix, last, "vLLM default")
    mode = argv.last("--mamba-cache-mode")
    s.extra["mamba_mode"] = Value(mode.value if mode else ("align" if prefix else "none"), mode,
                                  "align when prefix caching is on (stacks.md §1.2)")
    eager = argv.present("--enforce-eager")
    s.extra["eager"] = Value(eager is not None or _cudagraph_mode(argv) == "NONE", eager)
    profiled = env_var(engine, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
    s.extra["graphs_profiled"] = Value(bool(profiled and profiled.value.strip() == "1"), None,
                                       "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
    if r.genesis is not None and "genesis" in r.stack.features:
        s.genesis = patch_states(r.genesis, engine.env)


def _kv_pair(argv: Argv, k_names: tuple[str, ...], v_names: tuple[str, ...], default: str) -> tuple[Value, Value]:
    k, v = argv.last(*k_names), argv.last(*v_names)
    return Value(k.value if k else default, k, f"{default} (engine default)"), Value(v.value if v else default, v,
                                                                                   f"{default} (engine default)")


def llama_settings(r: Resolved, engine: EngineSpec) -> Settings:
    argv = Argv(engine)
    ctx = argv.last("-c", "--ctx-size")
    k, v = _kv_pair(argv, ("-ctk", "--cache-type-k"), ("-ctv", "--cache-type-v"), "f16")
    spec = r.app.speculative
    spec_type = argv.last("--spec-type")
    method = spec.method if spec else (spec_type.value if spec_type else None)
    if method and method.startswith("draft-"):
        method = method.removeprefix("draft-")
    vision = r.app.vision or argv.last("--mmproj", "-mm") is not None
    s = Settings("llamacpp", Value(human_int(ctx.value) if ctx else 0, ctx), k, v, method,
                 spec.tokens if spec else None, "speculative" if spec else (spec_type.where() if spec_type else ""), vision)
    ub, np_, fa = argv.last("-ub", "--ubatch-size"), argv.last("-np", "--parallel"), argv.last("-fa", "--flash-attn")
    s.extra["ubatch"] = Value(human_int(ub.value) if ub else LLAMA_DEFAULT_UBATCH, ub, "llama.cpp default")
    parallel = human_int(np_.value) if np_ else LLAMA_DEFAULT_PARALLEL
    s.extra["parallel"] = Value(parallel if parallel and parallel > 0 else 1, np_, "llama.cpp default")
    s.extra["flash_attn"] = Value(fa.value if fa else None, fa, "not set (engine default)")
    s.extra["swa_full"] = Value(argv.present("--swa-full") is not None, argv.present("--swa-full"))
    kd, vd = _kv_pair(argv, ("-ctkd", "--cache-type-k-draft"), ("-ctvd", "--cache-type-v-draft"), "f16")
    s.extra["kv_k_draft"], s.extra["kv_v_draft"] = kd, vd
    return s


def lucebox_settings(r: Resolved, engine: EngineSpec) -> Settings:
    argv = Argv(engine)
    ctx = argv.last("--max-ctx")
    context = human_int(ctx.value) if ctx else r.app.context_length
    kvk, kvv = env_var(engine, "DFLASH27B_KV_K"), env_var(engine, "DFLASH27B_KV_V")
    default = "tq3_0" if (kvk is None and context > LUCEBOX_AUTO_TQ3_ABOVE) else LUCEBOX_DEFAULT_KV
    k = Value(kvk.value if kvk else default, None, f"env DFLASH27B_KV_K ({kvk.origin})" if kvk else "Lucebox default")
    v = Value(kvv.value if kvv else default, None, f"env DFLASH27B_KV_V ({kvv.origin})" if kvv else "Lucebox default")
    spec = r.app.speculative
    s = Settings("lucebox", Value(context, ctx), k, v, spec.method if spec else None, spec.tokens if spec else None,
                 "speculative" if spec else "", False)
    s.extra["parallel"] = Value(1, None, "dflash_server serves one sequence")
    s.extra["ubatch"] = Value(LLAMA_DEFAULT_UBATCH, None, "assumed llama.cpp default")
    return s


def settings_for(r: Resolved, engine: EngineSpec) -> Settings:
    if r.stack.engine == "vllm":
        return vllm_settings(r, engine)
    if r.stack.fork == "lucebox":
        return lucebox_settings(r, engine)
    return llama_settings(r, engine)


__all__ = ["Settings", "Value", "as_float", "human_int", "settings_for"]
