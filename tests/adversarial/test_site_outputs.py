"""Where `catalog site --out DIR` and `catalog publish --to market:DIR` may write (issue 22, minor causes): never
through a linked DIR/plots or DIR/src, never into charts/ or catalog/, and a plain message for a file given as
the folder. Each attack runs the real command and checks that nothing outside the chosen folder changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.adversarial import snapshot
from support.bump import run_cli
from support.market import make_store


@pytest.fixture
def store(tmp_path, rendered_market) -> Path:
    return make_store(tmp_path / "store", rendered_market)


def test_site_does_not_write_through_a_linked_plots_folder(store, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "site"
    out.mkdir()
    (out / "plots").symlink_to(elsewhere)
    code, _, err = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"))
    assert code != 0 and "symbolic link" in err
    assert list(elsewhere.iterdir()) == [] and not (out / "index.html").exists()  # nothing half-written


@pytest.mark.parametrize("inside", ["charts", "catalog", "charts/deeper"])
def test_site_refuses_an_out_folder_inside_the_charts_or_the_catalog(store, capsys, inside):
    before = snapshot(store)
    code, _, err = run_cli(capsys, "site", "--out", str(store / inside), "--catalog", str(store / "catalog"))
    assert code != 0 and "the site is not catalog input or a chart" in err
    assert snapshot(store) == before


def test_site_says_a_file_is_not_a_folder(store, tmp_path, capsys):
    out = tmp_path / "site.html"
    out.write_text("mine")
    code, _, err = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"))
    assert code != 0 and "a file, not a folder" in err and "File exists" not in err
    assert out.read_text() == "mine"


def test_publish_does_not_write_through_a_linked_src(store, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "worker"
    out.mkdir()
    (out / "src").symlink_to(elsewhere)
    code, out_text, err = run_cli(capsys, "publish", "--to", f"market:{out}", "--catalog", str(store / "catalog"),
                                  "--json")
    assert code != 0 and "symbolic link" in out_text + err
    assert list(elsewhere.iterdir()) == []


def test_publish_refuses_linked_or_hostile_icons(store, tmp_path, capsys):
    out = tmp_path / "worker"
    (out / "icons").mkdir(parents=True)
    (out / "icons" / "x.png").symlink_to("/dev/zero")
    code, out_text, err = run_cli(capsys, "publish", "--to", f"market:{out}", "--catalog", str(store / "catalog"),
                                  "--json")
    assert code != 0 and "x.png" in out_text + err
    assert not (out / "src" / "catalog.json").exists()
