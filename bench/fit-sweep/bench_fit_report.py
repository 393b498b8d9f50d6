"""The sweep's comparison: the fit of today's code for each configuration against llama.cpp's own lines and NVML.

`fit_of(cat, row)` evaluates generator/fit/llamacpp.py at exactly the configuration (the base app's settings with
the swept flags replaced; the app's calibration rows left out, so the formula alone answers). `report` parses the
logs (generator/fit/calibrate.py) and prints, for the fit half and the test half apart, p50 / p95 / max of the
total's error and of each part's.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PARTS = ("weights on the GPU", "KV", "recurrent state", "compute buffer", "MTP draft", "vision projector",
         "CUDA context")
# v6: the projector's lines (tools/mtmd/clip.cpp: load_hparams "model size: %.2f MiB", reserve_compute_meta
# "%10s compute buffer size = %8.2f MiB"); the last reserve of each backend is the one that stays
_CLIP_MODEL = re.compile(r"load_hparams: model size:\s+([0-9.]+) MiB")
_CLIP_COMPUTE = re.compile(r"reserve_compute_meta:\s+(\S+) compute buffer size =\s+([0-9.]+) MiB")


def settings_of(r: Any, row: dict) -> Any:
    from generator.engines import engine_for
    from generator.engines.settings import Value, llama_settings

    s = llama_settings(r, engine_for(r))
    update: dict[str, Any] = {
        "context": Value(row["context"], None, "sweep"), "kv_k": Value(row["kv"], None, "sweep"),
        "kv_v": Value(row["kv"], None, "sweep"), "ubatch": Value(row["ubatch"], None, "sweep"),
        "parallel": Value(row["parallel"], None, "sweep"), "flash_attn": Value(row.get("fa", "on"), None, "sweep"),
        "swa_full": Value(row["swa_full"], None, "sweep"),
        "spec_method": "mtp" if row["mtp"] else None, "spec_tokens": 3 if row["mtp"] else None,
        "vision": bool(row.get("mmproj")),
    }
    if hasattr(s, "batch"):
        update["batch"] = Value(row["batch"] or 2048, None, "sweep")
    if hasattr(s, "parallel_explicit"):
        update["parallel_explicit"] = True
    return replace(s, **update)


# v8: a projector row whose base app's model has no projector in the catalog (gemma426ba4bone: Gemma 4 26B-A4B, text
# only) is judged as the app of the model with the same real shape that has one (the QAT 26B-A4B: the same tensors,
# tests/fit/test_largest_request.py; the same gemma4v tower)
VISION_BASE = {"gemma426ba4bone": "llamacppgemma426ba4bone"}


def resolved_of(cat: Any, row: dict) -> Any:
    """The base app at the row's configuration. Up to v7 its calibration rows were left out (the formula alone); v8
    keeps them, as `explain` shows the app (issue 36: a row may raise a part, never lower it below the formula)."""
    from generator.fit.sizing import sized

    r = cat.apps[row["base"]]
    if row.get("mmproj") and r.mmproj is None and row["base"] in VISION_BASE:
        r = cat.apps[VISION_BASE[row["base"]]]
    keep = r.app.calibration if str(row["id"]).split("#")[-1].startswith("v8") else ()
    r = replace(r, app=r.app.model_copy(update={"calibration": keep, "speculative": None, "vision": False}))
    return sized(r)


def fit_of(cat: Any, row: dict) -> dict[str, float]:
    """The fit's parts (component -> MiB) at the configuration."""
    from generator.fit.ledger import Ledger
    from generator.fit import llamacpp

    r = resolved_of(cat, row)
    ledger = Ledger()
    llamacpp.build(r, settings_of(r, row), ledger)
    out: dict[str, float] = {}
    for p in ledger.parts:
        out[p.component] = out.get(p.component, 0.0) + p.mib
    return out


def measured_of(log_text: str, nvml: float | None) -> dict[str, float]:
    from generator.fit.calibrate import parse

    parsed = parse(log_text)

    def cuda(kind: str, scope: int | None = None) -> float:
        return sum(x.value for x in parsed.all(kind) if (scope is None or x.scope == scope) and (
            not x.device or x.device.startswith("CUDA") and not x.device.startswith("CUDA_Host")))

    m = {"weights on the GPU": cuda("model_buffer"),
         "KV": sum(x.value for x in parsed.all("kv_buffer") if x.scope == 0),
         "recurrent state": cuda("recurrent_state"),
         "compute buffer": cuda("compute_buffer", 0),
         "MTP draft": sum(x.value for x in parsed.all("kv_buffer") if x.scope) + cuda("compute_buffer", 1),
         "vision projector": clip_mib(log_text)}
    if nvml:
        m["CUDA context"] = nvml - sum(m.values())
    return m


def clip_mib(log_text: str) -> float:
    """The projector's weights and its CUDA compute buffer (the last reserve of each CUDA device), 0 without one."""
    weights = [float(m.group(1)) for m in _CLIP_MODEL.finditer(log_text)]
    compute: dict[str, float] = {}
    for m in _CLIP_COMPUTE.finditer(log_text):
        if m.group(1).startswith("CUDA") and not m.group(1).startswith("CUDA_Host"):
            compute[m.group(1)] = float(m.group(2))
    return (weights[-1] if weights else 0.0) + sum(compute.values())


def expected_parts(fit: dict[str, float], tensor_mib: float) -> dict[str, float]:
    host = -fit.get("weights kept in host memory", 0.0)
    kv = sum(v for k, v in fit.items() if k.startswith("KV ") and k != "KV MTP layer")
    skipped = -fit.get("MTP layer weights not loaded", 0.0)  # the file's NextN layers, not loaded without MTP
    return {"weights on the GPU": tensor_mib - host - skipped, "KV": kv,
            "recurrent state": fit.get("recurrent state", 0.0),
            "compute buffer": fit.get("compute buffer", 0.0),
            "MTP draft": fit.get("KV MTP layer", 0.0) + fit.get("MTP draft compute buffer", 0.0),
            "vision projector": fit.get("vision projector (mmproj)", 0.0)
            + fit.get("vision projector compute buffer", 0.0),
            # the projector's own CUDA backend (pool, cuBLAS) is in NVML's residual, as the target's is
            # v8: so is what the largest image adds above the warmup reserve (its compute buffer and pool)
            "CUDA context": fit.get("CUDA context", 0.0) + fit.get("vision projector CUDA backend", 0.0)
            + fit.get("vision projector: largest image", 0.0)}


def pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    v = sorted(values)
    k = (len(v) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def rows_of(runs_dir: Path, design_path: str | None = None) -> list[dict]:
    from generator.catalog import load_catalog

    cat = load_catalog("catalog")
    design_file = Path(design_path) if design_path else HERE / "design.json"
    design = {r["id"].replace("#", "@"): r for r in json.loads(design_file.read_text())["configurations"]}
    plan_file = runs_dir / "plan.json"
    plan = {e["app"]: e for e in json.loads(plan_file.read_text())} if plan_file.exists() else {}
    out = []
    for line in (runs_dir / "runs.jsonl").read_text().splitlines():
        run = json.loads(line)
        row = design.get(run["app"])
        nvml = (run.get("gpu_mib_after_image_max") or run.get("gpu_mib_after_image") or run.get("gpu_mib_after_long")
                or run.get("gpu_mib_after_request"))
        if row is None or not run.get("listening") or not nvml:
            continue
        log = (runs_dir / f"{run['app']}.log").read_text(errors="replace")
        tensor = plan[run["app"]]["tensor_mib"] if run["app"] in plan else _tensor_mib(cat, row)
        exp = expected_parts(fit_of(cat, row), tensor)
        meas = measured_of(log, nvml)
        out.append({"id": run["app"], "half": row["half"], "row": row, "expected": exp, "measured": meas,
                    "boot_mib": run.get("gpu_mib_boot"), "short_mib": run.get("gpu_mib_after_request"),
                    "nvml": nvml, "errors": [k for k in run if k.endswith("_error")]})
    return out


def _tensor_mib(cat: Any, row: dict) -> float:
    from generator.fit import realshape

    r = cat.apps[row["base"]]
    return realshape.spec_for(r.model, r.app.quantization, mtp=row["gguf"].endswith("-mtp")).tensor_bytes / 2**20


def stats(rows: list[dict]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    tot = [abs(sum(r["expected"].values()) - r["nvml"]) / r["nvml"] * 100 for r in rows]
    out["total %"] = {"p50": pct(tot, .5), "p95": pct(tot, .95), "max": max(tot, default=math.nan), "n": len(tot)}
    # v8: the estimate below NVML (MiB; 0 where it is above): an under-estimate is an out-of-memory crash
    under = [max(0.0, r["nvml"] - sum(r["expected"].values())) for r in rows]
    out["total under NVML MiB"] = {"p50": pct(under, .5), "p95": pct(under, .95), "max": max(under, default=math.nan),
                                   "n": len(under)}
    for part in PARTS:
        both = [(abs(r["expected"][part] - r["measured"].get(part, 0.0)), r["measured"].get(part, 0.0)) for r in rows
                if r["expected"][part] or r["measured"].get(part)]
        err = [e for e, _ in both]
        rel = [e / m * 100 if m else math.inf for e, m in both]  # v6: the bar allows 64 MiB or 3 % of the part
        out[f"{part} MiB"] = {"p50": pct(err, .5), "p95": pct(err, .95), "max": max(err, default=math.nan),
                             "n": len(err), "p95 %": pct(rel, .95)}
    return out


def _table(lines: list[str], title: str, sub: list[dict]) -> None:
    lines.append(f"## {title} ({len(sub)} configurations)")
    lines.append("| quantity | p50 | p95 | max | n | p95 % of the part |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, st in stats(sub).items():
        rel = f"{st['p95 %']:.1f}" if "p95 %" in st else ""
        lines.append(f"| {name} | {st['p50']:.1f} | {st['p95']:.1f} | {st['max']:.1f} | {st['n']} | {rel} |")
    lines.append("")


def report(ns: argparse.Namespace) -> int:
    rows = rows_of(Path(ns.runs), getattr(ns, "design", None))
    lines = []
    for half in ("fit", "test"):
        _table(lines, f"{half} half", [r for r in rows if r["half"] == half])
    if any(r.get("errors") for r in rows):  # v7: a request llama-server refused did not measure what the row asked
        _table(lines, "test half, every request answered", [r for r in rows if r["half"] == "test" and
                                                            not r.get("errors")])
    if any(r["row"].get("fa") == "off" for r in rows):  # v5: flash attention on and off apart
        for fa in ("on", "off"):
            _table(lines, f"-fa {fa}", [r for r in rows if r["row"].get("fa", "on") == fa])
    if any(r["row"].get("mmproj") for r in rows):  # v6: the vision projector loaded or not
        for on in (True, False):
            _table(lines, f"mmproj {'on' if on else 'off'}", [r for r in rows if bool(r["row"].get("mmproj")) == on])
    lines.append("| configuration | half | flags | total est / meas (err) | " + " | ".join(PARTS) + " |")
    lines.append("| --- | --- | --- | ---: | " + " | ".join("---:" for _ in PARTS) + " |")
    for r in rows:
        est = sum(r["expected"].values())
        err = (est - r["nvml"]) / r["nvml"] * 100
        cells = [f"{r['expected'][p]:,.0f} / {r['measured'].get(p, 0.0):,.0f}" for p in PARTS]
        row = r["row"]
        flags = (f"c {row['context']} kv {row['kv']} ub {row['ubatch']} b {row['batch'] or '-'} np {row['parallel']}"
                 + (" mtp" if row["mtp"] else "") + (" swa-full" if row["swa_full"] else "")
                 + (" fa-off" if row.get("fa") == "off" else "") + (" mmproj" if row.get("mmproj") else ""))
        flags += "".join(f" ({e.removesuffix('_error')} request refused)" for e in r.get("errors", []))
        lines.append(f"| {r['id']} | {r['half']} | {flags} | {est:,.0f} / {r['nvml']:,.0f} ({err:+.1f} %) | "
                     + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if ns.markdown:
        Path(ns.markdown).write_text(text)
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1, default=str) + "\n")
    return 0
