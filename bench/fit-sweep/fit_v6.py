#!/usr/bin/env python3
"""How fit formula v6's attention rate without flash attention was fitted (generator/fit/llamacpp.py
COMPUTE_ATTN_FA_OFF_BY_MODEL), on the `-fa off` rows of h200-v4 and h200-v5 (30 configurations, fit data now):

  for d in h200-v4 h200-v5; do mkdir -p R-$d; tar xzf bench/fit-sweep/$d/sweep-logs.tgz -C R-$d
    cp bench/fit-sweep/$d/plan.json R-$d; done
  python bench/fit-sweep/fit_v6.py R-h200-v4 R-h200-v5      (repo venv, repository root)

Without flash attention the target's compute buffer peaks either at one layer's attention node (its f32 KQ, n_ctx_seq x
ubatch x heads, next to the KQ masks and that node's activations) or at the rest of the layer (v4's rate, kept). For
each row the attention activations are (measured - masks - KQ) / ubatch; a row whose measured buffer is within 10 MiB
of the rest-of-layer branch says nothing about them and is left out. The rate of a model is the median of its rows.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))


def main(*dirs: str) -> int:
    import bench_fit_report as b
    from generator.catalog import load_catalog
    from generator.fit import llamacpp as L
    from generator.fit.memory import MIB, Geometry
    from generator.fit.realshape import SHAPES

    cat = load_catalog("catalog")
    designs = {"h200-v4": "design-v4.json", "h200-v5": "design-v5.json"}
    rates: dict[str, list[float]] = {}
    for d in dirs:
        dfile = next(v for k, v in designs.items() if d.rstrip("/").endswith(k))
        for row in b.rows_of(Path(d), str(HERE / dfile)):
            conf = row["row"]
            if conf.get("fa") != "off":
                continue
            res = b.resolved_of(cat, conf)
            s = b.settings_of(res, conf)
            per_seq, ub = L.seq_cells(res, s), L.effective_ubatch(s, L._cells(res, s))
            geo = Geometry.of(res.model.architecture)
            masks = per_seq * ub * 4 + (L.swa_cells_per_stream(s, geo, per_seq) * ub * 4 if geo.sliding else 0)
            kq = per_seq * ub * SHAPES[res.model.id].n_head * 4
            rest = masks / MIB + L.COMPUTE_PEAK_BY_MODEL[res.model.id][1] * ub / 1024
            meas = row["measured"]["compute buffer"]
            rate = (meas - (masks + kq) / MIB) / ub * 1024
            used = meas > rest + 10
            note = "" if used else " (rest is the peak: unused)"
            print(f"  {row['id']}: ub {ub} n_ctx_seq {per_seq} measured {meas:.1f} MiB, rest branch {rest:.1f}, "
                  f"attention activations {rate:.1f} KiB per ubatch token{note}")
            if used:
                rates.setdefault(res.model.id, []).append(rate)
    for model, values in sorted(rates.items()):
        print(f"{model}: median {statistics.median(values):.1f} KiB per ubatch token over {len(values)} rows "
              f"(range {min(values):.1f}-{max(values):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
