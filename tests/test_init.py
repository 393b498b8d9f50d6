"""`catalog init [DIR] [--all] [--force]`: a store repository from the embedded catalog, with real git.

Bad input (a file, a read-only folder, the installed package, a non-empty folder) exits 2 with a clear
message and leaves nothing behind; `--force` never overwrites a file.
"""

from __future__ import annotations

import os
import re
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
    assert main(["init", "--owner", "tester", str(store)]) == 0
    out = capsys.readouterr().out
    assert "git: first commit" in out and f"catalog/ (1 app: {EXAMPLE})" in out
    have = files(store)
    assert have >= STORE_FILES
    assert {f"catalog/{kind}" for kind in ("devices", "models", "stacks", "flags", "genesis")} <= {
        str(Path(f).parent) for f in have}
    assert sorted(p.name for p in (store / "catalog" / "apps").iterdir()) == [f"{EXAMPLE}.yaml"]
    example = load_catalog(store / "catalog").apps[EXAMPLE].app
    assert example.owners == ("tester",) and example.model == load_catalog(EMBEDDED).apps[EXAMPLE].app.model
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
    assert main(["init", "--owner", "tester", str(store)]) == 0
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
    assert main(["init", "--owner", "tester", "--all"]) == 0
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
    assert main(["init", "--owner", "tester", str(store)]) == 2
    err = capsys.readouterr().err
    assert "is not empty (README.md)" in err and "--force" in err
    assert siblings(store) == ["README.md"] and siblings(tmp_path) == ["busy", "home"]


def test_force_adds_files_but_never_overwrites(tmp_path, capsys):
    store = tmp_path / "busy"
    (store / "catalog" / "apps").mkdir(parents=True)
    (store / "README.md").write_text("mine\n")
    mine = store / "catalog" / "apps" / f"{EXAMPLE}.yaml"
    mine.write_text("# my own version of the app\n")
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
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
    assert main(["init", "--owner", "tester", str(store), "--force"]) == 0
    assert "commit the new files yourself" in capsys.readouterr().out
    assert git(store, "rev-list", "--all") == ""  # no commit made in the user's repository
    assert "CHANGELOG.md" in git(store, "status", "--porcelain")


def test_a_file_path_is_refused(tmp_path, capsys):
    path = tmp_path / "a-file"
    path.write_text("x\n")
    assert main(["init", "--owner", "tester", str(path)]) == 2
    assert "a file, not a folder" in capsys.readouterr().err
    assert path.read_text() == "x\n" and siblings(tmp_path) == ["a-file", "home"]


def test_inside_the_installed_package_is_refused(capsys):
    target = package_dir() / "store-here"
    assert main(["init", "--owner", "tester", str(target)]) == 2
    assert "inside the installed tool" in capsys.readouterr().err
    assert not target.exists()
    assert not [p for p in package_dir().iterdir() if ".init-" in p.name]


def _read_only_run(folder: Path, target: Path) -> subprocess.CompletedProcess:
    """`catalog init TARGET` with `folder` read-only: a read-only bind mount as root (unshare), chmod otherwise."""
    argv = [sys.executable, "-m", "generator.cli", "init", "--owner", "tester", str(target)]
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
    assert main(["init", "--owner", "tester", str(tmp_path / "new" / "store")]) == 2
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
    assert main(["init", "--owner", "tester", str(store)]) == 0
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
    assert main(["init", "--owner", "tester", str(store)]) == 0
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
    assert main(["init", "--owner", "tester", str(store)]) == 0
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


# --- the store is its owner's (issue 42) ------------------------------------------------------------------------

MAINTAINER = ("aamsellem", "workers.dev", "orales-one-market.")
# What may name the embedded catalog's maintainer in a new store: a citation of his public repository, or a container
# image he built that a copied stack runs (`aamsellem/<image>:<tag>`); never an owner, an icon, a URL of his worker.
CITATION = re.compile(r"github\.com/aamsellem/(?:olares|orales)-one-market|aamsellem/[a-z0-9._-]+:[A-Za-z0-9._-]+")


def traces(store: Path) -> list[str]:
    """Every line of every file of `store` (its git folder aside) that names the maintainer other than as a citation."""
    found = []
    for path in sorted(store.rglob("*")):
        if not path.is_file() or ".git" in path.relative_to(store).parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            rest = CITATION.sub("", line)
            if any(mark in rest for mark in MAINTAINER):
                found.append(f"{path.relative_to(store)}:{number}: {line.strip()[:160]}")
    return found


def test_a_new_store_is_its_owners(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    title = "Alice's <b>models</b> [store](x)"
    assert main(["init", str(store), "--owner", "alice", "--icons-url", "https://icons.example.org/alice",
                 "--title", title]) == 0
    capsys.readouterr()
    assert traces(store) == []
    app = load_catalog(store / "catalog").apps[EXAMPLE].app
    assert app.owners == ("alice",) and app.icon == f"https://icons.example.org/alice/{EXAMPLE}.png"
    assert app.upgrade_description is None  # the maintainer's release notes are his market's history
    assert (store / "charts" / EXAMPLE / "owners").read_text().split() == ["owners:", "-", "alice"]
    manifest = (store / "charts" / EXAMPLE / "OlaresManifest.yaml").read_text()
    assert "developer: alice" in manifest and "submitter: alice" in manifest
    market = load_catalog(store / "catalog").market
    assert market.icons is not None and market.icons.base_url == "https://icons.example.org/alice/"
    assert market.icons.serves(app.icon)
    readme = (store / "README.md").read_text()
    assert readme.startswith("# Alice's &lt;b&gt;models&lt;/b&gt; \\[store\\]\\(x\\)")
    assert "owners: [alice]" in readme and "https://icons.example.org/alice/" in readme
    monkeypatch.chdir(store)
    assert main(["check", "--no-lint", "--json"]) == 0
    assert "MKT001" not in capsys.readouterr().out


def test_a_store_s_icons_default_to_its_own_repository(tmp_path, capsys):
    store = tmp_path / "my-store"
    assert main(["init", str(store), "--owner", "bob"]) == 0
    capsys.readouterr()
    base = "https://raw.githubusercontent.com/bob/my-store/main/icons/"
    assert load_catalog(store / "catalog").apps[EXAMPLE].app.icon == f"{base}{EXAMPLE}.png"
    assert base in (store / "icons" / "README.md").read_text() and traces(store) == []


@pytest.mark.parametrize(("args", "said"), [
    ([], "give --owner NAME"),
    (["--owner", "not a name"], "a GitHub user or organisation name"),
    (["--owner", "alice", "--icons-url", "http://icons.example.org/"], "an https URL"),
    (["--owner", "alice", "--icons-url", "https://user:pw@icons.example.org/"], "without credentials"),
    (["--owner", "alice", "--title", "two\nlines"], "--title"),
])
def test_a_store_without_an_owner_or_with_a_bad_identity_is_refused(tmp_path, capsys, args, said):
    """No terminal (pytest's stdin): the owner comes from --owner or the command stops before writing anything."""
    assert main(["init", str(tmp_path / "store"), *args]) == 2
    assert said in capsys.readouterr().err
    assert siblings(tmp_path) == ["home"]


def test_the_readme_s_first_steps_run_as_written(tmp_path, capsys):
    """The `## First steps` block of a new store's README, each line run by bash in the store with the tool on PATH."""
    store = tmp_path / "store"
    assert main(["init", str(store), "--owner", "alice"]) == 0
    capsys.readouterr()
    readme = (store / "README.md").read_text()
    block = re.search(r"## First steps\n.*?```bash\n(.*?)```", readme, re.S)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert [line.split()[:2] for line in lines][:2] == [["catalog", "render"], ["catalog", "check"]]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for line in lines:
        done = subprocess.run(["bash", "-c", line], cwd=store, env=env, capture_output=True, text=True, timeout=300,
                              check=False)
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])


def test_init_of_the_current_folder_says_the_next_step_without_cd(tmp_path, monkeypatch, capsys):
    store = tmp_path / "here"
    store.mkdir()
    monkeypatch.chdir(store)
    assert main(["init", ".", "--owner", "alice"]) == 0
    out = capsys.readouterr().out
    assert "next: catalog render && catalog check" in out and "cd ." not in out


# --- issue 40: an install record's credentials and text never reach the store -----------------------------------

SECRET = "ghp_S3cretT0kenNeverWritten1234567890"


@pytest.mark.parametrize("record", [
    {"url": f"https://bot:{SECRET}@github.com/someone/catalog.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
    {"url": f"https://{SECRET}@github.com/someone/catalog.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
    {"url": f"https://example.org/olares_llm_catalog-0.1.0-py3-none-any.whl?token={SECRET}", "archive_info": {}},
    {"url": f"https://x-access-token:{SECRET}@example.org/catalog.whl", "archive_info": {}},
])
def test_a_credential_in_the_install_record_is_never_written_or_printed(tmp_path, monkeypatch, capsys, record):
    from generator.cli import install_source

    monkeypatch.setattr("generator.cli.install_source.installed", lambda: install_source.from_record(record, "0.1.0"))
    store = tmp_path / "store"
    assert main(["init", str(store), "--owner", "alice"]) == 0
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    assert "credentials" in captured.err  # said why the store's CI cannot install from it as recorded
    for path in store.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in git(store, "log", "-p", "--all")


def test_a_clone_s_origin_with_a_token_gives_the_url_without_it(tmp_path):
    """Real git: an editable install from a clone whose origin carries a token."""
    from generator.cli.install_source import _clone, from_record

    clone = tmp_path / "catalog"
    clone.mkdir()
    git(clone, "init", "--quiet")
    git(clone, "remote", "add", "origin", f"https://bot:{SECRET}@github.com/someone/catalog.git")
    (clone / "x").write_text("x\n")
    git(clone, "add", "x")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet", "-m", "x")
    found = _clone(clone)
    assert found is not None and SECRET not in found[0]
    source = from_record({"url": clone.as_uri(), "dir_info": {"editable": True}}, "0.1.0", found)
    assert SECRET not in repr(source) and source.requirement is not None
    assert source.requirement.startswith("olares-llm-catalog @ git+https://github.com/someone/catalog.git@")


@pytest.mark.parametrize(("text", "said"), [
    ("[" * 200_000 + "]" * 200_000, "more than the"),  # issue 40's record: refused before parsing
    ("[" * 30_000 + "]" * 30_000, "nested deeper"),  # under the size cap, too deep for the JSON reader
    ('{"url": "' + "x" * 100_000 + '"}', "more than the"),
    ("{not json", "not JSON"),
])
def test_a_hostile_install_record_is_refused_with_a_message(text, said):
    from generator.cli.install_source import read_record

    parsed, problem = read_record(text)
    assert parsed is None and said in problem


def test_text_of_an_install_record_is_inert_in_the_readme(tmp_path, monkeypatch, capsys):
    """A non-https URL from the record reaches the README only escaped: no tag, no image, no link."""
    from generator.cli import install_source

    record = {"url": "http://example.org/x.whl#<img src=x onerror=alert(1)>![i](http://e/x)", "archive_info": {}}
    monkeypatch.setattr("generator.cli.install_source.installed", lambda: install_source.from_record(record, "0.1.0"))
    store = tmp_path / "store"
    assert main(["init", str(store), "--owner", "alice"]) == 0
    assert "plain http" in capsys.readouterr().err
    readme = (store / "README.md").read_text()
    assert "<img" not in readme and "![i](" not in readme and "&lt;img" in readme


def test_on_a_terminal_init_asks_for_the_owner_and_offers_defaults(tmp_path):
    """A real pseudo-terminal: init asks for the owner, the icon base (the store's own icons/ as default) and the
    title (the folder name as default); Enter takes the defaults."""
    import pty
    import select
    import time

    store = tmp_path / "asked"
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path / "home"), "TERM": "dumb"}
    leader, follower = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "generator.cli", "init", str(store)], stdin=follower,
                          stdout=follower, stderr=follower, env=env, cwd=tmp_path) as proc:
        os.close(follower)
        said, mark = b"", 0
        for prompt, answer in ((b"organisation): ", b"alice\n"), (b"]: ", b"\n"), (b"]: ", b"\n")):
            deadline = time.monotonic() + 60
            while prompt not in said[mark:] and time.monotonic() < deadline:
                if select.select([leader], [], [], 1)[0]:
                    said += os.read(leader, 4096)
            assert prompt in said[mark:], said.decode(errors="replace")
            mark = said.index(prompt, mark) + len(prompt)  # the next prompt comes after this one
            os.write(leader, answer)
        while select.select([leader], [], [], 60)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            said += chunk
        assert proc.wait(timeout=120) == 0, said.decode(errors="replace")
    os.close(leader)
    text = said.decode(errors="replace")
    assert "Owner of the store" in text and "raw.githubusercontent.com/alice/asked/main/icons/" in text
    app = load_catalog(store / "catalog").apps[EXAMPLE].app
    assert app.owners == ("alice",) and app.icon.startswith("https://raw.githubusercontent.com/alice/asked/")
    assert (store / "README.md").read_text().startswith("# asked:")
