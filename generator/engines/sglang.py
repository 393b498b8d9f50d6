"""SGLang: `python3 -m sglang.launch_server --model-path REPO ...`, its KV-token budget, identity and boot log.

Pinned release: v0.5.14, the version of the official Olares SGLang apps (beclab/apps
sglangqwen359bawq4bitv3/templates/sglang.yaml@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049: image
docker.io/lmsysorg/sglang:v0.5.14-cu130). Every figure below is read from that release's source
(github.com/sgl-project/sglang@v0.5.14; the PyPI wheel sglang-0.5.14-cp311-cp311-manylinux_2_34_x86_64.whl,
sha256 4fe16056b45c8aca00f5f90ceb174dc3a62a3f5dccf159c791370795cd00fc99, carries the same python/sglang tree):

- The KV pool (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py:85-120 `_profile_available_bytes`):
  rest = free memory after the weights load - pre_model_load_memory x (1 - mem_fraction_static), in GiB
  (`get_available_gpu_memory`, bytes / 2^30); a hybrid Mamba/GDN model first gives the state cache
  rest x r / (1 + r), r = --mamba-full-memory-ratio (0.9, server_args.py:1727-1730), in whole per-request slots
  (`handle_max_mamba_cache`, :122-224); rest <= 0 stops the server ("Raise --mem-fraction-static above ...").
- Tokens (model_executor/pool_configurator.py:165-227): max_total_num_tokens = rest // cell, cell = bytes per
  token over every KV layer: MHA kv_heads x (head_dim + v_head_dim) x layers x dtype bytes; MLA
  (kv_lora_rank + qk_rope_head_dim) x layers x dtype bytes; hybrid SWA (:243-288) F x n_full + r x S x n_swa,
  r = --swa-full-tokens-ratio (0.8, server_args.py:745-753); EAGLE/MTP drafts scale the cell by
  1 + draft_layers / layers (:129-145). A hybrid GDN model counts only its full-attention layers (:116-124).
- mem_fraction_static, when not given (server_args.py:3276-3315 `_handle_gpu_memory_settings`):
  (gpu_mem - reserved) / gpu_mem rounded to 3 decimals, reserved = 512 + max(chunked_prefill, 2048) x 1.5
  + decode cuda-graph max_bs x 2 + tp x pp / 8 x 1024 MiB; below 35 GiB chunked_prefill = 2048 and max_bs = 24
  (tp < 4) (server_args.py:3150-3166).
- max_running_requests, when not given (model_runner_kv_cache_mixin.py:981-1000 `_resolve_max_num_reqs`):
  min(clamp(tokens / context x 512, 2048, 4096), tokens // 2), and for hybrid models at most
  max_mamba_cache_size // 3 (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, :55).

This module computes --context-length, --mem-fraction-static and --max-running-requests for the app's HAMi cap
(`plan`); the fit (generator/fit/sglang.py) places the same figures, and `catalog check` fails a context the
pool cannot hold, naming the largest that fits.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.catalog import Resolved
from generator.engines.argv import Flag, Given
from generator.engines.base import Arg, EngineSpec, Head, Own, Sized, build, cap_of, chat_template_path, given_args
from generator.core import Problem
from generator.engines.kvbytes import SGLANG_KV_BYTES
from generator.engines.interface import EngineFamily, Get, Knobs, Said, Server, Text, count, semver
from generator.engines.settings import SglangSettings, sglang_of, sglang_settings
from generator.engines.sglang_facts import SglangMemory, sglang_memory
from generator.schema import declaration
from generator.schema import Architecture, AttentionGroup, Mamba2Group

if TYPE_CHECKING:
    from generator.engines.bootlog import BootReader, Parsed, Provenance, Row
    from generator.engines.readback import Launcher, Mapped, Spelling, Token
    from generator.schema import Stack

GIB = 1 << 30
MIB = 1 << 20
DEFAULT_MAMBA_FULL_MEMORY_RATIO = 0.9  # server_args.py:1727-1730
DEFAULT_SWA_FULL_TOKENS_RATIO = 0.8  # server_args.py:745-753
MAMBA_REQUESTS_RATIO = 3  # model_runner_kv_cache_mixin.py:55 MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
RESERVED_BASE_MIB = 512  # server_args.py:3278 "Constant meta data"
SMALL_GPU_PREFILL = 2048  # server_args.py:3157-3166: below 35 GiB, chunked_prefill_size 2048, max_bs 24
SMALL_GPU_MAX_BS = 24
CONTEXT_MIB = 512  # CUDA context and workspaces before the weights load (assumption, as fit/vllm.py NON_TORCH_MIB)
SSM_BYTES, CONV_BYTES = 4, 2  # GDN temporal state fp32, conv state in the model dtype (checked on ktransformers#1870)
KV_BYTES = SGLANG_KV_BYTES  # bytes per cached value by --kv-cache-dtype (generator/engines/kvbytes.py)
HEADROOM = 0.025  # the share of the budget the sized fraction leaves unused (rounding of the free-memory reading)


def reserved_mib(tp: int = 1, pp: int = 1, prefill: int = SMALL_GPU_PREFILL, max_bs: int = SMALL_GPU_MAX_BS) -> float:
    """SGLang's estimate of activations and CUDA graphs outside the static pool (server_args.py:3276-3287)."""
    return RESERVED_BASE_MIB + max(prefill, 2048) * 1.5 + max_bs * 2 + tp * pp / 8 * 1024


def default_mem_fraction_static(gpu_mem_mib: float) -> float:
    """What SGLang picks when --mem-fraction-static is absent (a single-GPU card below 35 GiB)."""
    return round((gpu_mem_mib - reserved_mib()) / gpu_mem_mib, 3)


def _group_cell(group: AttentionGroup, dtype_bytes: float) -> float:
    if group.mla:
        assert group.kv_lora_rank is not None and group.rope_head_dim is not None
        return (group.kv_lora_rank + group.rope_head_dim) * dtype_bytes
    return group.kv_heads * 2 * group.head_dim * dtype_bytes  # head_dim + v_head_dim, equal in the catalog's models


def cell_bytes(arch: Architecture, kv_dtype: str = "auto", *, swa_ratio: float = DEFAULT_SWA_FULL_TOKENS_RATIO,
               draft_layers: int = 0, tp: int = 1) -> float:
    """Bytes one token of max_total_num_tokens costs (pool_configurator.py: Default / HybridSWA configurators)."""
    size = KV_BYTES.get(kv_dtype, 2)
    full = arch.full_attention
    full_cell = _group_cell(full, size) / (1 if full.mla else tp) * full.layers
    cell = full_cell
    if arch.sliding_attention is not None:
        swa = arch.sliding_attention
        cell = full_cell + swa_ratio * _group_cell(swa, size) / tp * swa.layers
    if draft_layers:
        cell *= 1 + draft_layers / full.layers
    return cell


def mamba_per_request_bytes(arch: Architecture, tp: int = 1) -> float:
    """One request's recurrent state over every GDN / Mamba-2 layer (mamba2_cache_params.mamba_cache_per_req)."""
    rec = arch.recurrent
    if rec is None:
        return 0.0
    if isinstance(rec, Mamba2Group):
        inner = rec.heads * rec.head_dim
        ssm = inner * rec.state_size * SSM_BYTES
        conv = (inner + 2 * rec.groups * rec.state_size) * (rec.conv_kernel - 1) * CONV_BYTES
    else:
        ssm = rec.v_heads * rec.head_dim * rec.head_dim * SSM_BYTES
        conv = (2 * rec.k_heads + rec.v_heads) * rec.head_dim * (rec.conv_kernel - 1) * CONV_BYTES
    return rec.layers * (ssm + conv) / tp


@dataclass(frozen=True)
class Budget:
    """SGLang's static pool for one start, as `_profile_available_bytes` computes it (GiB, like SGLang)."""

    pre_load_gib: float  # free memory before the weights load (pre_model_load_memory)
    after_weights_gib: float  # free memory after the weights load
    mem_fraction_static: float
    cell: float  # bytes per token
    mamba_per_req: float = 0.0  # bytes per request slot of the recurrent state
    mamba_ratio: float = DEFAULT_MAMBA_FULL_MEMORY_RATIO
    page_size: int = 1

    @property
    def rest_gib(self) -> float:
        return self.after_weights_gib - self.pre_load_gib * (1 - self.mem_fraction_static)

    @property
    def mamba_slots(self) -> int:
        if not self.mamba_per_req or self.rest_gib <= 0:
            return 0
        return int(self.rest_gib * self.mamba_ratio / (1 + self.mamba_ratio) * GIB // self.mamba_per_req)

    @property
    def mamba_gib(self) -> float:
        return self.mamba_slots * self.mamba_per_req / GIB

    @property
    def kv_gib(self) -> float:
        return self.rest_gib - self.mamba_gib

    @property
    def tokens(self) -> int:
        """max_total_num_tokens (0 when the weights leave nothing: SGLang refuses to start)."""
        if self.kv_gib <= 0:
            return 0
        return int(self.kv_gib * GIB // self.cell) // self.page_size * self.page_size

    @property
    def minimum_fraction(self) -> float:
        """The fraction below which the weights leave no KV (SGLang's "minimum viable = 1 - available/pre")."""
        return 1 - self.after_weights_gib / self.pre_load_gib

    def max_running_requests(self, context: int) -> int:
        """SGLang's own choice when --max-running-requests is absent (_resolve_max_num_reqs)."""
        estimated = max(min(int(self.tokens / context * 512), 4096), 2048)
        out = min(estimated, self.tokens // 2)
        if self.mamba_per_req:
            out = min(out, self.mamba_slots // MAMBA_REQUESTS_RATIO)
        return out


@dataclass(frozen=True)
class Plan:
    """What the chart sets for one app and cap: the fraction, the pool it gives and the requests it serves."""

    cap_mib: int
    total_mib: float  # what SGLang reads as the GPU's memory in the pod
    weights_mib: float
    reserve_mib: float  # activations + CUDA graphs outside the static pool (SGLang's own estimate)
    mem_fraction_static: float
    budget: Budget
    context: int
    max_running_requests: int

    @property
    def largest_context(self) -> int:
        return self.budget.tokens


def plan(r: Resolved, cap_mib: int, *, fraction: float | None = None, context: int | None = None,
         kv_dtype: str = "auto", draft_layers: int = 0, requests: int | None = None,
         mamba_ratio: float = DEFAULT_MAMBA_FULL_MEMORY_RATIO,
         swa_ratio: float = DEFAULT_SWA_FULL_TOKENS_RATIO) -> Plan:
    """The app's SGLang settings under `cap_mib` (`plan_from` with the app's facts)."""
    return plan_from(sglang_memory(r), cap_mib, fraction=fraction, context=context, kv_dtype=kv_dtype,
                     draft_layers=draft_layers, requests=requests, mamba_ratio=mamba_ratio, swa_ratio=swa_ratio)


def plan_from(m: SglangMemory, cap_mib: int, *, fraction: float | None = None, context: int | None = None,
              kv_dtype: str = "auto", draft_layers: int = 0, requests: int | None = None,
              mamba_ratio: float = DEFAULT_MAMBA_FULL_MEMORY_RATIO,
              swa_ratio: float = DEFAULT_SWA_FULL_TOKENS_RATIO) -> Plan:
    """SGLang's pool under `cap_mib` for an app of facts `m` (its settings' `memory`): the largest fraction whose static
    pool, SGLang's reserve and the CUDA context stay inside the cap (unless `fraction` is given), the pool it gives,
    and the requests it holds."""
    total = m.device_mib if m.device_mib is not None else float(cap_mib)
    pre = total - CONTEXT_MIB
    weights = m.weights_mib
    reserve = reserved_mib()
    if fraction is None:
        room = cap_mib - CONTEXT_MIB - reserve
        fraction = max(0.01, min(0.99, math.floor((room / pre - HEADROOM) * 1000) / 1000))
    arch = m.architecture
    budget = Budget(pre_load_gib=pre / 1024, after_weights_gib=(pre - weights) / 1024, mem_fraction_static=fraction,
                    cell=cell_bytes(arch, kv_dtype, swa_ratio=swa_ratio, draft_layers=draft_layers),
                    mamba_per_req=mamba_per_request_bytes(arch), mamba_ratio=mamba_ratio)
    ctx = context or m.context
    if requests is None:
        requests = max(1, min(budget.tokens // max(ctx, 1), budget.max_running_requests(ctx) or 1))
    return Plan(cap_mib=cap_mib, total_mib=total, weights_mib=weights, reserve_mib=reserve,
                mem_fraction_static=fraction, budget=budget, context=ctx, max_running_requests=requests)


# ---- argv ---------------------------------------------------------------------------------------------

SPEC_ALGORITHMS = {"mtp": "NEXTN", "draft": "STANDALONE", "dflash": "DFLASH", "ngram": "NGRAM"}  # catalog -> SGLang


def _extra_float(extra: tuple[str, ...], flag: str, default: float) -> float:
    """A ratio the app gives in `extra_args` (the last one wins, as SGLang's argparse reads it)."""
    found = default
    for i, token in enumerate(extra):
        value = token.split("=", 1)[1] if token.startswith(flag + "=") else (
            extra[i + 1] if token == flag and i + 1 < len(extra) else None)
        with contextlib.suppress(ValueError):  # FLAG002 names a value the table types as a float
            found = float(value) if value is not None else found
    return found


def _pool(r: Sized) -> tuple[Plan, str]:
    """The plan of the app's static pool under its cap, and where its fraction comes from."""
    app = r.app
    spec = app.speculative
    draft_layers = r.model.architecture.mtp_layers if spec and spec.method == "mtp" else 0
    p = plan(r, cap_of(r), fraction=app.gpu_memory_utilization, kv_dtype=app.kv_cache_type or "auto",
             draft_layers=draft_layers,
             mamba_ratio=_extra_float(app.extra_args, "--mamba-full-memory-ratio", DEFAULT_MAMBA_FULL_MEMORY_RATIO),
             swa_ratio=_extra_float(app.extra_args, "--swa-full-tokens-ratio", DEFAULT_SWA_FULL_TOKENS_RATIO))
    sized = "gpu_memory_utilization" in r.sized or app.gpu_memory_utilization is None
    return p, "sized for the HAMi cap" if sized else "app.gpu_memory_utilization"


REQUESTS_ORIGIN = "the KV pool / app.context_length"


def own(head: Head) -> Own:
    """SGLang downloads the weights itself (HF_HOME): no init-container files."""
    r, weight = head.r, head.weight
    app = r.app
    spec = app.speculative
    p, fraction_origin = _pool(r)
    args = [Arg(("--model-path", weight.repo), "app.model + app.quantization")]
    if weight.revision:
        args.append(Arg(("--revision", weight.revision), "model weights revision"))
    args += [
        Arg(("--served-model-name", app.model_alias), "app.served_name"),
        head.listen(),
        Arg(("--context-length", str(app.context_length)), "app.context_length"),
        Arg(("--mem-fraction-static", repr(p.mem_fraction_static)), fraction_origin),
        Arg(("--max-running-requests", str(p.max_running_requests)), REQUESTS_ORIGIN),
    ]
    if app.kv_cache_type:
        args.append(Arg(("--kv-cache-dtype", app.kv_cache_type), "app.kv_cache_type"))
    if app.chat_template:
        args.append(Arg(("--chat-template", chat_template_path()), "app.chat_template"))
    if spec is not None:
        args.append(Arg(("--speculative-algorithm", SPEC_ALGORITHMS[spec.method]), "app.speculative"))
        if spec.tokens is not None:
            args.append(Arg(("--speculative-num-steps", str(spec.tokens)), "app.speculative"))
    return Own(args)


def engine(r: Sized) -> EngineSpec:
    return build(r, own)


def decide(r: Sized) -> SglangSettings:
    """The app's SGLang settings, decided from its fields and its cap without an argv: the flags `own` writes (as typed
    Flags: the context, the pool's fraction and requests for the cap, the KV type, the speculative algorithm),
    overridden by the stack's args and the app's extra_args."""
    app = r.app
    p, fraction_origin = _pool(r)
    flags = [Flag("--context-length", str(app.context_length), "app.context_length", 0),
             Flag("--mem-fraction-static", repr(p.mem_fraction_static), fraction_origin, 0),
             Flag("--max-running-requests", str(p.max_running_requests), REQUESTS_ORIGIN, 0)]
    if app.kv_cache_type:
        flags.append(Flag("--kv-cache-dtype", app.kv_cache_type, "app.kv_cache_type", 0))
    if app.speculative is not None:
        flags.append(Flag("--speculative-algorithm", SPEC_ALGORITHMS[app.speculative.method], "app.speculative", 0))
    return sglang_of(r, Given({f.flag: f for f in flags}, given_args(r)))


def supports(argv: list[str]) -> frozenset[str]:
    """What the Router card may declare from the argv: nothing yet (the SGLang apps' cards name no tools or
    thinking; SGLang's --tool-call-parser / --reasoning-parser are not read as such until a test boots one)."""
    return frozenset()


# ---- identity (smoke) and boot log (calibrate) --------------------------------------------------------

# python/sglang/srt/entrypoints/http_server.py of v0.5.14: GET /model_info (model_path, model_type, ...; :648-665)
# and GET /server_info (every ServerArgs field, `version`; :688-708). /get_model_info and /get_server_info
# (:638, :678) are the deprecated aliases of the same handlers, which log a warning on each call.
IDENTITY_PATHS = ("/model_info", "/server_info")


def _said(said: Said, get: Get, text: Text) -> tuple[str | None, str | None, int | None]:
    """SGLang's identity endpoints (IDENTITY_PATHS): the model path from /model_info, the version and the context
    length (the ServerArgs field) from /server_info; the card's root and max_model_len where they do not answer."""
    model_path, server_path = IDENTITY_PATHS
    info = get(model_path)
    server = get(server_path)
    version = text(server.get("version")) if server else None
    path = text(info.get("model_path")) if info else None
    context = count(server.get("context_length")) if server else None
    card = said.card
    if card:
        path = path or text(card.get("root"))
        context = context or count(card.get("max_model_len"))
    return version, path, context


SERVER = Server("SGLang", "sglang", _said, semver)  # SGLang's card: owned_by "sglang" (openai/protocol.py:74)

# Boot-log lines `catalog calibrate` reads (generator/fit/calibrate.py asks this module, line by line). The format
# strings, in sgl-project/sglang's python/sglang/srt tree (v0.5.14 and the releases around it print the same text;
# quoted in public logs: vllm-project/vllm#21348, kvcache-ai/ktransformers#1870, sgl-project/sglang#29575):
#   mem_cache/memory_pool.py `_finalize_allocation_log`:
#     f"KV Cache is allocated. #tokens: {num_tokens}, K size: {k_size_GB:.2f} GB, V size: {v_size_GB:.2f} GB"
#     (newer pools insert "dtype: torch.float8_e4m3fn, " before "#tokens")
#   managers/scheduler.py: f"max_total_num_tokens={...}, chunked_prefill_size=..., max_prefill_tokens=...,
#     max_running_requests=..., context_len={...}, available_gpu_mem={...:.2f} GB" (older releases end at context_len)
#   model_executor/model_runner.py `load_model`: f"Load weight end. elapsed=... s, type=..., [quant, ]avail
#     mem={after_avail_memory:.2f} GB, mem usage={self.weight_load_mem_usage:.2f} GB."
#   server_args.py: the first line, "server_args=ServerArgs(model_path='...', ...)"
# "GB" is bytes / 2^30 (`get_available_gpu_memory`, the K/V sizes divide by GB = 1 << 30): GiB. With --tp N each rank
# prints its own share; the first line (TP0) is read.
_KV_LINE = re.compile(r"KV Cache is allocated\. .*?#tokens: (\d+), K size: ([\d.]+) GB, V size: ([\d.]+) GB")
_TOTAL_LINE = re.compile(r"max_total_num_tokens=(\d+)(?:.*?context_len=(\d+))?")
_WEIGHT_LINE = re.compile(r"Load weight end\..*?avail mem=([\d.]+) GB, mem usage=([\d.]+) GB")
_MODEL_LINE = re.compile(r"server_args=ServerArgs\(model_path='([^']+)'")


@dataclass(frozen=True)
class BootFigure:
    """One figure of an SGLang boot log line."""

    kind: str  # "kv_allocated" (GiB of K + V), "total_tokens" (tokens), "weights_loaded" (GiB), "model" (0)
    value: float
    tokens: int | None = None  # kv_allocated: the pool's #tokens
    context: int | None = None  # total_tokens: context_len
    detail: str = ""  # kv_allocated: "K x GiB + V y GiB"; weights_loaded: free GiB after; model: its path


def read_boot_line(line: str, number: Callable[[str], float] = float) -> BootFigure | None:
    """The figure one line of an SGLang boot log holds, or None; `number` reads each number (the caller's bounds)."""
    if match := _KV_LINE.search(line):
        k, v = number(match.group(2)), number(match.group(3))
        return BootFigure("kv_allocated", k + v, tokens=int(number(match.group(1))), detail=f"K {k} GiB + V {v} GiB")
    if match := _TOTAL_LINE.search(line):
        context = int(number(match.group(2))) if match.group(2) else None
        return BootFigure("total_tokens", number(match.group(1)), context=context)
    if match := _WEIGHT_LINE.search(line):
        return BootFigure("weights_loaded", number(match.group(2)), detail=f"{number(match.group(1))} GiB free after")
    if match := _MODEL_LINE.search(line):
        return BootFigure("model", 0.0, detail=match.group(1))
    return None


@dataclass(frozen=True)
class BootLog:
    max_total_num_tokens: int | None = None
    context_len: int | None = None
    kv_tokens: int | None = None
    k_gib: float | None = None
    v_gib: float | None = None
    avail_after_weights_gib: float | None = None
    weights_gib: float | None = None


def read_boot_log(text: str) -> BootLog:
    """The figures of one SGLang start; the first match of each line (TP rank 0 prints first)."""
    kv, total, weight = _KV_LINE.search(text), _TOTAL_LINE.search(text), _WEIGHT_LINE.search(text)
    return BootLog(
        max_total_num_tokens=int(total.group(1)) if total else None,
        context_len=int(total.group(2)) if total and total.group(2) else None,
        kv_tokens=int(kv.group(1)) if kv else None,
        k_gib=float(kv.group(2)) if kv else None,
        v_gib=float(kv.group(3)) if kv else None,
        avail_after_weights_gib=float(weight.group(1)) if weight else None,
        weights_gib=float(weight.group(2)) if weight else None,
    )


BOOT_LOG_NEEDS = ("'KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB' or 'Load weight end. ..., "
                  "mem usage=X GB'")


def read_boot(out: Parsed, line: str, number: int) -> None:
    """One line of an SGLang boot log: its figure (`read_boot_line`), or the model its server_args line names."""
    from generator.engines.bootlog import Reading, add, figure

    found = read_boot_line(line, figure)
    if found is None:
        return
    assert out.models is not None
    out.engine = "sglang"
    if found.kind == "model":
        out.model = out.model or found.detail
        out.models.append((number, found.detail))
        return
    if found.kind == "total_tokens":
        out.n_ctx = out.n_ctx or found.context
    add(out, Reading(found.kind, found.value, number, line, context=found.tokens or found.context,
                     detail=found.detail))


def sglang_rows(parsed: Parsed, p: Provenance) -> list[Row]:
    """SGLang readings -> weights_loaded (the model's, per weight file) and kv_needed (the pool: #tokens in K + V GiB)
    rows. With --tp N the log's figures are one rank's (TP0, the first line read)."""
    from generator.engines.bootlog import Row, cal

    rows: list[Row] = []
    if (w := parsed.first("weights_loaded")) is not None and p.quant:
        rows.append(Row("model", cal("weights_loaded", None, f"SGLang `{w.text[-120:]}`", p, value_gib=w.value,
                                      quant=p.quant)))
    if (kv := parsed.first("kv_allocated")) is not None and kv.context:
        total = parsed.first("total_tokens")
        said = f", max_total_num_tokens={int(total.value):,}" if total is not None else ""
        rows.append(Row("app", cal("kv_needed", None, f"SGLang: KV Cache is allocated, {kv.context:,} tokens in "
                                    f"{kv.value:.2f} GiB ({kv.detail}{said})", p, value_gib=round(kv.value, 3),
                                    context=kv.context)))
    return rows


def boot() -> BootReader:
    from generator.engines.bootlog import BootReader

    return BootReader(read_boot, sglang_rows, BOOT_LOG_NEEDS)


# ---- import: the launcher shapes of an SGLang chart -----------------------------------------------------

LAUNCHERS = (("python3", "-m", "sglang.launch_server"), ("python", "-m", "sglang.launch_server"), ("sglang", "serve"))


_IMAGE = re.compile(r"(^|/)lmsysorg/sglang(:|@|$)")  # docker.io/lmsysorg/sglang:v0.5.14-cu130 (beclab/apps)
_SCRIPT = re.compile(r"\bsglang\.launch_server\b|\bsglang\s+serve\b")


def recognise(image: str, program: str, script: str) -> str | None:
    """Why a container is an SGLang server (its image, its launcher), or None: what `catalog import` reports."""
    words = program.split() + script.split()
    hits = []
    if _IMAGE.search(image):
        hits.append(f"image {image}")
    if FAMILY.launcher and FAMILY.launcher.shape(words) or _SCRIPT.search(script):
        hits.append("its launcher (python -m sglang.launch_server / sglang serve)")
    return ", ".join(hits) or None



# SGLang (generator/engines/sglang.py builds this argv): --mem-fraction-static is the app's stated fraction;
# --max-running-requests is computed from the KV pool on every render, so it is read and not kept.
def read(tokens: list[Token], spell: Spelling, stack: Stack | None) -> Mapped:
    from generator.engines.readback import Reader, server_fields, stack_args

    reader = Reader(tokens, spell)
    out = server_fields(reader, stack, reader.value("--model-path", "--model"), "--context-length",
                         "--mem-fraction-static", whole=False)
    requests = reader.value("--max-running-requests")
    if requests is not None:
        out.notes.append(Problem(str(requests[1]), None, None, f"--max-running-requests {requests[0]}: the catalog "
                                 "computes it from the KV pool on each render (generator/engines/sglang.py)"))
    stack_args(reader, out, stack)
    out.extra = reader.rest()
    return out


def launcher() -> Launcher:
    from generator.engines.readback import Launcher

    return Launcher(read, "--context-length", shapes=LAUNCHERS, recognise=recognise)


FAMILY = EngineFamily(declaration("sglang"), engine, supports, sglang_settings, decide, fit="sglang", server=SERVER,
                      knobs=Knobs(("--context-length",), False, ("--max-running-requests",), "", None, "%d",
                                  "--api-key"),
                      olares_base="sglangllmbasev3", launcher_of=launcher, boot_of=boot)

__all__ = ["BOOT_LOG_NEEDS", "FAMILY", "Budget", "BootFigure", "BootLog", "IDENTITY_PATHS", "LAUNCHERS", "Plan",
           "cell_bytes", "default_mem_fraction_static", "engine", "mamba_per_request_bytes", "plan", "plan_from",
           "read_boot_line", "read_boot_log", "recognise", "reserved_mib", "supports"]
