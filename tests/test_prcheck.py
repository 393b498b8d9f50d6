"""`catalog check --base REF`: the PR check, on a temporary git repository holding a store's catalog + charts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.cli import main

from support.catalogs import REPO

APP = "llamacppqwen36a3bone"


def git(repo: Path, *args: str) -> str:
    env_args = ["-c", "user.name=store", "-c", "user.email=store@example.invalid", "-c", "init.defaultBranch=main"]
    return subprocess.run(["git", *env_args, "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def store(rendered_market: Path, tmp_path: Path) -> Path:
    """A store repository: the market fixture's catalog/ and its charts/, one commit on main, then a PR branch."""
    repo = tmp_path / "store"
    shutil.copytree(rendered_market / "catalog", repo / "catalog")
    shutil.copytree(rendered_market / "charts", repo / "charts")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "market")
    git(repo, "checkout", "-qb", "pr")
    return repo


def check(repo: Path, *extra: str) -> int:
    return main(["check", "--catalog", str(repo / "catalog"), "--base", "main", *extra])


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def edit_extra_args(repo: Path) -> None:
    path = repo / "catalog" / "apps" / f"{APP}.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace('--ubatch-size, "1024"', '--ubatch-size, "512"'),
                    encoding="utf-8")


def test_no_change_checks_no_app(store, capsys):
    assert check(store, "--no-lint") == 0
    assert "0 app(s) checked" in capsys.readouterr().out


def test_edit_without_bump_fails_with_the_version_rule(store, capsys):
    edit_extra_args(store)
    assert main(["render", "--catalog", str(store / "catalog")]) == 0
    commit(store, "smaller ubatch")
    capsys.readouterr()
    assert check(store, "--no-lint") == 1
    out = capsys.readouterr().out
    assert "VER001" in out and APP in out and "1 app(s) checked" in out
    assert "is not greater than 1.0.0 at main" in out


def test_hand_edited_chart_fails_with_drift(store, capsys):
    values = store / "charts" / APP / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("- '1024'", "- '512'"), encoding="utf-8")
    commit(store, "hand edit")
    capsys.readouterr()
    assert check(store, "--no-lint") == 1
    out = capsys.readouterr().out
    assert "DRIFT001" in out and f"charts/{APP}" in out


def test_bump_and_render_passes_with_lint(store, capsys):
    edit_extra_args(store)
    assert main(["bump", APP, "--catalog", str(store / "catalog")]) == 0
    commit(store, "smaller ubatch, bumped")
    assert "version: 1.0.1" in (store / "catalog" / "apps" / f"{APP}.yaml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert check(store) == 0, capsys.readouterr().out
    assert "1 app(s) checked, 1 passed" in capsys.readouterr().out


def test_removed_app_with_its_chart_passes_and_the_render_list_is_no_app(store, capsys):
    """Deleting an app and rendering removes its chart folder and its line in charts/.catalog-render: the
    list is render's own file, never checked as an app."""
    (store / "catalog" / "apps" / f"{APP}.yaml").unlink()
    assert main(["render", "--catalog", str(store / "catalog")]) == 0
    assert not (store / "charts" / APP).exists()
    commit(store, "retire an app")
    capsys.readouterr()
    assert check(store, "--no-lint", "--json") == 0
    checked = {a["app"] for a in json.loads(capsys.readouterr().out)["apps"]}
    assert checked == {APP}


def test_shared_catalog_change_checks_every_app(store, capsys):
    stack = store / "catalog" / "stacks" / "atomic-mtp.yaml"
    stack.write_text(stack.read_text(encoding="utf-8") + "# touched\n", encoding="utf-8")
    capsys.readouterr()
    check(store, "--no-lint", "--json")
    checked = {a["app"] for a in json.loads(capsys.readouterr().out)["apps"]}
    assert checked == {p.stem for p in (store / "catalog" / "apps").glob("*.yaml")}


def test_github_annotations_point_at_the_catalog_file_and_line(store, capsys, monkeypatch):
    edit_extra_args(store)
    assert main(["render", "--catalog", str(store / "catalog")]) == 0
    commit(store, "smaller ubatch")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.chdir(store)
    capsys.readouterr()
    assert main(["check", "--catalog", "catalog", "--base", "main", "--no-lint"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error ")]
    version_line = next(i for i, text in enumerate((store / "catalog" / "apps" / f"{APP}.yaml").read_text(
        encoding="utf-8").splitlines(), 1) if text.startswith("version:"))
    assert any(f"file=catalog/apps/{APP}.yaml,line={version_line},title=VER001 {APP}::" in line for line in lines), lines


def test_broken_catalog_file_is_annotated_and_exits_1(store, capsys, monkeypatch):
    path = store / "catalog" / "apps" / f"{APP}.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("context_length: 65536", "context_length: lots"),
                    encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.chdir(store)
    assert main(["check", "--catalog", "catalog", "--base", "main"]) == 1
    out = capsys.readouterr().out
    assert f"::error file=catalog/apps/{APP}.yaml,line=" in out and "context_length" in out


def test_unknown_base_is_a_usage_error(store, capsys):
    assert main(["check", "--catalog", str(store / "catalog"), "--base", "no-such-ref"]) == 2
    assert "--base no-such-ref" in capsys.readouterr().err


def test_workflow_is_valid_yaml_and_runs_the_same_command_as_ci():
    from ruamel.yaml import YAML

    workflow = YAML(typ="safe").load((REPO / ".github" / "workflows" / "catalog-pr.yml").read_text(encoding="utf-8"))
    assert "pull_request" in workflow["on"]
    steps = workflow["jobs"]["check"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    assert any(run.startswith("catalog check --base ") for run in runs)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 'catalog check --base "$base"' in ci
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0  # the merge-base needs history


def test_pre_commit_hooks_call_real_commands():
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    entries = {hook["id"]: hook["entry"] for hook in hooks}
    assert entries["catalog-render-check"] == "catalog render --check"
    for entry in entries.values():
        assert main([*entry.split()[1:], "--help"]) == 0
