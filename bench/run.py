"""Benchmark, not a test: the tool at store scale (10, 100, 1000 apps).

For each size it writes a synthetic catalog (the embedded catalog's models, stacks and flag tables, with N apps
varied from the embedded ones: names, contexts, titles), then times whole `catalog` processes, median of
--runs runs after one warm-up: `catalog --help`, `render`, `check --no-lint`, `check` (Helm lint + strict
Kubernetes schemas + Olares rules), `bump --check`; and the peak RSS of any of them. In the same run it times
the Helm engine's own lint + render of the same charts, so our lint overhead is a ratio, not an absolute.

    .venv/bin/python bench/run.py [--apps 10 100 1000] [--runs 5] [--json] [--against TREE]

--against TREE --instructions counts instructions instead of timing (valgrind's callgrind, one counted process
per tree and command after an uncounted warm-up): a count does not move with the machine's load, so two trees
compare on a busy machine.

--against TREE times another checkout side by side in the same run: TREE is a folder holding the tool at another
commit with its own virtualenv (`git worktree add --detach ../start a4a91fd && cd ../start && python3 -m venv .venv
&& .venv/bin/pip install -e .`). Each tree runs its own code on a catalog made the same way from its own embedded
catalog, the two trees' runs of a command alternate (so a slower minute of the machine falls on both), and
`--help`, `render`, `check --no-lint` and `check --no-lint --no-drift` (`check_nodrift`: the like-for-like
figure against a tree whose check has no render drift) are reported for both with this tree's time over the other's.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parent.parent
CATALOG = REPO / "catalog"
CATALOG_BIN = [sys.executable, "-m", "generator.cli"]
CONTEXTS = (16384, 32768, 65536, 131072)


def synthetic_catalog(root: Path, n: int, source: Path = CATALOG) -> Path:
    """A catalog of `n` apps derived from the embedded ones of `source` (deprecated/removed bases excluded)."""
    cat = root / "catalog"
    for kind in ("devices", "models", "stacks", "genesis", "flags", "chat_templates"):
        if (source / kind).is_dir():
            shutil.copytree(source / kind, cat / kind)
    (cat / "apps").mkdir(parents=True)
    yaml = YAML(typ="rt")
    bases = []
    for path in sorted((source / "apps").glob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"))
        if data.get("status", "active") == "active":
            bases.append(data)
    width = len(str(n))
    for i in range(n):
        data = copy.deepcopy(bases[i % len(bases)])
        name = f"{str(data['name'])[:29 - width]}{i:0{width}d}"
        data["name"] = name
        data["title"] = f"{str(data['title'])[:22]} #{i}"
        data["context_length"] = CONTEXTS[i % len(CONTEXTS)]
        data.pop("benchmarks", None)
        with (cat / "apps" / f"{name}.yaml").open("w", encoding="utf-8") as fh:
            yaml.dump(data, fh)
    return cat


def run(args: list[str], cwd: Path) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak RSS (KiB) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss


def median_of(args: list[str], cwd: Path, runs: int, peaks: list[int], ok: tuple[int, ...] = (0,)) -> float:
    """Median wall seconds of `runs` runs after a warm-up; a run that exits outside `ok` stops the benchmark (a
    command that fails early would time nothing)."""
    run(args, cwd)  # warm-up (page cache, .pyc)
    times = []
    for _ in range(runs):
        seconds, code, rss = run(args, cwd)
        if code not in ok:
            raise SystemExit(f"bench: {' '.join(args)} exited {code}")
        times.append(seconds)
        peaks.append(rss)
    return statistics.median(times)


HELM_SCRIPT = """
import sys, time, pathlib, tempfile
sys.path.insert(0, {repo!r})
from generator.lint.values import olares_values  # the same placeholder values our lint passes
from generator.yamlio.yamlout import load
import helm_python as helm
charts = sorted(p for p in pathlib.Path(sys.argv[1]).iterdir() if p.is_dir())
for chart in charts:
    manifest = load((chart / "OlaresManifest.yaml").read_text())
    values = olares_values(chart.name, manifest, load((chart / "values.yaml").read_text()))
    helm.lint(str(chart), values=values, strict=True, kube_version="v1.30.0")
    with helm.Chart.load(str(chart)) as ch:
        ch.render(values=values, name=chart.name, namespace=chart.name + "-ns")
"""


def helm_own(charts: Path, runs: int, peaks: list[int]) -> float:
    script = HELM_SCRIPT.format(repo=str(REPO))
    return median_of([sys.executable, "-c", script, str(charts)], REPO, runs, peaks)


def measure(n: int, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-{n}-") as tmp:
        root = Path(tmp)
        cat = synthetic_catalog(root, n)
        out = root / "charts"
        common = ["--catalog", str(cat)]
        peaks: list[int] = []
        help_s = median_of(CATALOG_BIN + ["--help"], REPO, runs, peaks)
        render_s = median_of(CATALOG_BIN + ["render", *common, "--out", str(out)], REPO, runs, peaks)
        subprocess.run(CATALOG_BIN + ["bump", "--record", "--force", *common], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        check_s = median_of(CATALOG_BIN + ["check", *common, "--no-lint"], REPO, runs, peaks, ok=(0, 1))
        lint_s = median_of(CATALOG_BIN + ["check", *common], REPO, runs, peaks, ok=(0, 1))
        bump_s = median_of(CATALOG_BIN + ["bump", "--check", *common], REPO, runs, peaks)
        helm_s = helm_own(out, runs, [])
    per = lambda s: round(1000 * s / n, 3)  # noqa: E731
    return {"apps": n, "help_s": round(help_s, 3), "render_ms_per_app": per(render_s),
            "check_ms_per_app": per(check_s), "check_lint_ms_per_app": per(lint_s),
            "bump_check_ms_per_app": per(bump_s), "helm_ms_per_app": per(helm_s),
            "lint_overhead_ratio": round(lint_s / helm_s, 2) if helm_s else None,
            "peak_rss_mb": round(max(peaks) / 1024, 1)}


def compiled(tree: Path = REPO, python: str = sys.executable) -> None:
    """Byte-compile the tool first: an installed wheel has its .pyc files (pip compiles at install), while a
    clone run with PYTHONDONTWRITEBYTECODE=1 (as on the team's machines) would time the compiler on every start.
    The templates compiled ahead (templates/compiled/, where the tree has them) are Python modules too."""
    folders = [tree / "generator"] + ([tree / "templates" / "compiled"] if (tree / "templates" / "compiled").is_dir()
                                      else [])
    subprocess.run([python, "-m", "compileall", "-q", *map(str, folders)], check=True, stdout=subprocess.DEVNULL)


COMMANDS = ("help", "render", "check", "check_nodrift")


def _drifts(tree: Path) -> bool:
    """Whether the tree's `catalog check` has render drift (and so `--no-drift`); a4a91fd's has neither."""
    return "--no-drift" in (tree / "generator" / "cli" / "check.py").read_text(encoding="utf-8")


def _args(command: str, cat: Path, out: Path, tree: Path = REPO) -> list[str]:
    """`check_nodrift` is the like-for-like check: `--no-drift` where the tree's check renders every chart to
    compare it with charts/, plain `check --no-lint` where it does not."""
    nodrift = ["--no-drift"] if command == "check_nodrift" and _drifts(tree) else []
    return {"help": ["--help"], "render": ["render", "--catalog", str(cat), "--out", str(out)],
            "check": ["check", "--catalog", str(cat), "--no-lint"],
            "check_nodrift": ["check", "--catalog", str(cat), "--no-lint", *nodrift]}[command]


def instructions(cmd: list[str], cwd: Path, tmp: Path) -> int:
    """Instructions one whole process executes (valgrind --tool=callgrind's "Collected" total)."""
    out = tmp / "callgrind.out"
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], cwd=cwd,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench: {' '.join(cmd[:4])} under valgrind exited {proc.returncode}: {proc.stderr[-400:]}")
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1].strip())
    raise SystemExit("bench: valgrind printed no instruction count")


def _trees(root: Path, n: int, other: Path) -> dict[str, tuple[Path, list[str], Path]]:
    """(tree, its CLI, its synthetic catalog of `n` apps made from its own embedded catalog) for this tree and
    `other` (its own .venv)."""
    python = str(other / ".venv" / "bin" / "python")
    return {"this": (REPO, CATALOG_BIN, synthetic_catalog(root / "this", n)),
            "other": (other, [python, "-m", "generator.cli"], synthetic_catalog(root / "other", n, other / "catalog"))}


def counted_side_by_side(n: int, other: Path) -> dict:
    """`--help`, `render` and `check --no-lint` of this tree and of `other`, counted in instructions."""
    with tempfile.TemporaryDirectory(prefix=f"bench-count-{n}-") as tmp:
        root = Path(tmp)
        trees = _trees(root, n, other)
        result: dict = {"apps": n}
        for name in COMMANDS:
            counts = {}
            for label, (tree, cli, cat) in trees.items():
                args = cli + _args(name, cat, root / label / "charts", tree)
                run(args, tree)  # warm: flag-table cache, charts written
                counts[label] = instructions(args, tree, root)
            result[f"{name}_instructions"] = counts["this"]
            result[f"{name}_other_instructions"] = counts["other"]
            result[f"{name}_ratio"] = round(counts["this"] / counts["other"], 3)
    return result


def side_by_side(n: int, runs: int, other: Path) -> dict:
    """`--help`, `render` and `check --no-lint` of this tree and of `other` (its own .venv and catalog), the two
    trees' runs alternating; medians, and this tree's over the other's."""
    with tempfile.TemporaryDirectory(prefix=f"bench-ab-{n}-") as tmp:
        root = Path(tmp)
        trees = _trees(root, n, other)
        result: dict = {"apps": n}
        for name in COMMANDS:
            times: dict[str, list[float]] = {"this": [], "other": []}
            for label, (tree, cli, cat) in trees.items():
                run(cli + _args(name, cat, root / label / "charts", tree), tree)  # warm-up: page cache, flag cache
            for _ in range(runs):
                for label, (tree, cli, cat) in trees.items():
                    seconds, code, _ = run(cli + _args(name, cat, root / label / "charts", tree), tree)
                    if code not in (0, 1):  # check exits 1 on findings, the same for both trees
                        raise SystemExit(f"bench: {label} tree: {name} exited {code}")
                    times[label].append(seconds)
            this, theirs = statistics.median(times["this"]), statistics.median(times["other"])
            result[f"{name}_s"] = round(this, 3)
            result[f"{name}_other_s"] = round(theirs, 3)
            result[f"{name}_ratio"] = round(this / theirs, 3)
    return result


def _table(rows: list[dict], counted: bool) -> str:
    """The side-by-side rows as a table: seconds, or millions of instructions."""
    unit = "M" if counted else "s"
    lines = [f"{'apps':>5} {'command':13} {'this ' + unit:>10} {'other ' + unit:>10} {'ratio':>6}"]
    for row in rows:
        for name in COMMANDS:
            if counted:
                this, theirs = row[name + "_instructions"] / 1e6, row[name + "_other_instructions"] / 1e6
                lines.append(f"{row['apps']:>5} {name:13} {this:>10,.0f} {theirs:>10,.0f} {row[name + '_ratio']:>6.3f}")
            else:
                lines.append(f"{row['apps']:>5} {name:13} {row[name + '_s']:>10.3f} {row[name + '_other_s']:>10.3f} "
                             f"{row[name + '_ratio']:>6.3f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description="catalog at store scale")
    parser.add_argument("--apps", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="a checkout of another commit with its own .venv, timed side by side")
    parser.add_argument("--instructions", action="store_true",
                        help="with --against: count instructions (valgrind) instead of timing")
    args = parser.parse_args()
    compiled()
    if args.against is not None:
        other = args.against.resolve()
        if not (other / ".venv" / "bin" / "python").is_file() or not (other / "generator").is_dir():
            raise SystemExit(f"bench: {other} is not a checkout with its own .venv (see this file's docstring)")
        compiled(other, str(other / ".venv" / "bin" / "python"))
        rows = ([counted_side_by_side(n, other) for n in args.apps] if args.instructions
                else [side_by_side(n, args.runs, other) for n in args.apps])
        print(json.dumps(rows, indent=2) if args.json else _table(rows, args.instructions))
        return 0
    results = []
    for n in args.apps:
        result = measure(n, args.runs)
        results.append(result)
        if not args.json:
            print(" ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
