"""`catalog init --force` into a folder an attacker (or an accident) prepared: nothing is written through a link,
nothing replaces an existing entry (a dangling link included), the report names only what was written, and the
file system root or the home folder never becomes a store (issue 22: 13 and the init minors; docs/security.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from generator.cli import main


@pytest.fixture(autouse=True)
def _private_home(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CATALOG_DIR", raising=False)


def tree(folder: Path) -> dict[str, str]:
    """Every entry below `folder`, read without following links: a file's text, a link's target, `dir`."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        out[rel] = ("-> " + os.readlink(path)) if path.is_symlink() else "dir" if path.is_dir() else path.read_text()
    return out


def test_a_regular_file_named_charts_is_kept_and_the_report_says_charts_were_not_written(tmp_path, capsys):
    store = tmp_path / "store"
    store.mkdir()
    (store / "charts").write_text("my notes, not a folder\n")
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
    out = capsys.readouterr().out
    assert (store / "charts").read_text() == "my notes, not a folder\n"
    created = out.splitlines()[0]
    assert "charts/" not in created and "catalog/" in created, out
    assert "kept existing charts (a file, not a folder): nothing written under it" in out
    assert (store / "catalog" / "apps").is_dir()


def test_a_symlinked_catalog_folder_is_not_written_through(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("someone else's folder\n")
    store = tmp_path / "store"
    store.mkdir()
    (store / "catalog").symlink_to(elsewhere)
    before = tree(elsewhere)
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
    out = capsys.readouterr().out
    assert tree(elsewhere) == before  # nothing appeared in the link's target
    assert os.readlink(store / "catalog") == str(elsewhere)
    assert "kept existing catalog (a link): nothing written under it" in out
    assert "catalog/ (" not in out.splitlines()[0]


def test_a_dangling_readme_link_is_kept(tmp_path, capsys):
    store = tmp_path / "store"
    store.mkdir()
    (store / "README.md").symlink_to(tmp_path / "nowhere" / "README.md")
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
    out = capsys.readouterr().out
    assert (store / "README.md").is_symlink()
    assert os.readlink(store / "README.md") == str(tmp_path / "nowhere" / "README.md")
    assert not (tmp_path / "nowhere").exists()  # not created through the link either
    assert "kept existing README.md (not overwritten)" in out


def test_a_link_below_a_folder_is_not_written_through(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = tmp_path / "store"
    (store / "catalog").mkdir(parents=True)
    (store / "catalog" / "apps").symlink_to(elsewhere)
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
    assert list(elsewhere.iterdir()) == []
    assert (store / "catalog" / "models").is_dir()  # the rest of catalog/ is still written
    assert "kept existing catalog/apps (a link)" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["/", "home"])
def test_the_root_and_the_home_folder_never_become_a_store(where, tmp_path, capsys):
    target = Path("/") if where == "/" else Path(os.environ["HOME"])
    git_before = os.path.lexists(target / ".git")
    before = sorted(p.name for p in target.iterdir())
    assert main(["init", "--owner", "tester", str(target), "--force"]) == 2
    err = capsys.readouterr().err
    assert "a store gets a folder of its own" in err
    assert os.path.lexists(target / ".git") == git_before
    assert sorted(p.name for p in target.iterdir()) == before


def test_the_files_init_kept_are_not_in_its_first_commit(tmp_path, capsys):
    store = tmp_path / "store"
    store.mkdir()
    (store / "charts").write_text("x\n")
    (store / "README.md").symlink_to(tmp_path / "nowhere")
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
    capsys.readouterr()
    tracked = subprocess.run(["git", "ls-files"], cwd=store, capture_output=True, text=True, check=True,
                             timeout=60).stdout.split()
    assert "README.md" not in tracked and not any(t.startswith("charts") for t in tracked)
    assert "CHANGELOG.md" in tracked
