"""Score a prediction written in advance (bench/speed/h200-predicted.md, from predict_device.py) against the first
sweep on that card: the committed table's figures, not a rerun of the model, so a later refit cannot move them.

    .venv/bin/python bench/speed/score_predicted.py bench/speed/h200-predicted.md bench/speed/h200

Reads the run's bench.jsonl (llama-bench, with plan.json: file -> model) and served.jsonl (llama-server), means the
measurements of one (model, path, context), and prints the row-by-row table and p50/p95 of |predicted/measured - 1|
for both hypotheses of the table (the device file as written; as an unmeasured architecture), per half.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit import pct  # noqa: E402


def predicted(table: Path) -> dict[tuple[str, str, int], tuple[str, float, float, str]]:
    """(model, path, context) -> (half, predicted t/s, as an unmeasured architecture t/s, basis)."""
    out = {}
    for line in table.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 10 or not cells[3].replace(",", "").isdigit():
            continue
        model, half, path, context, _h100, pred, _ratio, basis, alt, _alt_ratio = cells
        out[(model, path, int(context.replace(",", "")))] = (half, float(pred), float(alt), basis)
    return out


def measured(run: Path) -> dict[tuple[str, str, int], list[float]]:
    model = {p["gguf"]: p["model"] for name in ("plan.json", "served-plan.json") if (run / name).exists()
             for p in json.loads((run / name).read_text())}
    out: dict[tuple[str, str, int], list[float]] = {}
    bench = run / "bench.jsonl"
    for line in bench.read_text().splitlines() if bench.exists() else []:
        b = json.loads(line)
        out.setdefault((model[Path(b["model_filename"]).name], "llama-bench", int(b["n_depth"])), []).append(
            float(b["avg_ts"]))
    served = run / "served.jsonl"
    for line in served.read_text().splitlines() if served.exists() else []:
        s = json.loads(line)
        t = s.get("timings")
        if t:
            context = t["prompt_n"] + t["predicted_n"] // 2
            out.setdefault((model[s["gguf"]], "llama-server", context), []).append(float(t["predicted_per_second"]))
    return out


def main(table: str, run: str) -> int:
    pred = predicted(Path(table))
    seen = measured(Path(run))
    errs: dict[str, tuple[list[float], list[float]]] = {}
    print("| model | half | path | context | measured t/s | predicted t/s | error | as an unmeasured architecture "
          "t/s | error | basis |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, values in sorted(seen.items()):
        if key not in pred:
            print(f"| {key[0]} | - | {key[1]} | {key[2]:,} | {mean(values):.1f} | not predicted in advance | | | | |")
            continue
        half, p, alt, basis = pred[key]
        m = mean(values)
        for group in (half, "all"):
            e = errs.setdefault(group, ([], []))
            e[0].append(abs(p / m - 1))
            e[1].append(abs(alt / m - 1))
        print(f"| {key[0]} | {half} | {key[1]} | {key[2]:,} | {m:.1f} | {p:.1f} | {p / m - 1:+.0%} | {alt:.1f} | "
              f"{alt / m - 1:+.0%} | {basis} |")
    print("\n| rows | n | as written: p50 | p95 | as an unmeasured architecture: p50 | p95 |")
    print("|---|---|---|---|---|---|")
    for group, (a, b) in sorted(errs.items()):
        print(f"| {group} | {len(a)} | {pct(a, 0.5):.0%} | {pct(a, 0.95):.0%} | {pct(b, 0.5):.0%} | "
              f"{pct(b, 0.95):.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
