"""Benchmark, not a test: how long `catalog serve` takes from its start to answering, and to serving its apps.

For the embedded catalog (a clone of this repository: its charts/ with their git history, from which older released
versions are served) and for synthetic catalogs of N apps
(bench/run.py `synthetic_catalog`, rendered and recorded with `catalog bump --record` first, not timed), each
run starts `catalog serve` on a free loopback port in a subprocess (killed by PID at the end of the run), polls
GET /health every 20 ms and takes three times:

- `answer`: the first /health answer, whatever it says;
- `served`: the first /health that reports the apps served (`apps` > 0, status `ok` or `starting`: the devices of
  the catalog's own format get the market), what issue 35's targets are judged on;
- `whole`: the first /health whose status is no longer `starting` (the git history's older versions and the other
  formats' charts made too).

Each run starts the server twice on an empty cache folder of its own (`CATALOG_CACHE_DIR`): `cold` is the first
start of a store, `warm` the second start of the unchanged store (the parsed charts read back from the cache).
Medians over the runs.

    .venv/bin/python bench/serve_start.py [--apps 1000] [--runs 3] [--json] [--against TREE]

`--against TREE` starts another checkout's `catalog serve` (TREE/.venv/bin/python) on the same catalogs, the two
trees' runs alternating, and adds its medians and the ratio (of `served`).

Bounded: each run waits at most 300 s for each time; only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import json
import os
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


TIMES = ("answer", "served", "whole")


def start_times(catalog: Path, cache: Path, python: str = sys.executable) -> tuple[dict[str, float], int]:
    """Seconds from the start of `catalog serve` to each of TIMES, and the apps it serves at `served`."""
    port = free_port()
    env = {**os.environ, "CATALOG_CACHE_DIR": str(cache)}
    start = time.monotonic()
    proc = subprocess.Popen([python, "-m", "generator.cli", "serve", "--catalog", str(catalog), "--port", str(port),
                             "--no-access-log"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=Path(tempfile.gettempdir()), env=env)  # `python -m` puts its folder first on sys.path
    got: dict[str, float] = {}
    apps = 0
    try:
        while time.monotonic() - start < WAIT_S:
            if proc.poll() is not None:
                raise SystemExit(f"catalog serve exited with {proc.returncode} on {catalog}")
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5.0).json()
            except httpx.TransportError:
                time.sleep(0.02)
                continue
            now = time.monotonic() - start
            got.setdefault("answer", now)
            if int(health["apps"]) > 0 and health["status"] in ("ok", "starting") and "served" not in got:
                got["served"], apps = now, int(health["apps"])
            if health["status"] != "starting":
                got.setdefault("served", now)  # degraded: counted when it stops starting (its apps are served)
                apps = apps or int(health["apps"])
                got["whole"] = now
                return got, apps
            time.sleep(0.02)
        raise SystemExit(f"/health still not past `starting` within {WAIT_S:.0f} s")
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


def measure(label: str, cats: dict[str, Path], pythons: dict[str, str], runs: int, tmp: Path) -> dict[str, object]:
    """One catalog's row: each tree's cold and warm starts, `runs` times, the trees alternating."""
    times: dict[str, dict[str, list[float]]] = {
        name: {f"{cache}_{t}": [] for cache in ("cold", "warm") for t in TIMES} for name in pythons}
    apps = 0
    for run in range(runs):
        for name, python in pythons.items():
            cache = tmp / f"cache-{name}-{label.replace(' ', '')}-{run}"  # empty: the cold start
            for state in ("cold", "warm"):
                got, served = start_times(cats[name], cache, python)
                for t in TIMES:
                    times[name][f"{state}_{t}"].append(got[t])
                apps = served if name == "this" else apps
    row: dict[str, object] = {"catalog": label, "apps": apps}
    for name, per in times.items():
        for key, got_s in per.items():
            row[f"{name}_{key}_median_s"] = round(statistics.median(got_s), 2)
            row[f"{name}_{key}_runs"] = [round(t, 2) for t in got_s]
    if "other" in times:
        for state in ("cold", "warm"):
            row[f"{state}_served_ratio"] = round(statistics.median(times["this"][f"{state}_served"]) /
                                                 statistics.median(times["other"][f"{state}_served"]), 3)
    return row


def table(rows: list[dict[str, object]], names: list[str]) -> str:
    other = "other" in names
    lines = ["| catalog | apps | tree | start | first answer | apps served | whole market | apps served: runs |"
             + (" apps served: ratio |" if other else ""),
             "|---|---:|---|---|---:|---:|---:|---|" + ("---:|" if other else "")]
    for row in rows:
        for name in names:
            for state in ("cold", "warm"):
                cells = " | ".join(f"{row[f'{name}_{state}_{t}_median_s']:.2f} s" for t in TIMES)
                runs = ", ".join(f"{t:.2f}" for t in row[f"{name}_{state}_served_runs"])  # type: ignore[attr-defined]
                line = f"| {row['catalog']} | {row['apps']} | {name} | {state} | {cells} | {runs} |"
                if other:
                    line += f" {row[f'{state}_served_ratio']:.3f} |" if name == "this" else " |"
                lines.append(line)
    return "\n".join(lines)


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
    with tempfile.TemporaryDirectory(prefix="catalog-serve-start-") as tmp:
        # each tree serves its own embedded catalog (a clone of its checkout); the synthetic ones are shared
        cases = [("embedded", {name: embedded(Path(tmp) / f"embedded-{name}", Path(py).parents[2] if name == "other"
                                              else REPO) for name, py in pythons.items()})]
        cases += [(f"{n} apps", dict.fromkeys(pythons, synthetic(Path(tmp) / f"n{n}", n))) for n in args.apps]
        rows = [measure(label, cats, pythons, args.runs, Path(tmp)) for label, cats in cases]
    print(json.dumps(rows, indent=2) if args.json else table(rows, list(pythons)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
