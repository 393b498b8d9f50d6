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


def test_packages_are_made_on_first_download_with_the_bytes_an_eager_build_made(tmp_path, capsys, rendered_market):
    """`catalog serve` answers before it packages anything (issue 35): a package is made when first read, once,
    and is byte for byte what packaging at once gives (publish/package.py is reproducible)."""
    from generator.publish.market import build_markets, package_bytes

    store = make_store(tmp_path / "store", rendered_market)
    cache = PackageCache()
    got = collect(store / "catalog", store / "charts", cache)
    charts = next(iter(build_markets(got.releases, {}).values())).charts
    assert len(charts) == len(got.releases) and not any(charts.ready(n) for n in charts)  # type: ignore[attr-defined]
    rel = next(r for r in got.releases if r.app == APP)
    assert charts[rel.file_name] == package_bytes(rel.tree, rel.app, rel.version, rel.date, helm=cache.helm)
    assert charts.ready(rel.file_name) and charts[rel.file_name] is charts[rel.file_name]  # type: ignore[attr-defined]
    assert sum(charts.ready(n) for n in charts) == 1  # type: ignore[attr-defined]


def test_history_trees_read_in_one_batch_equal_the_trees_read_one_by_one(tmp_path, capsys, rendered_market):
    """gitbase.py `trees` reads many chart folders of the git history with a few git processes; each tree is the
    one `tree` reads alone (nested folders such as templates/ and i18n/en-US/ included)."""
    from generator.adapters.git import Git
    from generator.versions.gitbase import GitCharts

    store = make_store(tmp_path / "store", rendered_market)
    for note in ("second", "third"):
        assert run_cli(capsys, "bump", APP, "--note", note, "--catalog", str(store / "catalog"))[0] == 0
        git(store, "add", "-A")
        git(store, "commit", "-q", "-m", note)
    gc = GitCharts.locate(store / "charts", Git())
    commits = gc.git.text(gc.repo, "log", "--format=%H", "HEAD").split()
    ids = {gc.git.text(gc.repo, "rev-parse", f"{c}:{gc.folder}/{app}").strip(): (c, app)
           for c in commits for app in (APP, "gemma426ba4bone")}
    batch = gc.trees(list(ids))
    assert len(batch) == len(ids) >= 3
    for tree_id, (commit, app) in ids.items():
        one = gc.tree(commit, app)
        assert batch[tree_id] == one and any("/" in path for path in one)


def test_the_first_snapshot_answers_before_the_git_history_is_read(tmp_path, capsys, rendered_market):
    """`catalog serve`'s first snapshot serves charts/ without reading git history (issue 35: /health within
    seconds); an older version is then `503 Retry-After`, /health says `starting`, and the watcher's first rebuild
    swaps in the whole market. Real Starlette app over real git, through Starlette's in-process client."""
    from starlette.testclient import TestClient

    from generator.market.api import Holder, make_app
    from generator.market.history import SmokePoint
    from generator.market.server import Sources, Watcher, build, snapshot

    store = make_store(tmp_path / "store", rendered_market)
    first = load_releases(store / "catalog").latest(APP).version
    assert run_cli(capsys, "bump", APP, "--note", "second", "--catalog", str(store / "catalog"))[0] == 0
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "second")

    def no_smokes(_root, _app) -> list[SmokePoint]:
        return []

    sources = Sources(store / "catalog", store / "charts", no_smokes)
    cache = PackageCache()
    holder = Holder(snapshot(build(sources, cache, history=False)))
    holder.watching = True
    client = TestClient(make_app(holder))
    health = client.get("/health").json()
    assert health["status"] == "starting" and health["pending_history"] >= 1 and health["problems"] == []
    first_snapshot = holder.snapshot
    assert not first_snapshot.store.ready()  # the store page (the fit of every app) is not made for /health
    page = client.get("/")
    assert page.status_code == 200 and APP in page.text and first_snapshot.store.ready()
    old = client.get(f"/api/v1/applications/{APP}/chart", params={"fileName": f"{APP}-{first}.tgz"})
    assert old.status_code == 503 and old.headers["retry-after"] == "5"
    assert Watcher(holder, sources, cache, sources.signature()).rebuild()
    assert holder.snapshot.store.ready()  # the watcher made the new page before anyone asked for it
    assert client.get("/health").json()["status"] == "ok"
    again = client.get(f"/api/v1/applications/{APP}/chart", params={"fileName": f"{APP}-{first}.tgz"})
    assert again.status_code == 200 and again.content[:2] == b"\x1f\x8b"


def test_the_first_snapshot_answers_before_the_other_formats_are_made(tmp_path, rendered_market):
    """`catalog serve`'s first snapshot serves the catalog's own format without rendering the others (issue 35:
    seconds at 1,000 apps): a device of a format not made yet gets 503 Retry-After on every market route (never an
    empty market, never the other format's), /health says `starting` with the format pending, and the watcher's
    first rebuild swaps in both. Real Starlette app over the real rendered store, through its in-process client."""
    from starlette.testclient import TestClient

    from generator.market.api import Holder, make_app
    from generator.market.history import SmokePoint
    from generator.market.server import Sources, Watcher, build, snapshot

    def no_smokes(_root, _app) -> list[SmokePoint]:
        return []

    store = make_store(tmp_path / "store", rendered_market)
    sources = Sources(store / "catalog", store / "charts", no_smokes)
    cache = PackageCache()
    holder = Holder(snapshot(build(sources, cache, history=False, formats=False)))
    holder.watching = True
    client = TestClient(make_app(holder))
    health = client.get("/health").json()
    assert health["status"] == "starting" and health["pending_formats"] == ["olares-v2"] and health["apps"] > 0
    v2_file = f"{APP}-{load_releases(store / 'catalog').latest(APP).version}-v2.tgz"
    for answer in (client.get("/api/v1/appstore/hash", params={"version": "1.12.5"}),
                   client.get("/api/v1/appstore/info", params={"version": "1.12.5"}),
                   client.post("/api/v1/applications/info", json={"app_ids": ["x"], "version": "1.12.5"}),
                   client.get(f"/api/v1/applications/{APP}/chart", params={"fileName": v2_file})):
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5", answer.text
    v3 = client.get("/api/v1/appstore/info", params={"version": "1.12.7"})
    assert v3.status_code == 200 and v3.json()["data"]["apps"]
    assert Watcher(holder, sources, cache, sources.signature()).rebuild()
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["pending_formats"] == [] and set(health["formats"]) == {
        "olares-v2", "olares-v3"}
    v2 = client.get("/api/v1/appstore/info", params={"version": "1.12.5"})
    assert v2.status_code == 200 and v2.json()["data"]["apps"]
    chart = client.get(f"/api/v1/applications/{APP}/chart", params={"fileName": v2_file})
    assert chart.status_code == 200 and chart.content[:2] == b"\x1f\x8b"


def test_a_second_build_reads_the_charts_from_the_cache_and_serves_the_same_bytes(tmp_path, rendered_market,
                                                                                  monkeypatch):
    """The charts' parsed files are kept on disk by their text (yamlio/chartdata.py): a second start of an unchanged
    store reads them back, and what it serves is byte-identical, with the store's pack damaged too (every file is
    then read from the YAML again and the pack rewritten)."""
    from generator.market.history import SmokePoint
    from generator.market.server import Sources, build, snapshot
    from generator.publish import market_entry
    from generator.versions.state import canonical
    from generator.yamlio import chartdata

    def no_smokes(_root, _app) -> list[SmokePoint]:
        return []

    monkeypatch.setenv("CATALOG_CACHE_DIR", str(tmp_path / "cache"))
    store = make_store(tmp_path / "store", rendered_market)
    sources = Sources(store / "catalog", store / "charts", no_smokes)

    def served() -> list[tuple[str, str, bytes]]:
        canonical.cache_clear()  # a second start is a new process: nothing kept in memory
        market_entry._read_chart.cache_clear()
        snap = snapshot(build(sources, PackageCache(), history=False))
        return [(name, a.build.hash, a.info_body("1.12.7")) for name, a in snap.formats.items()]

    first = served()
    [pack] = sorted((tmp_path / "cache" / chartdata.KIND).glob("*.json"))
    assert pack.name == chartdata.pack_name(store / "charts")[0] and len(first) == 2
    assert served() == first
    pack.write_bytes(b"damaged")
    assert served() == first
    assert pack.read_bytes().startswith(b"catalog-chart-data ")


def test_catalog_serve_answers_starting_then_makes_the_rest_once_it_listens(tmp_path, rendered_market):
    """`catalog serve` (a real uvicorn server on loopback): its first /health already serves the apps of the
    catalog's own format and says `starting` with the other format pending, and a device of that format gets 503
    Retry-After; the watcher makes the rest only after the server listens, then one poll later (`--poll 3`), and
    /health turns `ok`. A broken releases.yaml still fails the start with the error and a non-zero exit."""
    import subprocess
    import sys
    import time

    import httpx
    from support.market import REPO, free_port

    store = make_store(tmp_path / "store", rendered_market)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--catalog", str(store / "catalog"),
                             "--port", str(port), "--poll", "3", "--no-access-log"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, first = time.monotonic() + 120, None
        while first is None and time.monotonic() < deadline:
            assert proc.poll() is None, "catalog serve exited"
            try:
                first = httpx.get(url + "/health", timeout=5).json()
            except httpx.TransportError:
                time.sleep(0.05)
        assert first is not None and first["status"] == "starting" and first["apps"] > 0
        assert first["pending_formats"] == ["olares-v2"]
        old = httpx.get(url + "/api/v1/appstore/hash", params={"version": "1.12.5"}, timeout=5)
        assert old.status_code == 503 and old.headers["retry-after"] == "5"
        assert httpx.get(url + "/api/v1/appstore/hash", params={"version": "1.12.7"}, timeout=5).status_code == 200
        while time.monotonic() < deadline:
            health = httpx.get(url + "/health", timeout=5).json()
            if health["status"] != "starting":
                break
            time.sleep(0.1)
        assert health["status"] == "ok" and health["pending_formats"] == []
        assert httpx.get(url + "/api/v1/appstore/hash", params={"version": "1.12.5"}, timeout=5).status_code == 200
    finally:
        proc.kill()
        proc.wait(timeout=10)
    (store / "catalog" / "releases.yaml").write_text("apps: [not, a, mapping]\n", encoding="utf-8")
    broken = subprocess.run([sys.executable, "-m", "generator.cli", "serve", "--catalog", str(store / "catalog"),
                             "--port", str(free_port())], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert broken.returncode != 0 and "releases.yaml" in broken.stderr


def test_a_store_without_charts_is_served_empty_at_once(tmp_path, rendered_market):
    """No chart folder: nothing to make, so the first snapshot waits for no format (every format answers, empty)."""
    from starlette.testclient import TestClient

    from generator.market.api import Holder, make_app
    from generator.market.history import SmokePoint
    from generator.market.server import Sources, build, snapshot

    def no_smokes(_root, _app) -> list[SmokePoint]:
        return []

    shutil.copytree(rendered_market / "catalog", tmp_path / "catalog")
    (tmp_path / "charts").mkdir()
    sources = Sources(tmp_path / "catalog", tmp_path / "charts", no_smokes)
    holder = Holder(snapshot(build(sources, PackageCache(), history=False, formats=False)))
    holder.watching = True
    client = TestClient(make_app(holder))
    health = client.get("/health").json()
    assert health["apps"] == 0 and health["pending_formats"] == []
    for version in ("1.12.5", "1.12.7"):
        info = client.get("/api/v1/appstore/info", params={"version": version})
        assert info.status_code == 200 and info.json()["data"]["apps"] == {}
