"""`catalog bump` and `catalog publish` refuse what `catalog check` fails (issue 24): the case of the issue, an
app whose description says 262K while its context is 131,072 (CON003), is neither bumped nor published; --force
takes it anyway and says so on stderr; the other apps of the run go on. Real CLI, real Helm folder target."""

from __future__ import annotations

import re
from pathlib import Path

from support.bump import run_cli

from generator.versions.releases import load_releases

APP = "gemma4e2bone"


def _claim(catalog: Path, text: str) -> None:
    path = catalog / "apps" / f"{APP}.yaml"
    path.write_text(re.sub(r"^description: .*$", f"description: {text}", path.read_text(), count=1, flags=re.M))


def test_bump_refuses_an_app_check_fails_and_force_says_so(capsys, recorded: Path):
    _claim(recorded, "Gemma 4 E2B — 262K context on Olares One")
    before = {p: p.read_bytes() for p in [recorded / "releases.yaml", recorded / "apps" / f"{APP}.yaml"]}
    code, out, err = run_cli(capsys, "bump", "--catalog", recorded)
    assert code == 1
    assert f"{APP}: refused: `catalog check {APP}` fails" in err and "CON003" in err and "262K" in err
    assert "pass --force to bump anyway" in err
    assert err.count(f"{APP}: refused") == 1  # the refusal said once
    assert "fails (above)" not in err  # issue 42: it was said again under the table
    assert {p: p.read_bytes() for p in before} == before  # nothing written for it
    code, out, err = run_cli(capsys, "bump", "--force", "--catalog", recorded)
    assert code == 0 and f"WARNING: --force: `catalog bump` goes on with {APP}" in err
    assert "are bumped anyway" in err or "is bumped anyway" in err
    assert load_releases(recorded).latest(APP).version == "1.0.3"


def test_publish_refuses_an_app_check_fails_and_publishes_the_others(capsys, recorded: Path, tmp_path: Path):
    _claim(recorded, "Gemma 4 E2B — 262K context on Olares One")
    assert run_cli(capsys, "bump", "--force", "--catalog", recorded)[0] == 0  # recorded, so only the gate refuses
    helm = tmp_path / "helm"
    code, out, err = run_cli(capsys, "publish", "--to", f"dir:{helm}", "--catalog", recorded)
    assert code == 1 and f"{APP}: refused: `catalog check {APP}` fails" in err and "CON003" in err
    packages = sorted(p.name for p in helm.glob("*.tgz"))
    assert packages and not any(p.startswith(APP + "-") for p in packages)
    code, out, err = run_cli(capsys, "publish", "--to", f"dir:{helm}", "--catalog", recorded, "--force")
    assert code == 0 and f"WARNING: --force: `catalog publish` goes on with {APP}" in err
    assert any(p.name.startswith(APP + "-1.0.3") for p in helm.glob("*.tgz"))


def test_a_clean_run_says_nothing_about_the_gate(capsys, recorded: Path, tmp_path: Path):
    code, out, err = run_cli(capsys, "publish", "--to", f"dir:{tmp_path / 'helm'}", "--catalog", recorded)
    assert code == 0 and "refused" not in err and "WARNING" not in err
