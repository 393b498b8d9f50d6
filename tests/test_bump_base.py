"""`catalog bump --check --base REF`: chart-testing's version-increment rule on a real temporary git repo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.bump import git, run_cli
from support.catalogs import edit_app


@pytest.fixture
def repo(recorded: Path) -> Path:
    root = recorded.parent
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "market")
    git(root, "checkout", "-q", "-b", "feature")
    return root


def test_changed_chart_needs_a_higher_version_than_at_base(capsys, repo: Path) -> None:
    cat = repo / "catalog"
    edit_app(cat, "gemma4e2bone", context_length=65536)
    assert run_cli(capsys, "render", "--catalog", cat)[0] == 0
    git(repo, "commit", "-q", "-am", "gemma: 64K")
    code, _, err = run_cli(capsys, "bump", "--check", "--base", "main", "--catalog", cat)
    assert code == 1
    assert "gemma4e2bone: chart changed since" in err
    assert "version 1.0.2 is not greater than 1.0.2 at main; run `catalog bump gemma4e2bone`" in err
    assert "vllmqwen36turbo27bone" not in err  # unchanged charts pass

    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    git(repo, "commit", "-q", "-am", "bump")
    code, out, err = run_cli(capsys, "bump", "--check", "--base", "main", "--catalog", cat)
    assert code == 0, err
    assert "each above main where changed" in out


def test_new_chart_passes_and_version_is_compared_to_the_ref_not_the_fork_point(capsys, repo: Path) -> None:
    cat = repo / "catalog"
    src = (cat / "apps" / "gemma4e2bone.yaml").read_text(encoding="utf-8")
    (cat / "apps" / "gemma4e2btwo.yaml").write_text(src.replace("name: gemma4e2bone", "name: gemma4e2btwo"))
    assert run_cli(capsys, "render", "--catalog", cat)[0] == 0
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0  # records the new app
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "new app")
    assert run_cli(capsys, "bump", "--check", "--base", "main", "--catalog", cat)[0] == 0

    # main moves on: the Fast app goes to 2.5.7 there; this branch changes it and bumps to 2.5.7 too
    git(repo, "checkout", "-q", "main")
    edit_app(cat, "vllmqwen36turbo27bone", context_length=81920)  # one that fits: bump runs the check
    assert run_cli(capsys, "render", "--catalog", cat)[0] == 0
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    git(repo, "commit", "-q", "-am", "fast 2.5.7 on main")
    git(repo, "checkout", "-q", "feature")
    edit_app(cat, "vllmqwen36turbo27bone", context_length=65536)
    assert run_cli(capsys, "render", "--catalog", cat)[0] == 0
    assert run_cli(capsys, "bump", "--catalog", cat)[0] == 0
    git(repo, "commit", "-q", "-am", "fast 2.5.7 on the branch")
    code, _, err = run_cli(capsys, "bump", "--check", "--base", "main", "--catalog", cat)
    assert code == 1 and "version 2.5.7 is not greater than 2.5.7 at main" in err


def test_unknown_ref_and_no_repository_are_usage_errors(capsys, repo: Path, tmp_path_factory) -> None:
    code, _, err = run_cli(capsys, "bump", "--check", "--base", "nope", "--catalog", repo / "catalog")
    assert code == 2 and "--base nope: not a commit" in err
    elsewhere = tmp_path_factory.mktemp("nogit")
    shutil.copytree(repo / "catalog", elsewhere / "catalog")
    shutil.copytree(repo / "charts", elsewhere / "charts")
    code, _, err = run_cli(capsys, "bump", "--check", "--base", "main", "--catalog", elsewhere / "catalog")
    assert code == 2 and "not a git repository" in err
