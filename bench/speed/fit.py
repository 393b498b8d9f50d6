"""Fit the speed model (generator/fit/speed.py) on the fit half and score it on the test half.

    .venv/bin/python bench/speed/fit.py [--write]

Measurements, each with its source:
- the lent H100's llama-bench rows (bench/speed/h100/bench.jsonl, plan.json: real-shape files of catalog models, the
  device file bench/speed/devices/h100-sxm.yaml: its public specification only);
- every benchmark of every app of the embedded catalog (the maintainer's figures on the Olares One, served by the
  app's own engine build), with its date and method;
- the public Llama 2 7B Q4_0 figures on an RTX 3090, 3090 Ti and 4090 (tests/fixtures/catalog_roofline, llama.cpp
  PRs 6766 and 4812): devices no fit row was measured on.
The split is bench/speed/split.yaml (by model, written before this script existed). `--write` puts the fitted values
into generator/fit/speed_fitted.json and the tables into bench/speed/table.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator.catalog import Catalog, Resolved, load_catalog, load_device_file  # noqa: E402
from generator.fit import speed  # noqa: E402
from generator.fit.roofline import roofline  # noqa: E402
from generator.fit.speed import Coefficients, predict  # noqa: E402
from generator.fit.sizing import sized  # noqa: E402
from generator.schema import Device  # noqa: E402

HERE = Path(__file__).resolve().parent
# a llama.cpp app whose argv stands in for a model whose own app runs another engine, by speed family
TEMPLATE = {"qwen3.5-27b": "llamacppqwen36mtpone"}
# the lent H100's llama-bench sweeps (one card kind, one build, the same files: every row is a row of the H100)
H100_RUNS = ("h100", "h100-run3", "h100-run4", "h100-run5", "h100-run6")
# every lent GPU's llama-bench sweeps: run folder -> the device file of the card it ran on (its public specification)
BENCH_RUNS: dict[str, str] = {run: "h100-sxm" for run in H100_RUNS}
# the lent H100's llama-server rows, speculation off, one per file (the served path the catalog's figures take)
SERVED_RUN = "h100-run4"
# the lent H100's MTP step on two files of different step times, in one call (bench/speed/h100-run6/README.md)
SPEC_RUN = "h100-run6"
# every lent GPU's llama-server rows: run folder -> (its plan, the device file of its card)
SERVED_RUNS: dict[str, tuple[str, str]] = {SERVED_RUN: ("served-plan.json", "h100-sxm")}
MAX_OVERHEAD_US = 200  # the grid of the per-layer launch + sync cost a step, µs
OVERHEAD_STEP_US = 2


@dataclass(frozen=True)
class Row:
    resolved: Resolved
    model: str
    device_kind: str  # the device's architecture + name: what "per device kind" groups by
    context: int
    tokens_per_s: float
    acceptance: float | None
    served: bool
    speculative: bool
    method: str
    source: str
    half: str
    kv: str = ""  # the KV cache type a lent-GPU row ran at (its plan's); "" for the catalog's and public rows


def _split() -> dict[str, str]:
    data = yaml.safe_load((HERE / "split.yaml").read_text())
    return {m: half for half in ("fit", "test") for m in data[half]}


def _kind(d: Device) -> str:
    return f"{d.name} ({d.architecture or d.arch})"


def rows() -> list[Row]:
    split = _split()
    cat = load_catalog(str(ROOT / "catalog"))
    out: list[Row] = []
    for run, device in BENCH_RUNS.items():
        if (HERE / run / "bench.jsonl").exists():
            out += _h100_rows(cat, _device(device), run, split)
    for run, (plan, device) in SERVED_RUNS.items():
        out += _served_rows(cat, _device(device), run, plan, split)
    return out + _catalog_rows(cat, split)


def _device(name: str) -> Device:
    return load_device_file(HERE / "devices" / f"{name}.yaml")


def _card(d: Device) -> str:
    return d.name.split()[0]  # "H100", "H200": the lent card a row ran on


def _served_rows(cat: Catalog, card: Device, run: str, plan_file: str, split: dict[str, str]) -> list[Row]:
    """llama-server on a lent GPU, speculation off: 256 tokens after a 54-token prompt, taken at the middle of that."""
    out: list[Row] = []
    plan = {(p["gguf"], p["kv"]): p for p in json.loads((HERE / run / plan_file).read_text())}
    for line in (HERE / run / "served.jsonl").read_text().splitlines():
        s = json.loads(line)
        t = s.get("timings")
        if not t:
            continue
        p = plan[(s["gguf"], s["kv"])]
        out.append(Row(_realshape(cat, card, p), p["model"], _kind(card), t["prompt_n"] + t["predicted_n"] // 2,
                       float(t["predicted_per_second"]), None, True, False,
                       f"llama-server, speculation off, {t['predicted_n']} greedy tokens, -fa on -ngl 99, "
                       f"KV {p['kv']}, real-shape {p['gguf']}",
                       f"bench/speed/{run}/served.jsonl (lent {_card(card)}, llama.cpp 11434, 2026-12-06)",
                       split.get(p["model"], "unsplit"), p["kv"]))
    return out


def _realshape(cat: Catalog, h100: Device, p: dict[str, Any]) -> Resolved:
    """The plan row's app on the H100 with the real-shape file the GPU read."""
    base = cat.apps[p["app"]]
    if speed.engine_kind(base) != "llamacpp":  # the model's own app runs another engine: a llama.cpp app's argv
        base = cat.apps[TEMPLATE[p["model"]]]
    model = cat.models[p["model"]]
    # the file the GPU read: the real-shape file's own tensors (weights_part reads the weight file's size)
    template = model.weights[0]
    # named by the plan's quantization, so that the roofline streams the tensors of that type mix (realshape.py)
    weight = template.model_copy(update={"quant": p["quant"], "format": "gguf", "file": p["gguf"], "header": None,
                                         "size_gib": p["tensor_bytes"] / 2**30})
    model = model.model_copy(update={"weights": (weight,), "calibration": ()})
    app = base.app.model_copy(update={"quantization": p["quant"], "benchmarks": [], "model": model.id,
                                      "gpu_memory_mib": 80000,
                                      "speculative": None})
    return _sized(replace(base, device=h100, model=model, app=app))


def _h100_rows(cat: Catalog, card: Device, run: str, split: dict[str, str]) -> list[Row]:
    """llama-bench rows of a lent GPU; a plan row is one (file, KV type): a file may run at several KV types."""
    out: list[Row] = []
    plan = {(p["gguf"], p["kv"]): p for p in json.loads((HERE / run / "plan.json").read_text())}
    for line in (HERE / run / "bench.jsonl").read_text().splitlines():
        b = json.loads(line)
        p = plan[(Path(b["model_filename"]).name, b["type_k"])]
        out.append(Row(_realshape(cat, card, p), p["model"], _kind(card), int(b["n_depth"]), float(b["avg_ts"]),
                       None, False, False,
                       f"llama-bench tg{b['n_gen']} x {len(b['samples_ts'])} at depth {b['n_depth']}, "
                       f"-fa 1 -ngl 99, KV {b['type_k']}, real-shape {p['gguf']}",
                       f"bench/speed/{run}/bench.jsonl (lent {_card(card)}, llama.cpp 11434, 2026-12-06)",
                       split.get(p["model"], "unsplit"), p["kv"]))
    return out


def _catalog_rows(cat: Catalog, split: dict[str, str]) -> list[Row]:
    out: list[Row] = []
    for _name, r in sorted(cat.apps.items()):
        for bench in r.app.benchmarks:
            # a benchmark's `context` is the server's window (the maintainer's runs decode ~800 tokens after a short
            # prompt): the cache held little of it, so the row is taken at an empty cache
            out.append(Row(_sized(r), r.model.id, _kind(r.device), 0, bench.tokens_per_s,
                           bench.acceptance, True, True, f"{bench.date}: {bench.method}", bench.source,
                           split.get(r.model.id, "unsplit")))
    fixture = load_catalog(str(ROOT / "tests" / "fixtures" / "catalog_roofline"))
    for _name, r in sorted(fixture.apps.items()):
        if r.model.id != "llama2-7b" or r.device.memory_bandwidth_gb_s is None:
            continue
        for bench in r.app.benchmarks:
            out.append(Row(_sized(r), "llama-2-7b", _kind(r.device), 0, bench.tokens_per_s, None, False, False,
                           f"{bench.date}: {bench.method}", bench.source, split.get("llama-2-7b", "unsplit")))
    return out


def predicted(row: Row, coef: Coefficients) -> float | None:
    p = predict(row.resolved, row.context, acceptance=row.acceptance, served=row.served,
                speculative=row.speculative, coef=coef)
    return p.tokens_per_s if p.tokens_per_s is not None else (p.low + p.high) / 2


def _sized(r: Resolved) -> Resolved:
    return sized(r) if r.app.gpu_memory_mib is None else r


def usable_for_fit(row: Row) -> bool:
    """A fit row must say what it measured: a speculative app's row without its acceptance says too little."""
    if row.half != "fit":
        return False
    if not row.speculative:
        return True
    s = speed.decided(speed.sized(row.resolved))
    # a speculative row needs its acceptance and the draft length the app states (an engine default differs by build)
    return s.spec_method is None or (row.acceptance is not None and s.spec_tokens is not None)


def measured_spec() -> tuple[float, float, float, float]:
    """(sampling s per vocabulary entry, SPEC_FIRST_S, SPEC_NEXT_S, SPEC_NEXT_SHARE) from the H100's llama-server
    rows. The drafter's cost from the MTP runs of two files in one call (`h100-run6/spec35.jsonl`, `spec27.jsonl`:
    a 4.9 ms and a 14.1 ms plain step): the first draft token's extra time is the same on both (its mean), each next
    one's is a fixed time plus a share of the plain step (the line through the two files, the plain step less its
    sampling). The sampling from llama-server against llama-bench on the same file, speculation off
    (`h100-run4/served.jsonl`), the median over the fit half's models of the served time a token less the kernels'
    time at an empty cache (the mean over the H100 runs), per vocabulary entry."""
    bare: dict[str, list[float]] = {}
    for run in H100_RUNS:
        if not (HERE / run / "bench.jsonl").exists():
            continue
        for line in (HERE / run / "bench.jsonl").read_text().splitlines():
            b = json.loads(line)
            if b["n_depth"] == 0:
                bare.setdefault(Path(b["model_filename"]).name, []).append(1 / b["avg_ts"])
    split = _split()
    models = {p["gguf"]: p["model"] for p in json.loads((HERE / SERVED_RUN / "served-plan.json").read_text())}
    vocab = {m.id: m.architecture.vocab_size for m in load_catalog(str(ROOT / "catalog")).models.values()}
    per_vocab = []
    for line in (HERE / SERVED_RUN / "served.jsonl").read_text().splitlines():
        s = json.loads(line)
        model = models[s["gguf"]]
        if s.get("timings") and split.get(model) == "fit" and s["gguf"] in bare:
            served = s["timings"]["predicted_ms"] / s["timings"]["predicted_n"] / 1e3
            per_vocab.append((served - sum(bare[s["gguf"]]) / len(bare[s["gguf"]])) / vocab[model])
    sampling = median(per_vocab)
    points = []  # (plain step less sampling, extra at N = 1, extra per next draft token), seconds
    for name, model in (("spec35.jsonl", "qwen36-35b-a3b"), ("spec27.jsonl", "qwen36-27b")):
        rows_ = [json.loads(x) for x in (HERE / SPEC_RUN / name).read_text().splitlines()]
        per = {(int(r["argv_extra"][-1]) if r["argv_extra"] else 0):  # no draft accepted: a token is a step
               r["timings"]["predicted_ms"] / r["timings"]["predicted_n"] / 1e3 for r in rows_ if r.get("timings")}
        points.append((per[0] - vocab[model] * sampling, per[1] - per[0], (per[3] - per[1]) / 2))
    (p_small, first_small, next_small), (p_big, first_big, next_big) = points
    share = (next_big - next_small) / (p_big - p_small)
    return sampling, (first_small + first_big) / 2, next_small - share * p_small, share


def _key(r: Row) -> tuple[str, str, str]:
    d = r.resolved.device
    return speed.engine_kind(r.resolved), speed.model_family(r.resolved) or "-", d.architecture or d.arch


def _wkey(r: Row) -> tuple[str, str, str]:
    """The weights' efficiency key: the family's weights class (every dense family shares one, speed.weights_class)."""
    e, f, a = _key(r)
    return e, speed.weights_class(f if f != "-" else None) or "-", a


def _plain(r: Row) -> bool:
    s = speed.decided(speed.sized(r.resolved))
    return s.spec_method is None or not r.speculative


def kv_efficiencies(fit_rows: list[Row]) -> dict[tuple[str, str, str], float]:
    """From rows of one app, device and method at two contexts: the extra KV read / (bandwidth x the extra time)."""
    found: dict[tuple[str, str, str], list[float]] = {}
    groups: dict[tuple[str, str, bool], list[Row]] = {}
    for r in fit_rows:
        if _plain(r):
            groups.setdefault((r.resolved.app.name + r.model + r.kv, r.resolved.device.id, r.served), []).append(r)
    for rs in groups.values():
        rs.sort(key=lambda x: x.context)
        low = rs[0]
        for high in rs[1:]:
            if high.context == low.context:
                continue
            dt = 1 / high.tokens_per_s - 1 / low.tokens_per_s
            kv_low, kv_high = (roofline(x.resolved, x.context) for x in (low, high))
            assert kv_low is not None and kv_high is not None
            element = speed.decided(speed.sized(low.resolved)).kv_element_bytes
            dkv = (kv_high.kv_bytes - kv_low.kv_bytes) / element * speed.KV_REFERENCE_BYTES
            if dt > 0 and dkv > 0:
                bw = (low.resolved.device.memory_bandwidth_gb_s or 0) * 1e9
                found.setdefault(_key(low), []).append(dkv / (bw * dt))
    return {k: round(median(v), 4) for k, v in found.items()}


def fit(all_rows: list[Row]) -> tuple[Coefficients, dict[str, object]]:
    sampling, first, nxt, share = measured_spec()
    fit_rows = [r for r in all_rows if usable_for_fit(r)]
    kv_eff = kv_efficiencies(fit_rows)
    efficiency: dict[tuple[str, str, str], float] = {}
    overhead: dict[tuple[str, str], float] = {}
    kinds = sorted({_key(r)[2] for r in fit_rows})
    for kind in kinds:  # a measured architecture: its own launch + sync cost and efficiencies
        effs, per_layer = _search(fit_rows, [kind], kv_eff, sampling, first, nxt, share)
        efficiency.update(effs)
        overhead.update(per_layer)
    # a device architecture without a fit row: the launch + sync cost a layer fitted across every measured
    # architecture at once (the host's and driver's share of a step does not shrink with the card's bandwidth), with
    # the efficiencies that go with it, a family's median over the architectures (ANY_ARCH)
    effs, per_layer = _search(fit_rows, kinds, kv_eff, sampling, first, nxt, share)
    anywhere: dict[tuple[str, str], list[float]] = {}
    for (e, f, _a), v in effs.items():
        anywhere.setdefault((e, f), []).append(v)
    efficiency.update({(e, f, speed.ANY_ARCH): round(median(v), 4) for (e, f), v in anywhere.items()})
    overhead.update({(e, speed.ANY_ARCH): v for (e, _a), v in per_layer.items()})
    coef = Coefficients(efficiency, kv_eff, overhead, {"llamacpp": sampling}, first, nxt, share)
    return coef, {"sampling": sampling}


def _search(fit_rows: list[Row], kinds: list[str], kv_eff: dict[tuple[str, str, str], float], sampling: float,
            first: float, nxt: float, share: float
            ) -> tuple[dict[tuple[str, str, str], float], dict[tuple[str, str], float]]:
    """One launch + sync cost a kernel block, shared by the device architectures `kinds`, and the efficiencies it
    implies (the median per engine, family and architecture), chosen on the grid by the fit rows' p50 + p95 error,
    each architecture weighing the same."""
    mine = [r for r in fit_rows if _wkey(r)[2] in kinds]
    engines = sorted({_wkey(r)[0] for r in mine})
    best: tuple[float, dict[tuple[str, str, str], float], dict[tuple[str, str], float]] | None = None
    for us in range(0, MAX_OVERHEAD_US + 1, OVERHEAD_STEP_US):  # launch + sync: µs a kernel, a few kernels a layer
        per_layer = {(e, kind): round(us * 1e-6, 8) for e in engines for kind in kinds}
        trial = Coefficients({}, kv_eff, per_layer, {"llamacpp": sampling}, first, nxt, share)
        implied: dict[tuple[str, str, str], list[float]] = {}
        for r in mine:
            eff = _implied(r, trial)
            if eff is not None:
                implied.setdefault(_wkey(r), []).append(eff)
        effs = {k: round(median(v), 4) for k, v in implied.items()}
        if not effs:
            continue
        coef = Coefficients(effs, kv_eff, per_layer, trial.sampling_s_per_vocab, first, nxt, share)
        score = float(sum(1 for v in effs.values() if v > 1))  # no kernel streams faster than the bandwidth
        for kind in kinds:
            rows_ = [r for r in mine if _wkey(r)[2] == kind]
            errs = sorted(abs(predicted(r, coef) / r.tokens_per_s - 1) for r in rows_  # type: ignore[operator]
                          if _wkey(r) in effs)
            score += sum(1 for r in rows_ if _wkey(r) not in effs)
            if errs:
                score += median(errs) + errs[int(0.95 * (len(errs) - 1))]
        if best is None or score < best[0]:
            best = (score, effs, per_layer)
    assert best is not None
    return best[1], best[2]


def _implied(r: Row, coef: Coefficients) -> float | None:
    """The weights' efficiency that would make the model hit this row exactly (None where none can)."""
    unit = Coefficients({_wkey(r): 1.0}, coef.kv_efficiency, coef.overhead_s_per_layer, coef.sampling_s_per_vocab,
                        coef.spec_first_s, coef.spec_next_s, coef.spec_next_share)
    p = predict(r.resolved, r.context, acceptance=r.acceptance, served=r.served, speculative=r.speculative, coef=unit)
    step = p.tokens_per_step / r.tokens_per_s
    weights = (step - p.sampling_s - p.spec_fixed_s) / (1 + p.spec_share) - p.overhead_s - p.kv_s
    if weights <= 0:
        return None
    return p.weights_s / weights  # the reads' time at efficiency 1 over the time they took


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def report(all_rows: list[Row], coef: Coefficients, extra: dict[str, object]) -> str:
    lines = []
    table = []
    by_kind: dict[tuple[str, str], list[float]] = {}
    for r in all_rows:
        pred = predict(r.resolved, r.context, acceptance=r.acceptance, served=r.served, speculative=r.speculative,
                       coef=coef)
        value = pred.tokens_per_s if pred.tokens_per_s is not None else (pred.low + pred.high) / 2
        err = value / r.tokens_per_s - 1
        used = "fit" if usable_for_fit(r) else ("test" if r.half == "test"
                                                else "fit half, not used (acceptance or draft length unknown)")
        if r.half == "test":
            by_kind.setdefault((r.device_kind, pred.basis.split(":")[0]), []).append(abs(err))
        table.append(f"| {used} | {r.device_kind} | {r.resolved.app.name} | {r.model} | {r.context:,} | "
                     f"{r.tokens_per_s:,.1f} | {value:,.1f} | {err:+.0%} | {pred.basis} | {r.method} | {r.source} |")
    lines.append("| device kind | basis | test rows | p50 abs error | p95 abs error |")
    lines.append("|---|---|---|---|---|")
    for (kind, basis), errs in sorted(by_kind.items()):
        lines.append(f"| {kind} | {basis} | {len(errs)} | {pct(errs, 0.5):.0%} | {pct(errs, 0.95):.0%} |")
    kinds: dict[str, list[float]] = {}
    for (kind, _), errs in by_kind.items():
        kinds.setdefault(kind, []).extend(errs)
    lines.append("")
    lines.append("| device kind (all test rows) | rows | p50 | p95 |")
    lines.append("|---|---|---|---|")
    for kind, errs in sorted(kinds.items()):
        lines.append(f"| {kind} | {len(errs)} | {pct(errs, 0.5):.0%} | {pct(errs, 0.95):.0%} |")
    coef_lines = [f"- efficiency {e} / {f} / {a}: {v:.3f}" for (e, f, a), v in sorted(coef.efficiency.items())]
    coef_lines += [f"- KV efficiency {e} / {f} / {a}: {v:.3f}" for (e, f, a), v in sorted(coef.kv_efficiency.items())]
    coef_lines += [f"- launch + sync per kernel block a step ({e} on {a}): {v * 1e6:.0f} µs"
                   for (e, a), v in sorted(coef.overhead_s_per_layer.items())]
    coef_lines += [f"- sampling per vocabulary entry a served token: {extra['sampling']:.3e} s",
                   f"- speculative step: the plain step x (1 + {coef.spec_next_share:.3f} x (N - 1)) + "
                   f"{coef.spec_first_s * 1e3:.2f} ms + {coef.spec_next_s * 1e3:.2f} ms x (N - 1)"]
    return "\n".join(lines), "\n".join(coef_lines), "\n".join(table)  # type: ignore[return-value]


def bands(all_rows: list[Row], coef: Coefficients) -> dict[str, float]:
    """Per device architecture: the p95 of the test rows whose family was fitted there, rounded up to 5 %."""
    errs: dict[str, list[float]] = {}
    for r in all_rows:
        if r.half != "test":
            continue
        p = predict(r.resolved, r.context, acceptance=r.acceptance, served=r.served, speculative=r.speculative,
                    coef=coef)
        if p.tokens_per_s is not None and p.basis.startswith("fitted"):
            errs.setdefault(r.resolved.device.architecture or r.resolved.device.arch, []).append(
                abs(p.tokens_per_s / r.tokens_per_s - 1))
    return {a: math.ceil(pct(e, 0.95) * 20) / 20 for a, e in errs.items()}


def write_coefficients(coef: Coefficients, bands: dict[str, float]) -> None:
    """Rewrite generator/fit/speed_fitted.json, the fitted values speed.py reads (sorted: same fit, same bytes)."""
    path = ROOT / "generator" / "fit" / "speed_fitted.json"

    def rows(values: dict[tuple[str, ...], float]) -> list[list[object]]:
        return [[*k, v] for k, v in sorted(values.items())]

    data = {"efficiency": rows(coef.efficiency),  # type: ignore[arg-type]
            "kv_efficiency": rows(coef.kv_efficiency),  # type: ignore[arg-type]
            "overhead_s_per_layer": rows(coef.overhead_s_per_layer),  # type: ignore[arg-type]
            "sampling_s_per_vocab": {k: float(f"{v:.4e}") for k, v in sorted(coef.sampling_s_per_vocab.items())},
            "spec_first_s": round(coef.spec_first_s, 6), "spec_next_s": round(coef.spec_next_s, 6),
            "spec_next_share": round(coef.spec_next_share, 4),
            "band_by_arch": dict(sorted(bands.items()))}
    path.write_text(json.dumps(data, indent=1) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ns = ap.parse_args()
    all_rows = rows()
    coef, extra = fit(all_rows)
    summary, coefs, table = report(all_rows, coef, extra)
    print(summary)
    print(coefs)
    if ns.write:
        write_coefficients(coef, bands(all_rows, coef))
        (HERE / "table.md").write_text(summary + "\n\n" + coefs + "\n\n| half | device | app | model | context | "
                                       "measured t/s | predicted t/s | error | basis | method | source |\n"
                                       "|---|---|---|---|---|---|---|---|---|---|---|\n" + table + "\n")
    else:
        print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
