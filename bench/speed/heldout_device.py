"""The unseen-device check of bench/speed-accuracy.md: fit without any H100 row, then predict every H100 row from
its device file alone (bench/speed/devices/h100-sxm.yaml: the public specification).

Also prints the error by context (up to 4,096 tokens, where the attention's KV reads are a few per cent of a step,
and past it) and how many KV efficiencies the held-out fit found: every row with a context is an H100 row (the
catalog's figures are taken at an empty cache), so the held-out fit has none, and the attention's reads fall back
to the weights' efficiency (generator/fit/speed.py `predict`), 4-21x what the H100 measures for them (MLA about
the same).

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
    by_context: dict[str, list[float]] = {}
    print("| model | context | measured t/s | predicted t/s | error | basis |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "H100" not in r.device_kind:
            continue
        p = F.predict(r.resolved, r.context, served=r.served, speculative=r.speculative, coef=coef)
        value = p.tokens_per_s if p.tokens_per_s is not None else (p.low + p.high) / 2
        errs.append(abs(value / r.tokens_per_s - 1))
        by_context.setdefault("up to 4,096 tokens" if r.context <= 4096 else "past 4,096 tokens", []).append(errs[-1])
        print(f"| {r.model} | {r.context:,} | {r.tokens_per_s:.1f} | {value:.1f} | {value / r.tokens_per_s - 1:+.0%} "
              f"| {p.basis} |")
    print(f"\n{len(errs)} rows: p50 {F.pct(errs, 0.5):.0%}, p95 {F.pct(errs, 0.95):.0%}")
    for band, e in sorted(by_context.items(), reverse=True):
        print(f"{band}: {len(e)} rows, p50 {F.pct(e, 0.5):.0%}, p95 {F.pct(e, 0.95):.0%}")
    print(f"KV efficiencies the held-out fit found: {len(coef.kv_efficiency)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
