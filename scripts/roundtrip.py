#!/usr/bin/env python3
"""Re-import a store's committed charts into a fresh store and say what comes back (issue 42, docs/import.md
"This tool's own charts").

    python scripts/roundtrip.py [--charts DIR] [--catalog DIR] [--keep DIR] [--json]

Through the CLI, as a store owner would: `catalog init STORE --owner roundtrip` (a fresh store; its example app is
one of the embedded ones, so the import runs with `--update`), `catalog import CHARTS/* --update`, then `catalog
render` and `catalog check` in the fresh store, and a byte comparison of every re-rendered chart with the one
imported (what `diff -r` does). Then each imported app against the source catalog's (default: the embedded
catalog/ and charts/ of this checkout): every App field but `status` and `unmapped` must be equal. Prints one line
per app that differs and a summary, `N of M charts identical, check passes|FAILS, K apps differ`; exits 0 when all
charts are identical, `check` passes and no app differs, 1 otherwise, 2 on a usage problem.

Slow (one Helm render per chart, twice, and a whole `check`): a minute or two for the embedded catalog's 34
charts. tests/test_embedded_catalog.py::test_every_shipped_chart_reimports_into_a_fresh_store asserts the same in
the test suite, in process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from generator.catalog import load_catalog  # noqa: E402
from generator.chart.writer import read_tree  # noqa: E402
from generator.cli import main as catalog  # noqa: E402
from generator.importer.result import APP_KEYS  # noqa: E402


def _quiet(argv: list[str]) -> tuple[int, str]:
    """`catalog ARGV`, its stdout and stderr captured: (exit code, output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = catalog(argv)
    return code, out.getvalue()


@dataclass
class Result:
    charts: int = 0
    identical: int = 0
    not_identical: list[str] = field(default_factory=list)
    steps: dict[str, int] = field(default_factory=dict)  # CLI step -> exit code
    check_errors: list[str] = field(default_factory=list)
    apps_differ: dict[str, list[str]] = field(default_factory=dict)  # app -> fields that differ
    missing: list[str] = field(default_factory=list)  # charts whose app did not come back

    @property
    def ok(self) -> bool:
        return (self.identical == self.charts and not self.check_errors and not self.apps_differ
                and not self.missing and all(code == 0 for code in self.steps.values()))


def roundtrip(charts: Path, source: Path, store: Path) -> Result:
    names = sorted(p.name for p in charts.iterdir() if p.is_dir() and (p / "Chart.yaml").is_file())
    result = Result(charts=len(names))
    result.steps["init"], said = _quiet(["init", str(store), "--owner", "roundtrip"])
    if result.steps["init"] != 0:
        raise SystemExit(f"catalog init failed:\n{said}")
    fresh = store / "catalog"
    result.steps["import"], _ = _quiet(["import", *(str(charts / n) for n in names), "--catalog", str(fresh),
                                        "--update"])
    result.steps["render"], _ = _quiet(["render", "--catalog", str(fresh)])
    result.steps["check"], checked = _quiet(["check", "--catalog", str(fresh), "--no-lint", "--json"])
    try:
        report = json.loads(checked)
        result.check_errors = [f"{a['app']}: {f['rule']} {f['message']}" for a in report["apps"]
                               for f in a["findings"] if f["severity"] == "error"]
    except ValueError:
        result.check_errors = [checked.strip()[-2000:]]
    same = [n for n in names if (store / "charts" / n).is_dir()
            and read_tree(store / "charts" / n) == read_tree(charts / n)]
    result.identical, result.not_identical = len(same), [n for n in names if n not in same]
    want, got = load_catalog(source), load_catalog(fresh)
    result.missing = [n for n in names if n not in got.apps]
    for name in names:
        if name in want.apps and name in got.apps:
            keys = [k for k in APP_KEYS if k not in ("status", "unmapped")
                    and getattr(want.apps[name].app, k) != getattr(got.apps[name].app, k)]
            if keys:
                result.apps_differ[name] = keys
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--charts", type=Path, default=REPO / "charts", help="the charts to re-import")
    parser.add_argument("--catalog", type=Path, default=REPO / "catalog", help="the catalog that rendered them")
    parser.add_argument("--keep", type=Path, help="make the fresh store here (a new folder) and keep it")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if not args.charts.is_dir() or not args.catalog.is_dir():
        parser.error("--charts and --catalog must be folders")
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep {args.keep}: exists; name a new folder")
    with tempfile.TemporaryDirectory(prefix="catalog-roundtrip-") as tmp:
        result = roundtrip(args.charts.resolve(), args.catalog.resolve(), args.keep or Path(tmp) / "store")
    if args.json:
        print(json.dumps(asdict(result) | {"ok": result.ok}, indent=2))
    else:
        for name in result.not_identical:
            print(f"chart differs  {name}")
        for name, keys in result.apps_differ.items():
            print(f"app differs    {name}: {', '.join(keys)}")
        for line in result.check_errors:
            print(f"check error    {line}")
        passes = not result.check_errors and result.steps.get("check") == 0
        print(f"{result.identical} of {result.charts} charts identical, check {'passes' if passes else 'FAILS'}, "
              f"{len(result.apps_differ)} apps differ")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
