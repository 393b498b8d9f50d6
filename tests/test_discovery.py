"""Which catalog a command uses (like git finds its repository), the embedded catalog being read-only, and
the CLI polish around it: the stderr line, did-you-mean, quoted versions, `list` at 80 columns and piped,
"nothing was written" only from commands that write."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.catalogs import EMBEDDED, REPO, edit_app

from generator.catalog import load_catalog
from generator.cli import main
from generator.core.errors import UsageError
from generator.core.locate import (
    CatalogChoice,
    choose_catalog,
    embedded_catalog,
    find_upward,
    inside_package,
    package_dir,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "catalog_small"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """tmp_path/store/catalog: a copy of the small fixture catalog, charts not yet rendered."""
    root = tmp_path / "store"
    shutil.copytree(FIXTURE, root / "catalog")
    return root


@pytest.fixture(autouse=True)
def _no_catalog_dir(monkeypatch):
    monkeypatch.delenv("CATALOG_DIR", raising=False)


# --- choosing ------------------------------------------------------------------------------------------------

def test_the_option_wins_over_the_variable_and_the_folder(store, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(FIXTURE, other)
    choice = choose_catalog(other, {"CATALOG_DIR": str(store / "catalog")}, store)
    assert (choice.root, choice.how) == (other, "--catalog")
    choice = choose_catalog(None, {"CATALOG_DIR": str(other)}, store)
    assert (choice.root, choice.how) == (other, "CATALOG_DIR")


def test_the_nearest_catalog_walking_up_from_the_current_folder(store):
    deep = store / "catalog" / "apps"
    assert find_upward(deep) == (store / "catalog").resolve()
    nested = store / "sub" / "catalog"
    shutil.copytree(FIXTURE, nested)
    (store / "sub" / "work").mkdir()
    assert choose_catalog(None, {}, store / "sub" / "work").root == nested.resolve()  # the nearest one
    assert choose_catalog(None, {}, store).root == (store / "catalog").resolve()


def test_a_catalog_folder_needs_apps(store):
    (store / "empty" / "catalog").mkdir(parents=True)  # no apps/: not a catalog, keep walking up
    assert choose_catalog(None, {}, store / "empty").root == (store / "catalog").resolve()


def test_without_any_the_embedded_catalog_is_used_and_read_only(tmp_path):
    choice = choose_catalog(None, {}, tmp_path)
    assert choice.how == "embedded" and choice.root == embedded_catalog() and choice.read_only
    assert "read-only" in choice.describe() and "catalog init" in choice.describe()


def test_a_bad_catalog_dir_names_the_variable(tmp_path):
    with pytest.raises(UsageError, match=r"^CATALOG_DIR=.*not a catalog.*CATALOG_DIR"):
        choose_catalog(None, {"CATALOG_DIR": str(tmp_path / "nope")}, tmp_path)
    with pytest.raises(UsageError, match=r"^--catalog .*not a catalog"):
        choose_catalog(tmp_path, {}, tmp_path)


def test_the_installed_package_is_never_a_place_to_write(tmp_path):
    assert inside_package(package_dir() / "cli")
    assert not inside_package(tmp_path)
    assert CatalogChoice(package_dir() / "_data" / "catalog", "found").read_only  # where a wheel keeps it
    assert not CatalogChoice(tmp_path, "found").read_only


def test_data_is_found_with_importlib_resources_in_a_checkout():
    assert embedded_catalog() == REPO / "catalog"  # a source checkout: the repository's folders
    assert (embedded_catalog() / "apps").is_dir()
    from generator.chart.render import TEMPLATES

    assert (TEMPLATES / "Chart.yaml.j2").is_file() and (TEMPLATES / "store" / "README.md").is_file()


# --- the CLI ------------------------------------------------------------------------------------------------

def test_commands_in_a_store_use_its_catalog_and_write_beside_it(store, monkeypatch, capsys):
    (store / "notes").mkdir()
    monkeypatch.chdir(store / "notes")
    assert main(["render"]) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("catalog:")] == [
        f"catalog: {store / 'catalog'} (found from the current folder)"]
    assert sorted(p.name for p in (store / "charts").iterdir() if p.is_dir()) == ["gemmalab", "qwenlab", "qwenvisionlab"]
    assert list((store / "notes").iterdir()) == []  # nothing in the current folder
    assert main(["render", "--check"]) == 0


def test_catalog_dir_is_used_from_anywhere(store, tmp_path, monkeypatch, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("CATALOG_DIR", str(store / "catalog"))
    assert main(["render"]) == 0
    assert "(from $CATALOG_DIR)" in capsys.readouterr().err
    assert (store / "charts" / "qwenlab").is_dir() and list(elsewhere.iterdir()) == []
    monkeypatch.setenv("CATALOG_DIR", str(elsewhere))
    assert main(["list"]) == 2
    assert "CATALOG_DIR=" in capsys.readouterr().err


def test_json_output_has_no_catalog_line(store, monkeypatch, capsys):
    monkeypatch.chdir(store)
    assert main(["list", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "catalog:" not in err and out.lstrip().startswith("[")


@pytest.mark.parametrize("argv", [
    ["render"], ["render", "gemma4e2bone"], ["bump"], ["bump", "gemma4e2bone", "--level", "patch"],
    ["prune", "--deprecated"], ["smoke", "gemma4e2bone", "--endpoint", "http://127.0.0.1:9"],
])
def test_writing_commands_refuse_the_embedded_catalog(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no catalog/ above: the embedded one
    before = sorted(p.relative_to(REPO) for p in (REPO / "catalog").rglob("*"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "read-only" in err and "catalog init" in err and "Traceback" not in err
    assert sorted(p.relative_to(REPO) for p in (REPO / "catalog").rglob("*")) == before
    assert list(tmp_path.iterdir()) == []


def test_reading_commands_work_on_the_embedded_catalog(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for argv in (["list"], ["explain", "gemma4e2bone"], ["render", "--check"], ["bump", "--check"],
                 ["prune", "--deprecated", "--dry-run", "--json"]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code in (0, 1) and "Traceback" not in err, (argv, err)
    assert list(tmp_path.iterdir()) == []


def test_render_out_elsewhere_is_allowed_from_the_embedded_catalog(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["render", "gemma4e2bone", "--out", str(tmp_path / "charts")]) == 0
    assert (tmp_path / "charts" / "gemma4e2bone" / "Chart.yaml").is_file()
    assert main(["render", "gemma4e2bone", "--out", str(package_dir() / "charts")]) == 2
    assert "inside the installed tool" in capsys.readouterr().err
    assert not (package_dir() / "charts").exists()


def test_unknown_app_gets_did_you_mean(capsys):
    assert main(["explain", "gemma4e2bne", "--catalog", str(EMBEDDED)]) == 2
    assert "unknown app(s): gemma4e2bne (did you mean gemma4e2bone?)" in capsys.readouterr().err
    assert main(["render", "zzzzzz", "--catalog", str(EMBEDDED), "--check"]) == 2
    err = capsys.readouterr().err
    assert "zzzzzz" in err and "did you mean" not in err


def test_a_version_typed_as_a_number_says_how_to_quote_it(catalog_copy, capsys):
    path = catalog_copy / "apps" / "gemma4e2bone.yaml"
    path.write_text(path.read_text().replace("version: 1.0.2", "version: 1.1"))
    assert main(["list", "--catalog", str(catalog_copy)]) == 1
    err = capsys.readouterr().err
    assert re.search(r"gemma4e2bone\.yaml:\d+: version: 1\.1 is a YAML number; quote versions: '1\.1\.0'$",
                     err, re.MULTILINE), err


def test_nothing_was_written_only_from_commands_that_write(catalog_copy, capsys):
    edit_app(catalog_copy, "gemma4e2bone", context_length="many")
    assert main(["list", "--catalog", str(catalog_copy)]) == 1
    err = capsys.readouterr().err
    assert "1 problem(s)." in err and "nothing was written" not in err
    assert main(["render", "--catalog", str(catalog_copy)]) == 1
    assert "1 problem(s); nothing was written." in capsys.readouterr().err


# --- catalog list at 80 columns and piped ------------------------------------------------------------------------

def _list_out(catalog: Path, columns: str | None) -> str:
    """`catalog list` on a terminal of `columns` (a pseudo-terminal, TERM=dumb: no styles), or piped (None)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "CATALOG_DIR")}
    argv = [sys.executable, "-m", "generator.cli", "list", "--catalog", str(catalog)]
    if columns is None:
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout
    import pty

    env |= {"COLUMNS": columns, "LINES": "50", "TERM": "dumb"}  # rich: a dumb terminal is 80x25 unless both given
    leader, follower = pty.openpty()
    with subprocess.Popen(argv, cwd=REPO, env=env, stdout=follower, stderr=subprocess.PIPE) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.parametrize("columns", ["80", "100", "120"])
def test_list_shows_every_name_version_and_status_whole(columns):
    """A shown column is never cut: name, version and status always (issue 42: at 80 columns they were dropped);
    stack, speed/roof and the model whole or named as dropped."""
    out = _list_out(EMBEDDED, columns)
    cat = load_catalog(EMBEDDED)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= int(columns)
    header = lines[1].split()
    assert "name" in header and "version" in header and "status" in header
    shown = {col: col in header for col in ("model", "stack", "speed/roof")}
    assert all(on or col in out.split("too narrow for:")[1] for col, on in shown.items())
    for r in cat.apps.values():
        row = next((line for line in lines if line.split()[:1] == [r.app.name]), None)
        assert row is not None, f"{r.app.name} not whole in:\n{out}"
        assert r.app.version in row.split() and r.app.status in row.split(), row
        assert not shown["stack"] or r.stack.id in row.split(), row
        assert not shown["model"] or r.model.name in row, row
    if columns == "80":
        assert "too narrow for:" in out


def test_list_piped_keeps_every_column():
    """`catalog list | cat`: nothing to fit, every column (issue 24)."""
    out = _list_out(EMBEDDED, None)
    header = out.splitlines()[1].split()
    assert header == ["name", "title", "model", "stack", "context", "version", "status", "t/s", "pred", "t/s",
                      "speed/roof", "smoke"]  # "pred t/s": the speed model (issue 41)
    assert "too narrow" not in out


def test_list_at_full_width_has_every_column_and_escapes_markup(catalog_copy):
    edit_app(catalog_copy, "gemma4e2bone", title="[bold]Gemma[/bold] E2B")
    out = _list_out(catalog_copy, "240")
    assert "[bold]Gemma[/bold] E2B" in out and "too narrow" not in out
    assert all(col in out.splitlines()[1] for col in ("name", "title", "model", "stack", "context", "version",
                                                      "status", "t/s", "smoke"))
