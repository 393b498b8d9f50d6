"""`catalog check` includes render drift (issue 42): a chart in charts/ that differs from what `catalog render`
writes is an error naming the file (DRIFT001), a chart folder whose app is gone too (DRIFT002); `--no-drift` skips
it; `catalog publish` refuses to ship over a drifted chart. Real files, the real render."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support.bump import run_cli
from support.catalogs import edit_app

APP = "gemma4e2bone"


def _check(capsys, cat: Path, *extra: str) -> tuple[int, list[dict], str]:
    code, out, err = run_cli(capsys, "check", "--catalog", cat, "--no-lint", "--json", *extra)
    return code, [f for a in json.loads(out)["apps"] for f in a["findings"] if f["rule"].startswith("DRIFT")], err


def test_a_hand_edited_chart_fails_check_naming_the_file(capsys, rendered_copy: Path):
    code, drift, _ = _check(capsys, rendered_copy, APP)
    assert code == 0 and drift == []
    values = rendered_copy.parent / "charts" / APP / "values.yaml"
    values.write_text(values.read_text() + "extra: hand-edited\n")
    code, drift, _ = _check(capsys, rendered_copy, APP)
    assert code == 1 and [(f["rule"], f["app"]) for f in drift] == [("DRIFT001", APP)]
    assert drift[0]["file"].endswith(f"charts/{APP}/values.yaml")
    assert f"charts/{APP}/values.yaml differs from what `catalog render` writes" in drift[0]["message"]
    assert "catalog render" in drift[0]["fix"]
    code, drift, _ = _check(capsys, rendered_copy, APP, "--no-drift")
    assert code == 0 and drift == []
    code, drift, _ = _check(capsys, rendered_copy, "gemma426ba4bone")  # only the named apps' charts
    assert code == 0 and drift == []
    assert run_cli(capsys, "render", "--catalog", rendered_copy)[0] == 0
    assert _check(capsys, rendered_copy, APP)[:2] == (0, [])
    assert _check(capsys, rendered_copy)[1] == []  # every app: no drift after a render


def test_an_app_edited_without_render_and_a_left_over_chart_fail_check(capsys, rendered_copy: Path):
    edit_app(rendered_copy, APP, context_length=65536)
    charts = rendered_copy.parent / "charts"
    shutil.copytree(charts / APP, charts / "goneapp")
    code, drift, _ = _check(capsys, rendered_copy)
    assert code == 1
    found = {(f["rule"], f["app"]) for f in drift}
    assert found == {("DRIFT001", APP), ("DRIFT002", "goneapp")}, drift
    shutil.rmtree(charts / APP)
    code, drift, _ = _check(capsys, rendered_copy, APP)
    assert code == 1 and f"charts/{APP}/ is missing" in drift[0]["message"]


def test_without_charts_drift_is_said_not_checked(capsys, catalog_copy: Path):
    code, out, err = run_cli(capsys, "check", "--catalog", catalog_copy, "--no-lint", APP)
    assert "render drift not checked" in err


def test_publish_refuses_a_drifted_chart(capsys, recorded: Path, tmp_path: Path):
    values = recorded.parent / "charts" / APP / "values.yaml"
    values.write_text(values.read_text() + "extra: hand-edited\n")
    repo = tmp_path / "helm-repo"
    code, out, err = run_cli(capsys, "publish", "--to", f"dir:{repo}", "--catalog", recorded, "--json", APP)
    assert code == 1 and [(r["app"], r["action"]) for r in json.loads(out)] == [(APP, "refused")]
    assert "DRIFT001" in err and f"charts/{APP}/values.yaml" in err
    assert not repo.exists() or not any(repo.iterdir())
