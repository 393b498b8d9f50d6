#!/usr/bin/env python3
"""How fit formula v5's MTP draft rates were fitted (generator/fit/llamacpp.py MTP_PEAK_BY_MODEL), on all 164
configurations measured before v5 (bench/fit-sweep/h200 72, h200-v3 40, h200-v4 52):

  for n in h200:sweep-logs-2.tgz h200-v3:sweep-logs.tgz h200-v4:sweep-logs.tgz; do d=${n%%:*}; mkdir -p R-$d
    tar xzf bench/fit-sweep/$d/${n##*:} -C R-$d; cp bench/fit-sweep/$d/plan.json R-$d; done
  python bench/fit-sweep/fit_v5.py R-h200 R-h200-v3 R-h200-v4     (repo venv, repository root)

The MTP draft context's compute buffer = its KQ mask + its logits + (without flash attention) its f32 KQ, each at the
source's size (llamacpp.mtp_source_terms), + a per-model rate x ubatch: least squares for that rate alone. It also
prints the target compute buffer's error with v5's (v4's) per-model rates, which v5 keeps.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))


def main(r2: str, r3: str, r4: str) -> int:
    import bench_fit_report as b
    from generator.catalog import load_catalog
    from generator.fit import llamacpp as L
    from generator.fit.calibrate import parse
    from generator.fit.memory import MIB

    cat = load_catalog("catalog")
    mtp, comp = [], []
    for d, dfile in ((r2, "design.json"), (r3, "design-v3.json"), (r4, "design-v4.json")):
        for row in b.rows_of(Path(d), str(HERE / dfile)):
            conf = row["row"]
            comp.append(abs(row["expected"]["compute buffer"] - row["measured"]["compute buffer"]))
            if not conf["mtp"]:
                continue
            res = b.resolved_of(cat, conf)
            s = b.settings_of(res, conf)
            log = parse((Path(d) / f"{row['id']}.log").read_text(errors="replace"))
            draft = sum(x.value for x in log.all("compute_buffer") if x.scope == 1 and x.device.startswith("CUDA")
                        and not x.device.startswith("CUDA_Host"))
            ub = L.effective_ubatch(s, L._cells(res, s))
            mask, logits, kq = L.mtp_source_terms(res, s)
            mtp.append((res.model.id, ub / 1024, (mask + kq) / MIB, draft, conf.get("fa", "on"), logits / MIB))
    print(f"{len(comp)} configurations; target compute |error| with the kept rates: p50 {np.percentile(comp, 50):.1f}"
          f" p95 {np.percentile(comp, 95):.1f} max {max(comp):.1f} MiB")
    models = sorted({r[0] for r in mtp})
    k = {m: i for i, m in enumerate(models)}
    tok = np.array([r[1] for r in mtp])
    attn_src = np.array([r[2] for r in mtp])  # mask + KQ: alive at the NextN layer's attention node only
    y = np.array([r[3] - r[5] for r in mtp])  # measured minus logits

    def design(branch: np.ndarray) -> np.ndarray:
        x = np.zeros((len(mtp), 2 * len(models)))
        for i, r in enumerate(mtp):
            x[i, (0 if branch[i] == 0 else len(models)) + k[r[0]]] = tok[i]
        return x

    branch = np.ones(len(mtp), int)
    for _ in range(100):
        c, *_ = np.linalg.lstsq(design(branch), y - np.where(branch == 0, attn_src, 0), rcond=None)
        attn = design(np.zeros(len(mtp), int)) @ c + attn_src
        rest = design(np.ones(len(mtp), int)) @ c
        new = np.where(attn >= rest, 0, 1)
        if (new == branch).all():
            break
        branch = new
    err = np.abs(np.maximum(attn, rest) - y)
    print(f"MTP draft compute ({len(mtp)}) = logits + max(mask + KQ + a x ubatch, b x ubatch): "
          + ", ".join(f"{m} a {c[k[m]]:.1f} b {c[len(models) + k[m]]:.1f}" for m in models)
          + f" KiB per ubatch token; in-sample |error| p50 {np.percentile(err, 50):.1f}"
          f" p95 {np.percentile(err, 95):.1f} max {err.max():.1f} MiB")
    for r, e, br in zip(mtp, err, branch, strict=True):
        print(f"  {r[0]} ub {r[1] * 1024:.0f} fa {r[4]}: mask+KQ {r[2]:.0f}, measured {r[3]:.0f}, "
              f"peak {'attention' if br == 0 else 'rest'}, |err| {e:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
