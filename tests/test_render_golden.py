"""Golden files: the small fixture catalog renders to exactly the committed trees under tests/golden/.

Whole-tree comparison per app: a missing, extra or changed file fails, and so does a golden folder
for an app the fixture no longer renders. After an intended change to the generator, refresh with

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_render_golden.py

and review the diff of tests/golden/ like any other code change (docs/testing.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from generator.cli import main
from generator.lint.run import lint_chart
from generator.chart.writer import diff_tree, read_tree

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "catalog_small"
GOLDEN = HERE / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("golden") / "charts"
    assert main(["render", "--catalog", str(FIXTURE), "--out", str(out)]) == 0
    if UPDATE:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        shutil.copytree(out, GOLDEN, ignore=shutil.ignore_patterns(".catalog-render"))
    return out


def test_fixture_catalog_shape():
    from generator.catalog import load_catalog

    cat = load_catalog(FIXTURE)
    assert list(cat.devices) == ["lab-4090"] and len(cat.models) == 2
    assert sorted(s.engine for s in cat.stacks.values()) == ["llamacpp", "vllm"]
    assert sorted(r.app.status for r in cat.apps.values()) == ["active", "active", "deprecated"]


def test_same_apps_as_golden(rendered):
    """The chart folders; render's own list of them (.catalog-render, hidden) is not a chart."""
    assert sorted(p.name for p in rendered.iterdir() if p.name != ".catalog-render") == sorted(
        p.name for p in GOLDEN.iterdir())
    assert (rendered / ".catalog-render").read_text(encoding="utf-8").splitlines()[2:] == sorted(
        p.name for p in GOLDEN.iterdir())


@pytest.mark.parametrize("app", sorted(p.stem for p in (FIXTURE / "apps").glob("*.yaml")))
def test_chart_matches_golden(rendered, app):
    diff = diff_tree(app, read_tree(GOLDEN / app), read_tree(rendered / app))
    assert not diff, "rendered chart differs from tests/golden (UPDATE_GOLDEN=1 to accept):\n" + "".join(diff)


@pytest.mark.parametrize("app", sorted(p.stem for p in (FIXTURE / "apps").glob("*.yaml")))
def test_golden_chart_lints_clean(app):
    assert lint_chart(app, read_tree(GOLDEN / app)) == []


def test_comparison_catches_missing_extra_and_changed_files(rendered):
    golden = read_tree(GOLDEN / "qwenlab")
    missing = {k: v for k, v in golden.items() if k != "values.yaml"}
    extra = dict(golden, **{"templates/extra.yaml": "kind: ConfigMap\n"})
    changed = dict(golden, **{"Chart.yaml": golden["Chart.yaml"].replace("1.0.0", "1.0.1")})
    for variant in (missing, extra, changed):
        assert diff_tree("qwenlab", golden, variant)
