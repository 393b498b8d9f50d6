"""The health of the embedded catalog (catalog/ and the committed charts/): the one module that reads them.

Every other test works on fixtures (tests/fixtures/, docs/testing.md), so these assertions are about the
catalog's data, not the tool's logic: it loads; every app renders, and its chart lints clean; `catalog check`
passes with the chart lint and only explained warnings; every app explains and gets a memory-fit verdict; the
committed charts/ are a fresh render and lint clean; releases.yaml records every app's current content; no FLAG
error; the generated flag tables under catalog/flags/ are what their generators write from the recorded inputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.chart.pipeline import render_apps, rendered_apps
from generator.cli import main
from generator.engines import engine_for
from generator.engines.settings import settings_for
from generator.fit.estimate import estimate
from generator.lint.run import lint_chart
from generator.rules import context, run_rules

from support.catalogs import EMBEDDED, EMBEDDED_CHARTS, REPO
from support.checks import findings
from support.flags import SCRIPTS, comparable

pytestmark = pytest.mark.embedded_catalog
FLAGS = EMBEDDED / "flags"


@pytest.fixture(scope="module")
def cat():
    return load_catalog(EMBEDDED)


@pytest.fixture(scope="module")
def charts(cat) -> dict[str, dict[str, str]]:
    return render_apps(rendered_apps(cat))


def test_it_loads_and_has_apps(cat):
    assert cat.apps and cat.select()
    assert all(r.app.name in cat.apps for r in cat.select())


def test_every_app_renders_and_its_chart_lints_clean(cat, charts):
    assert set(charts) == {r.app.name for r in rendered_apps(cat)}
    for name, tree in charts.items():
        assert lint_chart(name, tree) == [], name


def test_committed_charts_are_a_fresh_render(capsys):
    assert main(["render", "--check"]) == 0, capsys.readouterr().out


def test_committed_charts_lint_clean():
    for folder in sorted(EMBEDDED_CHARTS.iterdir()):
        files = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
                 for p in folder.rglob("*") if p.is_file()}
        assert lint_chart(folder.name, files) == [], folder.name


def test_releases_record_every_apps_current_content(capsys):
    code = main(["bump", "--check"])
    assert code == 0, capsys.readouterr().err


def test_check_passes_with_lint_and_only_explained_warnings(cat, capsys):
    """Every app checked with rules and the Helm/Kubernetes/Olares lint; no error. Active apps warn only of a
    TIGHT memory fit (docs/fit.md) or a flag; deprecated apps say why (STA001)."""
    code = main(["check", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [a["app"] for a in data["apps"]] == sorted(r.app.name for r in cat.select())
    errors = [(f["app"], f["rule"], f["message"]) for f in findings(data) if f["severity"] == "error"]
    assert errors == [] and code == 0 and data["errors"] == 0
    active = {a["app"] for a in data["apps"] if a["status"] == "active"}
    for f in findings(data):
        if f["app"] in active:
            assert (f["rule"] == "FIT001" and f["message"].startswith("TIGHT")) or f["rule"].startswith("FLAG"), f
        else:
            assert f["rule"] in ("STA001", "ENG013") or f["rule"].startswith("FLAG"), f
    deprecated = {a["app"] for a in data["apps"] if a["status"] == "deprecated"}
    assert deprecated == {f["app"] for f in findings(data, "STA001")}


def test_no_flag_errors(cat):
    errors = [f for r in cat.apps.values() for f in run_rules(context(r, cat))
              if f.rule.startswith("FLAG") and f.severity == "error"]
    assert errors == [], "\n".join(map(str, errors))


def test_every_app_explains_with_a_breakdown(cat, capsys):
    for r in cat.select():
        assert main(["explain", r.app.name, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        fit = data["fit"]
        assert fit["verdict"] in ("FIT", "TIGHT", "FAIL") and fit["parts"] and fit["pools"]
        assert any(p["component"] == "weights" for p in fit["parts"])
        assert all(arg["origin"] for arg in data["args"])
        assert any(e["name"] == "CUDA_DEVICE_MEMORY_LIMIT_0" and e["origin"] == "gpu_memory_mib" for e in data["env"])


def _fit(r):
    engine = engine_for(r)
    return estimate(r, engine, settings_for(r, engine))


def test_every_app_gets_a_fit_verdict_with_a_breakdown(cat):
    for r in cat.select():
        result = _fit(r)
        assert result.verdict in ("FIT", "TIGHT", "FAIL")
        rows = result.breakdown()
        assert rows and all(isinstance(mib, float | int) for _, mib, _ in rows)
        assert result.part("weights").mib > 1000
        assert any(c.startswith("KV full attention") for c, _, _ in rows)


def test_active_apps_fit(cat):
    verdicts = {r.app.name: _fit(r).verdict for r in cat.select() if r.app.status == "active"}
    assert all(v in ("FIT", "TIGHT") for v in verdicts.values()), verdicts


# -- catalog/flags/: the generated tables -------------------------------------------------------------

def test_committed_llamacpp_tables_match_their_recorded_help(tmp_path):
    regenerated = subprocess.run(["bash", str(SCRIPTS / "regenerate.sh"), "llamacpp-recorded"],
                                 capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
                                 env=dict(os.environ, FLAGS_OUT=str(tmp_path), PYTHON=sys.executable))
    assert regenerated.returncode == 0, regenerated.stderr[-3000:]
    written = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert written == ["atomic-mtp.yaml", "buun-dflash.yaml", "llamacpp-b8740.yaml", "llamacpp-master-ad27757.yaml",
                       "llamacpp-mtp.yaml"]
    for name in written:
        assert comparable(tmp_path / name) == comparable(FLAGS / name), f"catalog/flags/{name} is stale"


@pytest.mark.slow
def test_committed_vllm_table_matches_the_wheel(vllm_0_19_1: Path):
    assert comparable(vllm_0_19_1) == comparable(FLAGS / "vllm-0-19-1.yaml")
