"""Attacks through symbolic links and predictable names: bump's scratch file, a linked catalog file, a
linked market app folder, linked targets of the tool's writes (failures 5, 8, 10 of the issue)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from support.adversarial import assert_clean_failure, cli, snapshot
from support.bump import run_cli

APP = "gemma4e2bone"  # one of bump_support.KEEP


def _raise_version_by_hand(catalog: Path, app: str) -> None:
    path = catalog / "apps" / f"{app}.yaml"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if line.startswith("version: "))
    major, minor, patch = lines[row].split(":", 1)[1].strip().strip("'\"").split(".")
    lines[row] = f"version: {major}.{minor}.{int(patch) + 1}\n"
    path.write_text("".join(lines), encoding="utf-8")


def test_bump_verify_symlink_not_followed(recorded: Path, tmp_path: Path, capsys):
    """Failure 5: a link planted at bump's old scratch name `.<app>.yaml.verify` pointing at a victim file:
    bump must not write through it (it parses the edited text in memory now)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    link = recorded / "apps" / f".{APP}.yaml.verify"
    link.symlink_to(victim)
    code, _out, err = run_cli(capsys, "bump", APP, "--level", "patch", "--note", "re-release", "--catalog", recorded)
    assert code == 0, err
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert link.is_symlink() and os.readlink(link) == str(victim)
    leftovers = [p.name for p in (recorded / "apps").iterdir() if p.name.startswith(".") and p != link]
    assert leftovers == []


def test_bump_app_file_that_is_a_symlink_is_not_written_through(recorded: Path, tmp_path: Path, capsys):
    """The app file itself a link (inside the catalog, so it loads): bump refuses to replace or write
    through it, with exit 2, before any other file changes."""
    real = tmp_path / "outside.yaml"
    app_file = recorded / "apps" / f"{APP}.yaml"
    shutil.move(app_file, recorded / "apps" / "real.yml")  # stays inside the catalog, not a *.yaml
    app_file.symlink_to(recorded / "apps" / "real.yml")
    _raise_version_by_hand(recorded, APP)
    real.write_text("x\n", encoding="utf-8")
    before = snapshot(recorded.parent)
    code, _out, err = run_cli(capsys, "bump", "--catalog", recorded)
    assert code == 2 and "symbolic link" in err, err
    assert snapshot(recorded.parent) == before


def test_catalog_symlink_outside_refused_and_not_echoed(small_catalog: Path, tmp_path: Path):
    """Failure 10: `ln -s /etc/shadow catalog/apps/evil.yaml` echoed every line as an unknown key. A file
    of secrets outside the catalog stands in for /etc/shadow (readable here)."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n", encoding="utf-8")
    (small_catalog / "apps" / "evil.yaml").symlink_to(secret)
    for args in (("check", "--no-lint"), ("render", "--out", tmp_path / "charts")):
        proc = cli(*args, "--catalog", small_catalog)
        assert_clean_failure(proc, 1)
        assert "evil.yaml" in proc.stderr and "symbolic link" in proc.stderr
        assert "SECRETHASH" not in proc.stdout + proc.stderr and "daemon" not in proc.stdout + proc.stderr
    assert not (tmp_path / "charts").exists()


def test_catalog_folder_symlink_outside_refused(small_catalog: Path, tmp_path: Path):
    """A catalog kind folder (devices/) linked to a folder outside the catalog is not read."""
    elsewhere = tmp_path / "elsewhere"
    shutil.move(small_catalog / "devices", elsewhere)
    (small_catalog / "devices").symlink_to(elsewhere, target_is_directory=True)
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert "devices" in proc.stderr and "outside the catalog" in proc.stderr


def test_catalog_symlink_inside_the_catalog_still_loads(small_catalog: Path):
    """A link that stays inside the catalog is fine (only links leading out are refused)."""
    shutil.move(small_catalog / "apps" / "qwenlab.yaml", small_catalog / "qwenlab.source")
    (small_catalog / "apps" / "qwenlab.yaml").symlink_to(small_catalog / "qwenlab.source")
    proc = cli("check", "--no-lint", "--catalog", small_catalog, "qwenlab")
    assert "symbolic link" not in proc.stderr and "qwenlab" in proc.stdout, proc.stdout + proc.stderr


# ---- prune --remove through a linked market folder (failure 8) ----------------------------------------

FAST, LONG = "vllmqwen36turbo27bone", "llamacppqwen36mtpone"
DEPRECATED = ("dflashqwen36one", "llamacppqwen36dense27bone", "lucedflashqwen36one", "vllmqwen36dense27bone")


@pytest.fixture
def prunable(catalog_copy: Path) -> Path:
    """The market fixture's catalog and its rendered charts, with passing smokes of both replacements in the ledger (the gate's
    input: rows as `catalog smoke` appends them; tests/test_prune.py records them against a real server)."""
    from generator.catalog import load_catalog
    from generator.smoke.identity import chart_content
    from generator.smoke.ledger import SmokeRecord, append

    from generator.cli import main

    assert main(["render", "--catalog", str(catalog_copy)]) == 0  # the fixture's own charts, beside it
    cat = load_catalog(catalog_copy)
    for app in (FAST, LONG):  # a pass of each replacement's current chart that served the chart's model
        r = cat.apps[app]
        append(catalog_copy, SmokeRecord(app=app, endpoint="http://127.0.0.1:8000", chart_version=r.app.version,
                                         image="img", date="2026-11-29T12:00:00Z", runs=(), tokens_per_s=90.0,
                                         acceptance=0.6, baseline_tokens_per_s=88.0, verdict="pass", reasons=(),
                                         chart_content=chart_content(r), identity_matched=("engine", "model")))
    return catalog_copy


def test_prune_remove_symlinked_market_folder_refused(prunable: Path, tmp_path: Path, capsys):
    market = tmp_path / "market"
    shutil.copytree(prunable.parent / "charts", market, ignore=shutil.ignore_patterns(".catalog-render"))
    victim = tmp_path / "victim"
    shutil.move(market / DEPRECATED[0], victim)
    (victim / "precious.txt").write_text("keep me\n", encoding="utf-8")
    (market / DEPRECATED[0]).symlink_to(victim, target_is_directory=True)
    before = snapshot(tmp_path)
    started = time.monotonic()
    code, _out, err = run_cli(capsys, "prune", "--deprecated", "--remove", "--yes", "--market", market,
                              "--catalog", prunable)
    assert code == 2, err
    assert "symbolic link" in err and DEPRECATED[0] in err and "Traceback" not in err
    assert snapshot(tmp_path) == before  # the victim, the market, the catalog, the charts: all untouched
    assert time.monotonic() - started < 120


def test_prune_into_a_foreign_charts_folder_refused_before_anything(prunable: Path, capsys):
    """prune deletes chart folders last: a charts/ holding a foreign entry is refused before the catalog
    files or the market change."""
    charts = prunable.parent / "charts"
    (charts / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = snapshot(prunable.parent)
    code, _out, err = run_cli(capsys, "prune", "--deprecated", "--catalog", prunable)
    assert code == 2 and "notes.txt" in err, err
    assert snapshot(prunable.parent) == before


def test_changelog_symlink_not_written_through(recorded: Path, tmp_path: Path, capsys):
    """CHANGELOG.md a link to a file elsewhere: bump refuses it (no write through a link) and says so,
    before it writes the app file or the chart."""
    victim = tmp_path / "victim.md"
    victim.write_text("# not a changelog\n", encoding="utf-8")
    changelog = recorded.parent / "CHANGELOG.md"
    changelog.unlink()
    changelog.symlink_to(victim)
    _raise_version_by_hand(recorded, APP)
    before = snapshot(recorded.parent)
    code, _out, err = run_cli(capsys, "bump", "--catalog", recorded)
    assert code == 2 and "symbolic link" in err and "CHANGELOG.md" in err, err
    assert victim.read_text(encoding="utf-8") == "# not a changelog\n"
    assert snapshot(recorded.parent) == before  # checked before the first write: nothing half-done
