"""The unseen-device check of bench/speed-accuracy.md: fit without any H100 row, then predict every H100 row from
its device file alone (bench/speed/devices/h100-sxm.yaml: the public specification).

    .venv/bin/python bench/speed/heldout_device.py
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit as F  # noqa: E402


def main() -> int:
    rows = F.rows()
    # the H100's fit rows leave the fit: every H100 row is a measurement on a device the model never saw
    held = [replace(r, half="held out") if "H100" in r.device_kind and r.half == "fit" else r for r in rows]
    coef, _ = F.fit(held)
    errs = []
    print("| model | context | measured t/s | predicted t/s | error | basis |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "H100" not in r.device_kind:
            continue
        p = F.predict(r.resolved, r.context, served=r.served, speculative=r.speculative, coef=coef)
        value = p.tokens_per_s if p.tokens_per_s is not None else (p.low + p.high) / 2
        errs.append(abs(value / r.tokens_per_s - 1))
        print(f"| {r.model} | {r.context:,} | {r.tokens_per_s:.1f} | {value:.1f} | {value / r.tokens_per_s - 1:+.0%} "
              f"| {p.basis} |")
    print(f"\n{len(errs)} rows: p50 {F.pct(errs, 0.5):.0%}, p95 {F.pct(errs, 0.95):.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
