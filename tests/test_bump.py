"""`catalog bump`: a changed chart gets a new version, a changelog entry and an upgradeDescription line."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.yamlio import yamlout
from generator.versions.releases import load_releases

from support.bump import lines_except, run_cli, trim_catalog
from support.catalogs import edit_app

FAST = "vllmqwen36turbo27bone"


@pytest.fixture
def cat(recorded: Path) -> Path:
    return recorded


def _set_line(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _manifest(cat: Path, app: str) -> dict:
    return yamlout.load((cat.parent / "charts" / app / "OlaresManifest.yaml").read_text(encoding="utf-8"))


def test_changed_arg_fails_check_then_bump_writes_version_changelog_and_chart(capsys, cat: Path) -> None:
    app_file = cat / "apps" / f"{FAST}.yaml"
    _set_line(app_file, '[--max-num-seqs, "1",', '[--max-num-seqs, "2",')
    before = app_file.read_text(encoding="utf-8")
    changelog_before = (cat.parent / "CHANGELOG.md").read_text(encoding="utf-8")

    code, _, err = run_cli(capsys, "bump", "--check", "--catalog", cat)
    assert code == 1
    assert f"{FAST} 2.5.6: content changed without a version bump" in err
    assert "`--max-num-seqs` `1` -> `2`" in err and f"run `catalog bump {FAST}`" in err

    code, out, err = run_cli(capsys, "bump", "--catalog", cat)
    assert code == 0, err
    after = app_file.read_text(encoding="utf-8")
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    version_row = old_lines.index("version: 2.5.6\n")
    assert new_lines[version_row] == "version: 2.5.7\n"
    note_row = old_lines.index("upgrade_description: >-\n") + 1
    assert new_lines[note_row] == "  2.5.7: changed `--max-num-seqs` `1` -> `2`.\n"
    # every other line byte-identical: comments, flow lists wrapped over two lines, quoting
    assert lines_except(after, note_row, version_row) == lines_except(before, version_row)

    changelog = (cat.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Apps\n\nEntries written by `catalog bump`" in changelog
    assert f"### {FAST} 2.5.7 — " in changelog and "- Changed `--max-num-seqs` `1` -> `2`\n" in changelog
    assert changelog.startswith(changelog_before.rstrip("\n"))  # the tool's own sections untouched

    manifest = _manifest(cat, FAST)
    assert manifest["metadata"]["version"] == "2.5.7"
    assert manifest["spec"]["upgradeDescription"].startswith("2.5.7: changed `--max-num-seqs` `1` -> `2`. 2.5.6: ")
    chart = yamlout.load((cat.parent / "charts" / FAST / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart["version"] == "2.5.7"
    assert run_cli(capsys, "render", "--check", "--catalog", cat)[0] == 0
    assert run_cli(capsys, "bump", "--check", "--catalog", cat)[0] == 0
    record = load_releases(cat).latest(FAST)
    assert record.version == "2.5.7" and "--max-num-seqs 2" in record.state.args
    assert load_releases(cat).get(FAST, "2.5.6").state is None  # older versions keep hash and date only


def test_second_run_changes_nothing(capsys, cat: Path) -> None:
    edit_app(cat, "gemma4e2bone", context_length=65536)
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    files = {p: p.read_bytes() for p in [cat / "releases.yaml", cat.parent / "CHANGELOG.md",
                                         cat / "apps" / "gemma4e2bone.yaml"]}
    code, out, _ = run_cli(capsys, "bump", "--catalog", cat)
    assert code == 0 and "nothing to bump" in out
    assert {p: p.read_bytes() for p in files} == files


def test_app_without_upgrade_description_gets_one_after_status(capsys, cat: Path) -> None:
    app_file = cat / "apps" / "gemma4e2bone.yaml"
    _set_line(app_file, "--mlock, --no-context-shift]", "--no-context-shift]")
    before = app_file.read_text(encoding="utf-8")
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    after = app_file.read_text(encoding="utf-8")
    assert "version: 1.0.3\nstatus: active\nupgrade_description: >-\n  1.0.3: removed `--mlock`.\nbenchmarks:\n" in after
    rest = [line for line in after.splitlines(keepends=True)
            if line not in ("version: 1.0.3\n", "upgrade_description: >-\n", "  1.0.3: removed `--mlock`.\n")]
    assert rest == [line for line in before.splitlines(keepends=True) if line != "version: 1.0.2\n"]
    assert _manifest(cat, "gemma4e2bone")["spec"]["upgradeDescription"] == "1.0.3: removed `--mlock`."


def test_versions_never_go_down(capsys, cat: Path) -> None:
    edit_app(cat, "gemma4e2bone", version="1.0.1")
    code, _, err = run_cli(capsys, "bump", "--check", "--catalog", cat)
    assert code == 1 and "version 1.0.1 is below the released 1.0.2; versions never go down" in err
    code, _, err = run_cli(capsys, "bump", "--catalog", cat)
    assert code == 1 and "versions never go down" in err
    assert YAML().load((cat / "apps" / "gemma4e2bone.yaml").read_text())["version"] == "1.0.1"


def test_version_raised_by_hand_is_recorded_with_its_entry(capsys, cat: Path) -> None:
    edit_app(cat, "gemma4e2bone", version="1.1.0", context_length=65536)
    code, _, err = run_cli(capsys, "bump", "--check", "--catalog", cat)
    assert code == 1 and "version 1.1.0 is not recorded (last release 1.0.2)" in err
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    assert load_releases(cat).latest("gemma4e2bone").version == "1.1.0"
    changelog = (cat.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "### gemma4e2bone 1.1.0 — " in changelog and "- Changed context 131072 -> 65536\n" in changelog


def test_interrupted_bump_is_completed_by_a_second_run(capsys, cat: Path, monkeypatch) -> None:
    from generator.versions import releases
    edit_app(cat, "gemma4e2bone", context_length=65536)

    def crash(self) -> None:
        raise OSError("disk full (injected)")

    monkeypatch.setattr(releases.Releases, "save", crash)
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 2  # the crash is an internal error: exit 2
    monkeypatch.undo()
    assert run_cli(capsys, "bump", "--check", "--catalog", cat)[0] == 1  # 1.0.3 written, not recorded
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    changelog = (cat.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.count("### gemma4e2bone 1.0.3 — ") == 1
    note = YAML().load((cat / "apps" / "gemma4e2bone.yaml").read_text())["upgrade_description"]
    assert note.count("1.0.3:") == 1
    assert run_cli(capsys, "bump", "--check", "--catalog", cat)[0] == 0
    assert run_cli(capsys, "render", "--check", "--catalog", cat)[0] == 0


def test_suspend_bumps_for_prune(capsys, cat: Path) -> None:
    from generator.versions.bump import bump_for_suspend

    edit_app(cat, "gemma426ba4bone", status="deprecated", replaced_by="gemma4e2bone", reason="superseded")
    outcome = bump_for_suspend(cat, "gemma426ba4bone", "superseded by gemma4e2bone")
    assert (outcome.before, outcome.after, outcome.action) == ("1.0.9", "1.0.10", "bump")
    changelog = (cat.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "### gemma426ba4bone 1.0.10 — " in changelog
    assert "- Changed status active -> deprecated\n- Suspended: superseded by gemma4e2bone\n" in changelog
    assert run_cli(capsys, "render", "--check", "--catalog", cat)[0] == 0
    assert run_cli(capsys, "bump", "--check", "--catalog", cat)[0] == 0


def test_named_app_with_level_bumps_without_change(capsys, cat: Path) -> None:
    code, out, err = run_cli(capsys, "bump", "gemma4e2bone", "--level", "minor", "--json", "--catalog", cat)
    assert code == 0, err
    assert '"to": "1.1.0"' in out and "Re-released without a chart change" in out


def test_unrecorded_app_fails_check_and_bump_records_it_without_entry(capsys, catalog_copy: Path) -> None:
    trim_catalog(catalog_copy)
    (catalog_copy / "releases.yaml").unlink(missing_ok=True)
    code, _, err = run_cli(capsys, "bump", "--check", "--catalog", catalog_copy)
    assert code == 1 and "gemma4e2bone 1.0.2: not recorded in releases.yaml" in err
    # the frozen Fast app fails `catalog check` (FIT001 at 131,072 tokens): recorded only with --force, said loudly
    code, _, err = run_cli(capsys, "bump", "--catalog", catalog_copy)
    assert code == 1 and "vllmqwen36turbo27bone: refused: `catalog check vllmqwen36turbo27bone` fails" in err
    assert "FIT001" in err and load_releases(catalog_copy).latest("vllmqwen36turbo27bone") is None
    code, _, err = run_cli(capsys, "bump", "--force", "--catalog", catalog_copy)
    assert code == 0 and "WARNING: --force: `catalog bump` goes on with vllmqwen36turbo27bone" in err
    assert load_releases(catalog_copy).latest("gemma4e2bone").version == "1.0.2"
    assert not (catalog_copy.parent / "CHANGELOG.md").exists()
    assert run_cli(capsys, "bump", "--check", "--catalog", catalog_copy)[0] == 0


def test_broken_releases_file_is_reported(capsys, catalog_copy: Path) -> None:
    (catalog_copy / "releases.yaml").write_text("apps:\n  gemma4e2bone:\n    1.0.2: {date: x}\n")
    code, _, err = run_cli(capsys, "bump", "--check", "--catalog", catalog_copy)
    assert code == 1 and "releases.yaml:3: apps.gemma4e2bone.1.0.2: needs `content: sha256:...`" in err
