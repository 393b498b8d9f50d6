"""Which versions a Market Source may serve: only those releases.yaml records, with the recorded content, found
in charts/ or in the git history of the charts folder (real git, real Helm packages)."""

from __future__ import annotations

import shutil

from support.bump import git, run_cli
from support.market import chart_dirs, make_store

from generator.market.source import PackageCache, collect
from generator.versions.releases import load_releases

APP = "gemma4e2bone"


def test_current_charts_are_served_without_git(tmp_path, rendered_market):
    shutil.copytree(rendered_market / "catalog", tmp_path / "catalog")
    shutil.copytree(rendered_market / "charts", tmp_path / "charts")
    got = collect(tmp_path / "catalog", tmp_path / "charts")
    releases = load_releases(tmp_path / "catalog")
    assert got.problems == ()
    assert {(r.app, r.version) for r in got.releases} == {(a, releases.latest(a).version) for a in got.every_listed}
    assert got.every_listed == {p.name for p in chart_dirs(tmp_path / "charts")}


def test_an_unrecorded_or_edited_chart_is_not_served(tmp_path, capsys, rendered_market):
    store = make_store(tmp_path / "store", rendered_market)
    catalog, charts = store / "catalog", store / "charts"
    released = load_releases(catalog).latest(APP).version
    chart_yaml = charts / APP / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace(f"version: {released}", "version: 9.9.9"))
    values = charts / "gemma426ba4bone" / "values.yaml"
    values.write_text(values.read_text() + "# edited by hand\nextra: 1\n")
    got = collect(catalog, charts)
    assert any(f"charts/{APP} is at 9.9.9, which releases.yaml does not record" in p for p in got.problems)
    assert any("charts/gemma426ba4bone" in p and "differs from the content" in p for p in got.problems)
    # both stay listed at their released version, found in git with the recorded content
    versions = {(r.app, r.version) for r in got.releases}
    assert (APP, released) in versions and (APP, "9.9.9") not in versions
    assert ("gemma426ba4bone", load_releases(catalog).latest("gemma426ba4bone").version) in versions
    assert {APP, "gemma426ba4bone"} <= got.every_listed


def test_every_released_version_is_found_in_history_and_packaged_once(tmp_path, capsys, rendered_market):
    store = make_store(tmp_path / "store", rendered_market)
    catalog, charts = store / "catalog", store / "charts"
    first = load_releases(catalog).latest(APP).version
    for note in ("second", "third"):
        assert run_cli(capsys, "bump", APP, "--note", note, "--catalog", str(catalog))[0] == 0
        git(store, "add", "-A")
        git(store, "commit", "-q", "-m", note)
    versions = sorted(load_releases(catalog).apps[APP])
    assert len(versions) == 3 and first in versions
    cache = PackageCache()
    got = collect(catalog, charts, cache)
    assert sorted(r.version for r in got.releases if r.app == APP) == versions
    packages = {r.file_name: r.package for r in got.releases}
    again = collect(catalog, charts, cache)  # released versions never change: packaged once
    assert all(packages[r.file_name] is r.package for r in again.releases)
    shutil.rmtree(store / ".git")  # without git only the current chart of each app can be served
    alone = collect(catalog, charts)
    assert [r.version for r in alone.releases if r.app == APP] == [load_releases(catalog).latest(APP).version]
    assert sum("no chart with its content was found" in p for p in alone.problems) == 2


def test_a_removed_app_stays_downloadable_but_unlisted(tmp_path, rendered_market):
    store = make_store(tmp_path / "store", rendered_market)
    shutil.rmtree(store / "charts" / APP)
    got = collect(store / "catalog", store / "charts")
    assert APP not in got.every_listed
    assert any(r.app == APP for r in got.releases)  # from git: installed copies can still download it
    assert not any(APP in p for p in got.problems)


def test_a_version_recorded_after_a_change_that_kept_its_number_is_found(tmp_path, capsys, rendered_market):
    """The released content of a version may come from a commit that changed another chart file than
    Chart.yaml (the version kept its number, then was recorded): history is searched by chart folder."""
    from generator.chart.writer import read_tree
    from generator.versions.releases import Release
    from generator.versions.state import content_hash

    store = make_store(tmp_path / "store", rendered_market)
    catalog, charts = store / "catalog", store / "charts"
    values = charts / APP / "values.yaml"
    values.write_text(values.read_text() + "marketTest: 1\n")
    releases = load_releases(catalog)
    old = releases.latest(APP)
    releases.record(APP, Release(old.version, content_hash(read_tree(charts / APP)), old.date, old.state))
    releases.save()
    git(store, "commit", "-qam", "values changed, same version, recorded")
    assert run_cli(capsys, "bump", APP, "--note", "next", "--catalog", str(catalog))[0] == 0
    git(store, "add", "-A")
    git(store, "commit", "-qm", "next version")
    got = collect(catalog, charts)
    assert got.problems == ()
    assert sorted(r.version for r in got.releases if r.app == APP) == sorted(load_releases(catalog).apps[APP])
