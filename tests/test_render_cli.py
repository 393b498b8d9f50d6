"""`catalog render` end to end through `generator.cli.main`: determinism, --check, stale folders, atomicity."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.cli import main

from support.catalogs import SMALL as FIXTURE

APPS = ("gemmalab", "qwenlab", "qwenvisionlab")


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    return dest


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(folder: Path) -> list[str]:
    """Hidden entries but the tool's own list of the folders it owns (charts/.catalog-render)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name != ".catalog-render")


def render(catalog: Path, *args: str) -> int:
    return main(["render", "--catalog", str(catalog), *args])


def test_render_twice_is_byte_identical(catalog):
    charts = catalog.parent / "charts"
    assert render(catalog) == 0
    first = snapshot(charts)
    assert sorted({k.split("/")[0] for k in first}) == [".catalog-render", *APPS]
    assert render(catalog) == 0
    assert snapshot(charts) == first


def test_check_is_clean_after_render(catalog, capsys):
    assert render(catalog) == 0
    capsys.readouterr()
    assert render(catalog, "--check") == 0
    assert "up to date: 3 chart(s)" in capsys.readouterr().out


def test_check_before_any_render_lists_every_file(catalog, capsys):
    assert render(catalog, "--check") == 1
    out = capsys.readouterr().out
    assert all(f"+++ b/{app}/OlaresManifest.yaml" in out for app in APPS)
    assert not (catalog.parent / "charts").exists() or not any((catalog.parent / "charts").iterdir())


def test_check_fails_with_a_diff_after_a_hand_edit(catalog, capsys):
    assert render(catalog) == 0
    values = catalog.parent / "charts" / "qwenlab" / "values.yaml"
    before = snapshot(catalog.parent / "charts")
    values.write_text(values.read_text(encoding="utf-8").replace("--jinja", "--no-jinja"), encoding="utf-8")
    capsys.readouterr()
    assert render(catalog, "--check") == 1
    captured = capsys.readouterr()
    assert "--- a/qwenlab/values.yaml" in captured.out and "+++ b/qwenlab/values.yaml" in captured.out
    assert "-  - --no-jinja" in captured.out and "+  - --jinja" in captured.out
    assert "stale" in captured.err
    assert snapshot(catalog.parent / "charts")["qwenlab/values.yaml"] != before["qwenlab/values.yaml"]  # untouched


def test_check_fails_on_a_stale_chart_folder_and_render_removes_it(catalog, capsys):
    """A chart folder render wrote itself goes once its app leaves the catalog; a folder it did not write
    (a hand-made copy) is reported by --check and refused by render: nothing is deleted."""
    assert render(catalog) == 0
    charts = catalog.parent / "charts"
    shutil.copytree(charts / "qwenlab", charts / "oldapp")
    capsys.readouterr()
    assert render(catalog, "--check") == 1
    assert "--- a/oldapp/Chart.yaml" in capsys.readouterr().out
    assert render(catalog) == 2
    assert "oldapp/" in capsys.readouterr().err and (charts / "oldapp" / "Chart.yaml").is_file()
    shutil.rmtree(charts / "oldapp")
    (catalog / "apps" / "qwenvisionlab.yaml").unlink()
    assert render(catalog) == 0
    assert "removed stale" in capsys.readouterr().out
    assert sorted(p.name for p in charts.iterdir()) == [".catalog-render", "gemmalab", "qwenlab"]
    assert render(catalog, "--check") == 0


def test_check_after_an_app_is_removed_from_the_catalog(catalog, capsys):
    assert render(catalog) == 0
    (catalog / "apps" / "qwenvisionlab.yaml").unlink()
    capsys.readouterr()
    assert render(catalog, "--check") == 1
    assert "--- a/qwenvisionlab/values.yaml" in capsys.readouterr().out


def test_naming_apps_renders_only_those_and_keeps_the_others(catalog):
    assert render(catalog) == 0
    charts = catalog.parent / "charts"
    (charts / "qwenlab" / "owners").write_text("edited\n", encoding="utf-8")
    assert render(catalog, "gemmalab") == 0
    assert (charts / "qwenlab" / "owners").read_text(encoding="utf-8") == "edited\n"
    assert render(catalog, "qwenlab") == 0
    assert (charts / "qwenlab" / "owners").read_text(encoding="utf-8") != "edited\n"


def _fail_on_call(n: int, real):
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            raise RuntimeError(f"injected failure on call {n}")
        return real(*args, **kwargs)

    return wrapper


def test_renderer_failing_on_the_second_app_changes_nothing(catalog, monkeypatch, capsys):
    import generator.chart.pipeline

    assert render(catalog) == 0
    charts = catalog.parent / "charts"
    (catalog / "apps" / "qwenlab.yaml").write_text(
        (catalog / "apps" / "qwenlab.yaml").read_text(encoding="utf-8").replace("1.0.0", "1.0.1"), encoding="utf-8")
    before = snapshot(charts)
    monkeypatch.setattr(generator.chart.pipeline, "render", _fail_on_call(2, generator.chart.pipeline.render))
    assert render(catalog) == 2  # an internal error: exit 2 with a message
    assert "injected failure" in capsys.readouterr().err
    assert snapshot(charts) == before
    assert leftovers(catalog.parent) == [] and leftovers(charts) == []


@pytest.mark.parametrize("target, call", [("_write", 2), ("_write_file", 5), ("_write_file", 22), ("exchange", 1)])
def test_writer_failing_midway_restores_the_previous_charts(catalog, monkeypatch, capsys, target, call):
    """A failure while writing the staged tree, its list, or in the exchange itself leaves the old charts."""
    import generator.chart.writer as writer

    assert render(catalog) == 0
    charts = catalog.parent / "charts"
    for app in APPS:  # every chart changes, so every folder is staged and swapped
        path = catalog / "apps" / f"{app}.yaml"
        path.write_text(path.read_text(encoding="utf-8") + "upgrade_description: v2\n", encoding="utf-8")
    before = snapshot(charts)
    monkeypatch.setattr(writer, target, _fail_on_call(call, getattr(writer, target)))
    assert render(catalog) == 2  # an internal error: exit 2 with a message
    assert "injected failure" in capsys.readouterr().err
    monkeypatch.undo()
    assert snapshot(charts) == before
    assert leftovers(catalog.parent) == [] and leftovers(charts) == []


def test_unknown_option_is_a_usage_error(capsys):
    assert main(["render", "--bogus"]) == 2
    assert "No such option: --bogus" in capsys.readouterr().err


def test_unchanged_charts_are_not_rewritten(catalog):
    """A re-render only swaps the folders whose content changed (the others keep their files)."""
    assert render(catalog) == 0
    charts = catalog.parent / "charts"
    inodes = {app: (charts / app / "values.yaml").stat().st_ino for app in APPS}
    path = catalog / "apps" / "qwenlab.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "upgrade_description: v2\n", encoding="utf-8")
    assert render(catalog) == 0
    after = {app: (charts / app / "values.yaml").stat().st_ino for app in APPS}
    assert after["gemmalab"] == inodes["gemmalab"] and after["qwenvisionlab"] == inodes["qwenvisionlab"]
    assert after["qwenlab"] != inodes["qwenlab"]
    assert "v2" in (charts / "qwenlab" / "OlaresManifest.yaml").read_text(encoding="utf-8")


def test_render_repairs_a_list_of_owned_folders_a_merge_left_out_of_order(catalog, capsys):
    """Two branches that each add an app merge into an unsorted charts/.catalog-render: `render --check` calls it
    stale, so `render` must rewrite it even though every chart folder is already right."""
    charts = catalog.parent / "charts"
    assert render(catalog) == 0
    listing = charts / ".catalog-render"
    lines = listing.read_text().splitlines(keepends=True)
    header = [line for line in lines if line.startswith("#")]
    listing.write_text("".join(header + sorted(set(lines) - set(header), reverse=True)))
    capsys.readouterr()
    assert render(catalog, "--check") == 1
    assert render(catalog) == 0
    assert render(catalog, "--check") == 0
    assert "up to date" in capsys.readouterr().out


def test_profile_picks_the_format_for_one_render(catalog, capsys):
    """Default olares-v3 (0.12.0, i18n/en-US); --profile olares-v2 writes 0.10.0 without i18n; a v3 --check
    against the v2 render is stale; an unknown profile is a usage error (exit 2) that names the known ones."""
    charts = catalog.parent / "charts"
    assert render(catalog) == 0
    assert "olaresManifest.version: 0.12.0" in (charts / "qwenlab" / "OlaresManifest.yaml").read_text()
    assert (charts / "qwenlab" / "i18n" / "en-US" / "OlaresManifest.yaml").is_file()
    assert render(catalog, "--profile", "olares-v2") == 0
    assert "olaresManifest.version: 0.10.0" in (charts / "qwenlab" / "OlaresManifest.yaml").read_text()
    assert not (charts / "qwenlab" / "i18n").exists()
    assert render(catalog, "--check", "--profile", "olares-v2") == 0
    assert render(catalog, "--check") == 1
    capsys.readouterr()
    assert render(catalog, "--profile", "olares-v9") == 2
    assert "known: olares-v2, olares-v3" in capsys.readouterr().err
