"""`catalog init [DIR] [--all] [--force]`: a store repository from the embedded catalog, with real git.

Bad input (a file, a read-only folder, the installed package, a non-empty folder) exits 2 with a clear
message and leaves nothing behind; `--force` never overwrites a file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.catalogs import EMBEDDED, REPO

from generator.catalog import load_catalog
from generator.cli import main
from generator.cli.init import EXAMPLE
from generator.core.locate import package_dir
from generator.versions.releases import load_releases

STORE_FILES = {"README.md", "CHANGELOG.md", ".gitignore", ".pre-commit-config.yaml", ".github/workflows/catalog.yml"}


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch, tmp_path):
    """A private HOME (no user git config) so the test sees what a fresh machine does."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CATALOG_DIR", raising=False)
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_init_makes_a_working_store(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    assert main(["init", str(store)]) == 0
    out = capsys.readouterr().out
    assert "git: first commit" in out and f"catalog/ (1 app: {EXAMPLE})" in out
    have = files(store)
    assert have >= STORE_FILES
    assert {f"catalog/{kind}" for kind in ("devices", "models", "stacks", "flags", "genesis")} <= {
        str(Path(f).parent) for f in have}
    assert sorted(p.name for p in (store / "catalog" / "apps").iterdir()) == [f"{EXAMPLE}.yaml"]
    assert (store / "catalog" / "apps" / f"{EXAMPLE}.yaml").read_bytes() == (
        EMBEDDED / "apps" / f"{EXAMPLE}.yaml").read_bytes()
    assert (store / "charts" / EXAMPLE / "Chart.yaml").is_file()
    assert set(load_releases(store / "catalog").apps) == {EXAMPLE}
    # only the history whose chart the store has: the example's current version, as the embedded catalog
    # recorded it when its content is the same (else recorded afresh), never the older versions
    version = load_catalog(store / "catalog").apps[EXAMPLE].app.version
    mine = load_releases(store / "catalog").apps[EXAMPLE]
    assert list(mine) == [version]
    upstream = load_releases(EMBEDDED).get(EXAMPLE, version)
    if upstream is not None and upstream.content == mine[version].content:
        assert mine[version] == upstream
    workflow = (store / ".github" / "workflows" / "catalog.yml").read_text()
    assert "catalog check --base" in workflow and "catalog render --check" in workflow and "test:" in workflow
    assert "catalog render" in (store / "README.md").read_text() and "catalog check" in (store / "README.md").read_text()
    assert "@@" not in "".join((store / f).read_text() for f in STORE_FILES)
    # git: one commit on main holding every file, nothing left uncommitted
    assert git(store, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert len(git(store, "rev-list", "--all").split()) == 1
    assert git(store, "status", "--porcelain") == ""
    assert set(git(store, "ls-files").split()) == files(store)
    assert siblings(tmp_path) == ["home", "store"]  # no staging folder left beside it
    assert oct(store.stat().st_mode & 0o777) != oct(0o700)  # an ordinary folder, not mkdtemp's private one
    # the store works: its commands find its catalog from inside it
    monkeypatch.chdir(store / "charts")
    assert main(["render", "--check"]) == 0
    assert main(["bump", "--check"]) == 0
    assert main(["check", "--no-lint"]) == 0
    assert f"catalog: {store / 'catalog'} (found from the current folder)" in capsys.readouterr().err


def test_a_new_store_s_market_serves_everything_it_lists(tmp_path, capsys):
    """The market source of a brand-new store (generator/market/source.py, what `serve` and `site` show): the
    example's version is served and nothing is reported as not served (issue 24: no "Not served" box)."""
    from generator.market.source import collect

    store = tmp_path / "store"
    assert main(["init", str(store)]) == 0
    capsys.readouterr()
    from generator.catalog import load_catalog

    collected = collect(store / "catalog", store / "charts", catalog=load_catalog(store / "catalog"))
    assert collected.problems == ()
    assert collected.every_listed == frozenset({EXAMPLE})
    assert all(apps == {EXAMPLE} for apps in collected.listed.values()), collected.listed


def test_init_all_copies_every_app_and_the_current_folder_by_default(tmp_path, monkeypatch, capsys):
    store = tmp_path / "all"
    store.mkdir()  # an empty folder is fine
    monkeypatch.chdir(store)
    assert main(["init", "--all"]) == 0
    assert sorted(p.name for p in (store / "catalog" / "apps").iterdir()) == sorted(
        p.name for p in (EMBEDDED / "apps").iterdir())
    releases = load_releases(store / "catalog").apps
    assert all(len(versions) == 1 for versions in releases.values())  # the versions the store's charts/ hold
    charts = sorted(p.name for p in (store / "charts").iterdir())
    assert charts == sorted(p.name for p in (REPO / "charts").iterdir())
    assert main(["render", "--check"]) == 0
    capsys.readouterr()


def test_a_non_empty_folder_is_refused_and_left_alone(tmp_path, capsys):
    store = tmp_path / "busy"
    store.mkdir()
    (store / "README.md").write_text("mine\n")
    assert main(["init", str(store)]) == 2
    err = capsys.readouterr().err
    assert "is not empty (README.md)" in err and "--force" in err
    assert siblings(store) == ["README.md"] and siblings(tmp_path) == ["busy", "home"]


def test_force_adds_files_but_never_overwrites(tmp_path, capsys):
    store = tmp_path / "busy"
    (store / "catalog" / "apps").mkdir(parents=True)
    (store / "README.md").write_text("mine\n")
    mine = store / "catalog" / "apps" / f"{EXAMPLE}.yaml"
    mine.write_text("# my own version of the app\n")
    assert main(["init", str(store), "--force"]) == 0
    out = capsys.readouterr().out
    assert (store / "README.md").read_text() == "mine\n" and mine.read_text() == "# my own version of the app\n"
    assert "kept existing README.md" in out and f"kept existing catalog/apps/{EXAMPLE}.yaml" in out
    assert (STORE_FILES - {"README.md"}) <= files(store)
    assert (store / "catalog" / "models").is_dir() and (store / "charts" / EXAMPLE).is_dir()
    tracked = set(git(store, "ls-files").split())  # the first commit holds only what init wrote
    assert "README.md" not in tracked and f"catalog/apps/{EXAMPLE}.yaml" not in tracked
    assert "CHANGELOG.md" in tracked
    assert siblings(tmp_path) == ["busy", "home"]


def test_force_inside_an_existing_repository_leaves_git_alone(tmp_path, capsys):
    store = tmp_path / "repo"
    store.mkdir()
    git(store, "init", "--quiet")
    assert main(["init", str(store), "--force"]) == 0
    assert "commit the new files yourself" in capsys.readouterr().out
    assert git(store, "rev-list", "--all") == ""  # no commit made in the user's repository
    assert "CHANGELOG.md" in git(store, "status", "--porcelain")


def test_a_file_path_is_refused(tmp_path, capsys):
    path = tmp_path / "a-file"
    path.write_text("x\n")
    assert main(["init", str(path)]) == 2
    assert "a file, not a folder" in capsys.readouterr().err
    assert path.read_text() == "x\n" and siblings(tmp_path) == ["a-file", "home"]


def test_inside_the_installed_package_is_refused(capsys):
    target = package_dir() / "store-here"
    assert main(["init", str(target)]) == 2
    assert "inside the installed tool" in capsys.readouterr().err
    assert not target.exists()
    assert not [p for p in package_dir().iterdir() if ".init-" in p.name]


def _read_only_run(folder: Path, target: Path) -> subprocess.CompletedProcess:
    """`catalog init TARGET` with `folder` read-only: a read-only bind mount as root (unshare), chmod otherwise."""
    argv = [sys.executable, "-m", "generator.cli", "init", str(target)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
        finally:
            folder.chmod(0o755)
    if shutil.which("unshare") is None:
        pytest.skip("running as root without unshare: no way to make a read-only folder")
    quoted = " ".join(f"'{a}'" for a in argv)
    script = (f"mount --bind '{folder}' '{folder}' && mount -o remount,ro,bind '{folder}' '{folder}' "
              f"|| exit 99; exec {quoted}")
    done = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=120,
                          env=env, check=False)
    if done.returncode == 99:
        pytest.skip(f"cannot make a read-only bind mount here: {done.stderr.strip()}")
    return done


def test_a_read_only_folder_is_refused_with_nothing_written(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    done = _read_only_run(folder, folder / "store")
    assert done.returncode == 2, done.stderr
    assert "not writable" in done.stderr or "Read-only" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert siblings(folder) == []


def test_a_failure_half_way_leaves_nothing_behind(tmp_path, monkeypatch, capsys):
    """The example app file is missing from the embedded catalog: init stops after writing part of the store."""
    monkeypatch.setattr("generator.cli.init.EXAMPLE", "nosuchapp")
    assert main(["init", str(tmp_path / "new" / "store")]) == 2
    err = capsys.readouterr().err
    assert "nosuchapp.yaml" in err and "Traceback" not in err
    assert siblings(tmp_path) == ["home"]  # neither the store, nor its parent, nor a staging folder


# --- where the store's README and CI install the tool from (PEP 610 direct_url.json) -------------------------

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_an_index_install_gives_its_version():
    from generator.cli.install_source import from_record

    source = from_record(None, "0.3.1")
    assert source.requirement == "olares-llm-catalog==0.3.1" and not source.warning


def test_a_git_install_gives_that_url_at_that_commit():
    from generator.cli.install_source import from_record

    record = {"url": "https://github.com/someone/catalog.git", "vcs_info": {"vcs": "git", "commit_id": SHA}}
    source = from_record(record, "0.1.0")
    assert source.requirement == f"olares-llm-catalog @ git+https://github.com/someone/catalog.git@{SHA}"
    assert source.pipx == f"git+https://github.com/someone/catalog.git@{SHA}" and not source.warning


@pytest.mark.parametrize("record", [
    {"url": "file:///home/me/dist/olares_llm_catalog-0.1.0-py3-none-any.whl", "archive_info": {}},
    {"url": "file:///home/me/catalog", "dir_info": {"editable": True}},
    {"url": "ssh://git@example.org/me/catalog.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
    {"url": "https://example.org/x.whl'; rm -rf ~; '", "archive_info": {}},
    {"dir_info": {}},
])
def test_a_source_ci_cannot_reach_is_said_with_the_fix(record):
    from generator.cli.install_source import from_record

    source = from_record(record, "0.1.0")
    assert source.requirement is None
    assert "CATALOG_TOOL" in source.warning and "gh variable set CATALOG_TOOL" in source.warning


def test_a_local_clone_with_an_https_origin_gives_its_head_and_says_to_push():
    from generator.cli.install_source import from_record

    record = {"url": "file:///home/me/catalog", "dir_info": {"editable": True}}
    source = from_record(record, "0.1.0", ("https://github.com/me/catalog", SHA))
    assert source.requirement == f"olares-llm-catalog @ git+https://github.com/me/catalog@{SHA}"
    assert "push that commit" in source.warning


def _install_step(workflow: str) -> str:
    """The `run:` script of the workflow's first "Install catalog" step, as GitHub Actions would run it."""
    import yaml

    jobs = yaml.safe_load(workflow)["jobs"]
    step = next(s for s in jobs["test"]["steps"] if s.get("name") == "Install catalog")
    return step["run"]


def test_the_store_installs_what_this_installation_says(tmp_path, capsys):
    """The real installation record of the tool running this test (an editable install of the working tree)."""
    import yaml

    from generator.cli.install_source import installed

    source = installed()
    store = tmp_path / "store"
    assert main(["init", str(store)]) == 0
    captured = capsys.readouterr()
    assert f"install the tool from {source.where}" in captured.err
    workflow = (store / ".github" / "workflows" / "catalog.yml").read_text()
    readme = (store / "README.md").read_text()
    default = yaml.safe_load(workflow)["env"]["CATALOG_TOOL"]
    assert default == "${{ vars.CATALOG_TOOL || '%s' }}" % (source.requirement or "")
    assert "olares-llm-catalog[market]" not in readme or source.requirement is not None
    if source.requirement is None:
        assert "warning: the store's CI cannot install the tool yet" in captured.err and "CATALOG_TOOL" in captured.err
        assert "`CATALOG_TOOL`" in readme
        # the generated install step, run as CI would run it without the variable: a clear failure
        done = subprocess.run(["bash", "-c", _install_step(workflow)], env={**os.environ, "CATALOG_TOOL": ""},
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 1 and "::error::" in done.stdout and "CATALOG_TOOL" in done.stdout
    else:
        assert f"pipx install '{source.pipx}'" in readme


def test_the_readme_of_a_git_installed_tool_says_pipx_and_its_extra(tmp_path, monkeypatch, capsys):
    from generator.cli import install_source

    record = {"url": "https://github.com/someone/catalog.git", "vcs_info": {"vcs": "git", "commit_id": SHA}}
    monkeypatch.setattr("generator.cli.install_source.installed", lambda: install_source.from_record(record, "0.1.0"))
    store = tmp_path / "store"
    assert main(["init", str(store)]) == 0
    assert "warning" not in capsys.readouterr().err
    readme = (store / "README.md").read_text()
    assert f"pipx install 'git+https://github.com/someone/catalog.git@{SHA}'" in readme
    assert f"pipx install --force 'olares-llm-catalog[market] @ git+https://github.com/someone/catalog.git@{SHA}'" \
        in readme
    assert "pipx inject olares-llm-catalog" in readme
    workflow = (store / ".github" / "workflows" / "catalog.yml").read_text()
    assert f"'olares-llm-catalog @ git+https://github.com/someone/catalog.git@{SHA}'" in workflow


def test_a_local_install_writes_no_path_of_this_machine_into_the_store(tmp_path, monkeypatch, capsys):
    from generator.cli import install_source

    record = {"url": "file:///home/me/src/catalog", "dir_info": {"editable": True}}
    monkeypatch.setattr("generator.cli.install_source.installed", lambda: install_source.from_record(record, "0.1.0"))
    store = tmp_path / "store"
    assert main(["init", str(store)]) == 0
    err = capsys.readouterr().err
    assert "the local folder /home/me/src/catalog" in err and "CATALOG_TOOL" in err  # said to the owner
    for name in ("README.md", ".github/workflows/catalog.yml"):
        text = (store / name).read_text()
        assert "/home/me" not in text and "a local folder" in text, name


def test_a_real_clone_gives_its_origin_and_head(tmp_path):
    """Real git: a clone whose origin is the ssh spelling of a GitHub remote gives the https URL and its HEAD."""
    from generator.cli.install_source import _clone, from_record

    clone = tmp_path / "catalog"
    clone.mkdir()
    git(clone, "init", "--quiet")
    git(clone, "remote", "add", "origin", "git@github.com:someone/catalog.git")
    (clone / "x").write_text("x\n")
    git(clone, "add", "x")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet", "-m", "x")
    head = git(clone, "rev-parse", "HEAD").strip()
    assert _clone(clone) == ("https://github.com/someone/catalog.git", head)
    assert _clone(tmp_path / "home") is None  # not a clone
    source = from_record({"url": clone.as_uri(), "dir_info": {}}, "0.1.0", _clone(clone))
    assert source.requirement == f"olares-llm-catalog @ git+https://github.com/someone/catalog.git@{head}"
