"""scripts/fidelity.py (docs/fidelity.md): it compares the re-rendered chart with a market's chart and reports
exactly the differences, exiting 1 on one that neither the corrections table nor the known-differences table
lists, and marking each listed one as what its table says.

The "market" charts are built in tmp_path from the small fixture catalog's own render (tests/fixtures/
catalog_small, its golden charts under tests/golden/): one copy untouched, one with one argument changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from support.catalogs import REPO, SMALL

GOLDEN = REPO / "tests" / "golden"
SCRIPT = REPO / "scripts" / "fidelity.py"


def _market(tmp_path: Path, name: str) -> Path:
    market = tmp_path / name
    shutil.copytree(GOLDEN / "qwenlab", market / "qwenlab")
    return market


def _run(market: Path, corrections: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(market), "qwenlab", "--catalog", str(SMALL),
                           "--corrections", str(corrections), "--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=False)


def _no_corrections(tmp_path: Path) -> Path:
    doc = tmp_path / "fidelity.md"
    doc.write_text("# none\n\n## Deliberate corrections\n\n| app | facet | key | reason |\n|---|---|---|---|\n",
                   encoding="utf-8")
    return doc


def test_an_identical_chart_has_no_difference(tmp_path):
    done = _run(_market(tmp_path, "same"), _no_corrections(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_changed_argument_is_the_one_difference_reported_and_fails(tmp_path):
    market = _market(tmp_path, "changed")
    values = market / "qwenlab" / "values.yaml"
    text = values.read_text(encoding="utf-8")
    assert "  - '65536'\n" in text
    values.write_text(text.replace("  - '65536'\n", "  - '32768'\n", 1), encoding="utf-8")

    done = _run(market, _no_corrections(tmp_path))
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout) == [{"app": "qwenlab", "facet": "args", "key": "--ctx-size", "theirs": "32768",
                                        "ours": "65536", "deliberate": None, "known": None}]

    listed = tmp_path / "listed.md"
    listed.write_text("## Deliberate corrections\n\n| app | facet | key | reason |\n|---|---|---|---|\n"
                      "| qwenlab | args | --ctx-size | a test reason |\n", encoding="utf-8")
    done = _run(market, listed)
    assert done.returncode == 0, done.stderr
    assert [(d["deliberate"], d["known"]) for d in json.loads(done.stdout)] == [("a test reason", None)]


def test_a_known_difference_passes_marked_known_and_beats_a_broad_correction(tmp_path):
    market = _market(tmp_path, "known")
    values = market / "qwenlab" / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("  - '65536'\n", "  - '32768'\n", 1),
                      encoding="utf-8")
    doc = tmp_path / "known.md"
    doc.write_text("## Deliberate corrections\n\n| app | facet | key | reason |\n|---|---|---|---|\n"
                   "| * | args | * | a broad correction |\n\n"
                   "## Known differences to fix\n\n| app | facet | key | what is wrong |\n|---|---|---|---|\n"
                   "| qwenlab | args | --ctx-size | the context is not the market's |\n\n"
                   "## Elsewhere\n\n| app | facet | key | reason |\n|---|---|---|---|\n"
                   "| qwenlab | args | --ctx-size | a row outside both tables counts for nothing |\n", encoding="utf-8")
    done = _run(market, doc)
    assert done.returncode == 0, done.stderr
    assert [(d["key"], d["deliberate"], d["known"]) for d in json.loads(done.stdout)] == [
        ("--ctx-size", None, "the context is not the market's")]

    text = subprocess.run([sys.executable, str(SCRIPT), str(market), "qwenlab", "--catalog", str(SMALL),
                           "--corrections", str(doc)], capture_output=True, text=True, cwd=REPO, timeout=300,
                          check=False)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].startswith("known      qwenlab args --ctx-size: market '32768' -> ours '65536'")
    assert text.stdout.splitlines()[-1] == "1 difference(s): 0 deliberate, 1 known to fix, 0 not listed in known.md"

    outside = tmp_path / "outside.md"
    outside.write_text(doc.read_text(encoding="utf-8").split("## Deliberate corrections")[0]
                       + "## Elsewhere\n\n| app | facet | key | reason |\n|---|---|---|---|\n"
                       "| qwenlab | args | --ctx-size | not a table the script reads |\n", encoding="utf-8")
    assert _run(market, outside).returncode == 1


def test_a_market_folder_the_catalog_renames_is_compared_with_the_renamed_app(tmp_path):
    """A market app whose name the catalog cannot take (over 30 characters) is found through --renamed and compared
    with the catalog's app: its one changed argument is reported under the catalog's name."""
    folder = "qwenlabmarketnamethatistoolong1"
    market = tmp_path / "renamed"
    shutil.copytree(GOLDEN / "qwenlab", market / folder)
    values = market / folder / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("  - '65536'\n", "  - '32768'\n", 1), encoding="utf-8")
    args = [sys.executable, str(SCRIPT), str(market), "--catalog", str(SMALL), "--corrections",
            str(_no_corrections(tmp_path)), "--json"]
    unmapped = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=300, check=False)
    assert unmapped.returncode == 0 and json.loads(unmapped.stdout) == []  # no app of that name: nothing compared
    done = subprocess.run([*args, "--renamed", f"{folder}=qwenlab"],
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    assert [(d["app"], d["key"], d["theirs"]) for d in json.loads(done.stdout)] == [("qwenlab", "--ctx-size", "32768")]


def test_renamed_takes_folder_equals_app(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--renamed", "qwenlab"],
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=False)
    assert done.returncode == 2 and "FOLDER=APP" in done.stderr
