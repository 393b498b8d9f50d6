#!/usr/bin/env python3
"""How fit formula v4's compute-buffer and MTP draft rates were fitted (generator/fit/llamacpp.py
COMPUTE_PEAK_BY_MODEL, MTP_ACT_BY_MODEL), from the 112 configurations measured before v4:

  tar xzf bench/fit-sweep/h200/sweep-logs-2.tgz -C R2; cp bench/fit-sweep/h200/plan.json R2
  tar xzf bench/fit-sweep/h200-v3/sweep-logs.tgz -C R3; cp bench/fit-sweep/h200-v3/plan.json R3
  python bench/fit-sweep/fit_v4.py R2 R3          (repo venv, repository root)

compute = masks + max(f16 K/V copies + a_m x ubatch, b_m x ubatch) + base, the masks and copies at the source's size
(coefficient 1): least squares for a_m, b_m (KiB per ubatch token) and base, alternating with the choice of the
branch that is the peak of each configuration until that choice no longer changes. A rate whose branch is never the
peak on its model's rows is not identified: the script prints the largest value those rows allow (v4 takes it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))


def main(r2: str, r3: str) -> int:  # noqa: C901
    import bench_fit_report as b
    from generator.catalog import load_catalog
    from generator.fit import llamacpp as L
    from generator.fit.calibrate import parse
    from generator.fit.memory import MIB, Geometry, mla_latent

    cat = load_catalog("catalog")
    rows = []
    for d, dfile in ((r2, HERE / "design.json"), (r3, HERE / "design-v3.json")):
        for row in b.rows_of(Path(d), str(dfile)):
            conf = row["row"]
            res = b.resolved_of(cat, conf)
            s = b.settings_of(res, conf)
            arch = res.model.architecture
            geo = Geometry.of(arch)
            ub, per_seq, n = L.effective_ubatch(s, L._cells(res, s)), L.seq_cells(res, s), L.streams(s)
            fa = arch.full_attention
            per_token = mla_latent(fa) if fa.mla else fa.kv_heads * fa.head_dim * 2
            masks = (per_seq + (L.swa_cells_per_stream(s, geo, per_seq) if geo.sliding else 0)) * ub * 2 / MIB
            f16 = per_seq * n * per_token * 2 / MIB if conf["kv"] != "f16" else 0.0
            log = parse((Path(d) / f"{row['id']}.log").read_text(errors="replace"))
            draft = sum(x.value for x in log.all("compute_buffer") if x.scope == 1 and x.device.startswith("CUDA")
                        and not x.device.startswith("CUDA_Host"))
            rows.append((res.model.id, ub / 1024, masks, f16, row["measured"]["compute buffer"], conf["mtp"], draft))
    models = sorted({r[0] for r in rows})
    k = {m: i for i, m in enumerate(models)}
    tok = np.array([r[1] for r in rows])
    y = np.array([r[4] - r[2] for r in rows])
    f16s = np.array([r[3] for r in rows])

    def design(branch: np.ndarray) -> np.ndarray:
        x = np.zeros((len(rows), 2 * len(models) + 1))
        for i, r in enumerate(rows):
            x[i, (0 if branch[i] == 0 else len(models)) + k[r[0]]] = tok[i]
            x[i, -1] = 1.0
        return x

    branch = np.where(f16s > 0, 0, 1)
    for _ in range(100):
        c, *_ = np.linalg.lstsq(design(branch), y - np.where(branch == 0, f16s, 0), rcond=None)
        attn = design(np.zeros(len(rows), int)) @ c + f16s
        rest = design(np.ones(len(rows), int)) @ c
        new = np.where(attn >= rest, 0, 1)
        if (new == branch).all():
            break
        branch = new
    err = np.abs(np.maximum(attn, rest) - y)
    print(f"{len(rows)} configurations; compute buffer in-sample |error| p50 {np.percentile(err, 50):.1f} "
          f"p95 {np.percentile(err, 95):.1f} max {err.max():.1f} MiB; base {c[-1]:.2f} MiB")
    for m in models:
        idx = [i for i, r in enumerate(rows) if r[0] == m]
        a, bb = c[k[m]], c[len(models) + k[m]]
        note = ""
        if not any(branch[i] == 0 for i in idx):
            bound = min((bb * tok[i] - f16s[i]) / tok[i] for i in idx if f16s[i] > 0)
            note = f"  attention never the peak: a <= {bound:.1f}"
        if not any(branch[i] == 1 for i in idx):
            note = f"  rest never the peak: b <= {min((f16s[i] + a * tok[i]) / tok[i] for i in idx):.1f}"
        print(f"  {m}: a {a:.1f} b {bb:.1f} KiB per ubatch token{note}")
    mtp = [r for r in rows if r[5]]
    mm = sorted({r[0] for r in mtp})
    x = np.array([[r[1] if r[0] == m else 0.0 for m in mm] for r in mtp])
    cm, *_ = np.linalg.lstsq(x, np.array([r[6] for r in mtp]), rcond=None)
    err = np.abs(x @ cm - np.array([r[6] for r in mtp]))
    print(f"MTP draft compute ({len(mtp)}): " + ", ".join(f"{m} {v:.1f}" for m, v in zip(mm, cm, strict=True))
          + f" KiB per ubatch token; in-sample p95 {np.percentile(err, 95):.1f} max {err.max():.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
