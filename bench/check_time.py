"""Benchmark, not a test: wall time of `catalog check` on the embedded catalog, with and without the chart lint.

Each figure is the median of 5 runs of the real command in a fresh process (imports, catalog load, rules,
render, Helm engine and Kubernetes schemas included), as a user or CI would run it.

    .venv/bin/python bench/check_time.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_once(extra: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "generator.cli", "check", *extra], cwd=REPO,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=False)
    return time.perf_counter() - start, proc.returncode


def measure(label: str, extra: list[str], runs: int) -> None:
    times, codes = [], set()
    for _ in range(runs):
        seconds, code = run_once(extra)
        times.append(seconds)
        codes.add(code)
    print(f"{label:<22} median {statistics.median(times):6.2f} s   min {min(times):6.2f} s   max {max(times):6.2f} s"
          f"   ({runs} runs, exit {sorted(codes)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"catalog check on {REPO / 'catalog'} (python {sys.version.split()[0]})")
    measure("check --no-lint", ["--no-lint"], args.runs)
    measure("check (with lint)", [], args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
