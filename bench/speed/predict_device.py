"""What the fitted speed model predicts on a device file, for every configuration the lent H100 measured (the same
real-shape files, depths, llama-bench or llama-server), beside the H100's measurement: a prediction written down
before the device is measured.

    .venv/bin/python bench/speed/predict_device.py bench/speed/devices/h200-sxm.yaml > bench/speed/h200-predicted.md
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit as F  # noqa: E402


def main(device_file: str) -> int:
    device = F.load_device_file(Path(device_file))
    seen: dict[tuple[str, str, int, bool], list[float]] = {}
    first: dict[tuple[str, str, int, bool], F.Row] = {}
    for r in F.rows():
        if "H100" not in r.device_kind:
            continue
        key = (r.model, r.resolved.app.name, r.context, r.served)
        seen.setdefault(key, []).append(r.tokens_per_s)
        first.setdefault(key, r)
    # the second hypothesis: the same card as an architecture without a fit row (the fit across architectures)
    unmeasured = device.model_copy(update={"architecture": "unmeasured"})
    print(f"| model | half | path | context | H100 measured t/s (mean of runs) | {device.id} predicted t/s | ratio | "
          "basis | as an unmeasured architecture t/s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, r in first.items():
        moved = replace(r.resolved, device=device)
        p = F.predict(moved, r.context, served=r.served, speculative=False)
        value = p.tokens_per_s if p.tokens_per_s is not None else (p.low + p.high) / 2
        other = F.predict(replace(r.resolved, device=unmeasured), r.context, served=r.served, speculative=False)
        alt = other.tokens_per_s if other.tokens_per_s is not None else (other.low + other.high) / 2
        h100 = mean(seen[key])
        print(f"| {r.model} | {r.half} | {'llama-server' if r.served else 'llama-bench'} | {r.context:,} | "
              f"{h100:.1f} | {value:.1f} | {value / h100:.2f} | {p.basis} | {alt:.1f} | {alt / h100:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
