#!/usr/bin/env python3
"""v8's two projector constants, from the FIT half of bench/fit-sweep/design-v8.json only (the test half only tests).

Each projector row of the v8 sweep reads NVML after the text requests (the slot filled), after an image of the
warmup size and after a 2048 x 2048 image (sweep.py `image_sides`). With flash attention on:

- the projector's own CUDA backend (MMPROJ_BACKEND_MIB, per tower) = NVML after the warmup image - NVML after the
  text (clip's compute buffer for the warmup image is reserved at boot, so what the first image adds is the
  backend's pool and cuBLAS);
- the CUDA pool's growth to the largest image (MMPROJ_IMAGE_POOL_KIB, per tower, KiB per patch above the warmup
  image's) = (NVML after the largest image - NVML after the warmup image - the compute buffer's growth that
  generator/fit/llamacpp.py computes) / the extra patches.

Run from the repository root with the repo venv: python bench/fit-sweep/fit_v8.py --runs DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent.parent))
    from bench_fit_report import resolved_of, settings_of  # type: ignore[import-not-found]
    from generator.catalog import load_catalog
    from generator.fit import llamacpp as L
    from generator.fit import realshape_mmproj as M

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", required=True)
    parser.add_argument("--design", default=str(HERE / "design-v8.json"))
    ns = parser.parse_args()
    cat = load_catalog("catalog")
    design = {r["id"].replace("#", "@"): r for r in json.loads(Path(ns.design).read_text())["configurations"]}
    backend: dict[str, list[float]] = {}
    pool: dict[str, list[float]] = {}
    for line in (Path(ns.runs) / "runs.jsonl").read_text().splitlines():
        run = json.loads(line)
        row = design.get(run["app"])
        if row is None or not row.get("mmproj") or row.get("fa", "on") != "on":
            continue
        text = run.get("gpu_mib_after_long") or run.get("gpu_mib_after_request")
        warm, big = run.get("gpu_mib_after_image"), run.get("gpu_mib_after_image_max")
        if not (text and warm and big):
            print(f"{run['app']}: incomplete ({text}, {warm}, {big})")
            continue
        r = resolved_of(cat, row)
        s = replace(settings_of(r, row), vision=True)
        v = M.VISION[r.model.id]
        warm_p = L.warmup_patches(r, s)
        big_p = L.image_max_tokens(r, s) * v.merge * v.merge
        compute = L.mmproj_compute_mib(v, "on", big_p) - L.mmproj_compute_mib(v, "on", warm_p)
        rate = (big - warm - compute) / max(1, big_p - warm_p) * 1024
        print(f"{run['app']} [{row['half']}] backend {warm - text:.0f} MiB, largest image +{big - warm:.0f} MiB "
              f"(compute {compute:.0f}, {big_p - warm_p} more patches: pool {rate:.2f} KiB per patch)")
        if row["half"] == "fit":
            backend.setdefault(v.projector, []).append(warm - text)
            if big_p > warm_p:  # a row whose largest image is its warmup image (the ubatch cap) says nothing
                pool.setdefault(v.projector, []).append(rate)
    compute_rates(cat, design, Path(ns.runs))
    for tower in sorted(backend):
        print(f"{tower}: backend median {statistics.median(backend[tower]):.0f} MiB (max {max(backend[tower]):.0f}), "
              f"pool median {statistics.median(pool[tower]):.2f} KiB per patch (max {max(pool[tower]):.2f}), "
              f"{len(backend[tower])} fit rows")
    return 0


def compute_rates(cat: object, design: dict, runs: Path, model: str = "gemma-4-12b-qat") -> None:
    """The Gemma 4 12B's per-model compute rates (COMPUTE_PEAK_BY_MODEL), v4's method on its fit rows only: the
    attention node's rate by least squares over the rows (all with flash attention and a quantized cache, where the
    f16 K/V copies put the attention node at the peak), the rest of the layer's as the largest those rows allow."""
    from bench_fit_report import measured_of, resolved_of, settings_of  # type: ignore[import-not-found]
    from generator.fit import llamacpp as L

    xs, ys, caps = [], [], []
    for line in (runs / "runs.jsonl").read_text().splitlines():
        run = json.loads(line)
        row = design.get(run["app"])
        if row is None or row["model"] != model or row["half"] != "fit":
            continue
        measured = measured_of((runs / f"{run['app']}.log").read_text(errors="replace"), None)["compute buffer"]
        r = resolved_of(cat, row)
        s = settings_of(r, row)
        L.COMPUTE_PEAK_BY_MODEL[model] = (0.0, 0.0)
        fixed, _ = L.compute_formula(r, s)  # masks + f16 K/V copies + base
        L.COMPUTE_PEAK_BY_MODEL.pop(model)
        ub = L.effective_ubatch(s, L._cells(r, s)) / 1024
        masks = fixed - (L.seq_cells(r, s) * L.streams(s) * 1024 * 2 / 2**20 if str(s.kv_k.value) != "f16" else 0)
        xs.append(ub)
        ys.append(measured - fixed)
        caps.append((measured - masks) / ub)
        print(f"{run['app']}: compute {measured:.1f} MiB, masks + copies {fixed:.1f}, ubatch {ub * 1024:.0f}")
    if xs:
        a = sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)
        print(f"{model}: attention node {a:.1f} KiB per ubatch token (least squares), rest of the layer at most "
              f"{min(caps):.1f}")


if __name__ == "__main__":
    sys.exit(main())
