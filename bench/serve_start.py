"""Benchmark, not a test: how long `catalog serve` takes from its start to its first answer on /health.

For the embedded catalog (a clone of this repository: its charts/ with their git history, from which older released
versions are served) and for synthetic catalogs of N apps
(bench/run.py `synthetic_catalog`, rendered and recorded with `catalog bump --record` first, not timed), each
run starts `catalog serve` on a free loopback port in a subprocess (killed by PID at the end of the run), polls
GET /health every 20 ms and takes the time of its first answer. Medians over the runs.

    .venv/bin/python bench/serve_start.py [--apps 1000] [--runs 3] [--json] [--against TREE]

`--against TREE` starts another checkout's `catalog serve` (TREE/.venv/bin/python) on the same catalogs, the two
trees' runs alternating, and adds its medians and the ratio.

Bounded: each run waits at most 300 s for the first answer; only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CATALOG, CATALOG_BIN, synthetic_catalog  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
WAIT_S = 300.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def first_answer(catalog: Path, python: str = sys.executable) -> tuple[float, int]:
    """Seconds from the start of `catalog serve` to its first /health answer, and the apps it serves."""
    port = free_port()
    start = time.monotonic()
    proc = subprocess.Popen([python, "-m", "generator.cli", "serve", "--catalog", str(catalog), "--port", str(port),
                             "--no-access-log"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=Path(tempfile.gettempdir()))  # `python -m` puts its folder first on sys.path
    try:
        while time.monotonic() - start < WAIT_S:
            if proc.poll() is not None:
                raise SystemExit(f"catalog serve exited with {proc.returncode} on {catalog}")
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5.0)
                return time.monotonic() - start, int(answer.json()["apps"])
            except httpx.TransportError:
                time.sleep(0.02)
        raise SystemExit(f"no /health answer within {WAIT_S:.0f} s")
    finally:
        proc.kill()
        proc.wait()


def embedded(root: Path, repo: Path = REPO) -> Path:
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(root)], check=True)
    return root / "catalog"


def synthetic(root: Path, n: int) -> Path:
    cat = synthetic_catalog(root, n)
    shutil.copy(CATALOG / "market.yaml", cat / "market.yaml")
    (cat / "releases.yaml").write_text("apps: {}\n", encoding="utf-8")
    for args in (["render"], ["bump", "--record", "--force"]):  # seeding: the titles hold "#"
        subprocess.run([*CATALOG_BIN, *args, "--catalog", str(cat)], check=True, capture_output=True, cwd=root)
    return cat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, nargs="*", default=[1000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--against", type=Path, metavar="TREE", help="another checkout with its own .venv")
    args = parser.parse_args()
    pythons = {"this": sys.executable}
    if args.against is not None:
        pythons["other"] = str(args.against.resolve() / ".venv" / "bin" / "python")
    rows = []
    with tempfile.TemporaryDirectory(prefix="catalog-serve-start-") as tmp:
        # each tree serves its own embedded catalog (a clone of its checkout); the synthetic ones are shared
        cases = [("embedded", {name: embedded(Path(tmp) / f"embedded-{name}", Path(py).parents[2] if name == "other"
                                              else REPO) for name, py in pythons.items()})]
        cases += [(f"{n} apps", dict.fromkeys(pythons, synthetic(Path(tmp) / f"n{n}", n))) for n in args.apps]
        for label, cats in cases:
            times: dict[str, list[float]] = {name: [] for name in pythons}
            apps = 0
            for _ in range(args.runs):
                for name, python in pythons.items():  # the trees alternate
                    seconds, served = first_answer(cats[name], python)
                    times[name].append(seconds)
                    apps = served if name == "this" else apps
            row: dict[str, object] = {"catalog": label, "apps": apps}
            for name, got in times.items():
                row[f"{name}_median_s"] = round(statistics.median(got), 2)
                row[f"{name}_runs"] = [round(t, 2) for t in got]
            if "other" in times:
                row["ratio"] = round(statistics.median(times["this"]) / statistics.median(times["other"]), 3)
            rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        other = args.against is not None
        print("| catalog | apps served | first /health answer (median) | runs |" +
              (" other tree | its runs | ratio |" if other else "") + "\n|---|---:|---:|---|" +
              ("---:|---|---:|" if other else ""))
        for row in rows:
            line = (f"| {row['catalog']} | {row['apps']} | {row['this_median_s']:.2f} s | "
                    f"{', '.join(f'{t:.2f}' for t in row['this_runs'])} |")  # type: ignore[attr-defined]
            if other:
                line += (f" {row['other_median_s']:.2f} s | "
                         f"{', '.join(f'{t:.2f}' for t in row['other_runs'])} | {row['ratio']:.3f} |")  # type: ignore[attr-defined]
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
