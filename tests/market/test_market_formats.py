"""One catalog, two formats: every Olares device gets the manifest format its version installs.

Through real HTTP (`catalog serve` in a subprocess on 127.0.0.1): a device asking with `version=1.12.5` is
answered from olares-v2 (0.10.0 / apiVersion v2) charts and downloads one, a device asking with 1.12.7 gets
olares-v3 (0.12.0 / v3), a version that is not one (or none) gets the newest format, never a 500. The two
formats' hashes differ and their packages never share a file name. The test store is the market fixture
(olares-v3, the catalog's own profile) with the olares-v2 content of each version recorded by `catalog bump`
(support/market.py `make_store`).
"""

from __future__ import annotations

import json
import shutil

import pytest
from support.bump import run_cli
from support.market import make_store, package_tree
from ruamel.yaml import YAML

from generator.core.errors import UsageError
from generator.market.source import collect
from generator.publish.market import format_for, olares_triple
from generator.versions.releases import load_releases

APP = "gemma4e2bone"
V2, V3 = ("0.10.0", "v2"), ("0.12.0", "v3")


def manifest_format(tree: dict[str, str]) -> tuple[str, str]:
    data = YAML(typ="safe").load("\n".join(line for line in tree["OlaresManifest.yaml"].splitlines()
                                           if not line.strip().startswith("{{")))
    return str(data["olaresManifest.version"]), str(data["apiVersion"])


@pytest.mark.parametrize(("version", "profile"), [
    ("1.12.5", "olares-v2"), ("1.12.3", "olares-v2"), ("1.11.0", "olares-v2"), ("1.12.6", "olares-v3"),
    ("1.12.6-rc.1", "olares-v3"), ("v1.12.7", "olares-v3"), ("1.13.0", "olares-v3"), ("2.0.0+build.5", "olares-v3"),
    (None, "olares-v3"), ("", "olares-v3"), ("garbage", "olares-v3"), ("1.12", "olares-v3"),
    ("1.12.5.1", "olares-v3"), ("9" * 40 + ".1.1", "olares-v3"), ("1.12.5\x00", "olares-v3"),
])
def test_which_format_a_device_version_gets(version, profile):
    assert format_for(version) == profile


def test_olares_versions_are_read_as_numbers():
    assert olares_triple("1.12.10") == (1, 12, 10) and olares_triple("1.12.10") > olares_triple("1.12.9")
    assert olares_triple("one.two.three") is None


def _details(served, version: str) -> dict:
    info = served.get("/api/v1/appstore/info", params={"version": version}).json()
    ids = list(info["data"]["apps"])
    r = served.post("/api/v1/applications/info", json={"app_ids": ids, "version": version})
    assert r.status_code == 200
    return {d["name"]: d for d in r.json()["apps"].values()}


def test_a_1_12_5_device_downloads_v2_and_a_1_12_7_device_v3(served):
    old = _details(served, "1.12.5")
    new = _details(served, "1.12.7")
    assert APP in old and APP in new
    assert old[APP]["version"].endswith("-v2") and old[APP]["chartName"] == f"{APP}-{old[APP]['version']}.tgz"
    assert new[APP]["version"] == old[APP]["version"].removesuffix("-v2")
    for version, details, want in (("1.12.5", old, V2), ("1.12.7", new, V3)):
        file_name = details[APP]["chartName"]
        r = served.get(f"/api/v1/applications/{APP}/chart", params={"fileName": file_name, "version": version})
        assert r.status_code == 200 and r.headers["content-type"] == "application/gzip", r.text
        tree = package_tree(r.content)
        assert manifest_format(tree) == want, version
        assert f"version: {details[APP]['version']}" in tree["Chart.yaml"]
    # the v2 entry reads the flat resources the maintainer's script reads; the v3 entry the accelerator's
    assert old[APP]["requiredGPU"] == new[APP]["requiredGPU"] != "0"


def test_hashes_differ_per_format_and_the_version_is_echoed(served):
    answers = {v: served.get("/api/v1/appstore/hash", params={"version": v}) for v in ("1.12.5", "1.12.7")}
    assert all(r.status_code == 200 for r in answers.values())
    old, new = answers["1.12.5"].json(), answers["1.12.7"].json()
    assert old["hash"] != new["hash"] and old["version"] == "1.12.5" and new["version"] == "1.12.7"
    assert answers["1.12.5"].headers["etag"] == f'"{old["hash"]}"'
    info = served.get("/api/v1/appstore/info", params={"version": "1.12.5"}).json()
    assert info["hash"] == old["hash"] and all(s["version"].endswith("-v2") for s in info["data"]["apps"].values())
    # a device that cached the v3 answer and moved back is not told "not modified"
    again = served.get("/api/v1/appstore/hash", params={"version": "1.12.5"},
                       headers={"If-None-Match": answers["1.12.7"].headers["etag"]})
    assert again.status_code == 200


@pytest.mark.parametrize("version", ["garbage", "", "1.12", "%00", "1.12.5; DROP", "é" * 300])
def test_a_version_that_is_not_one_gets_the_newest_format(served, version):
    newest = served.get("/api/v1/appstore/hash", params={"version": "1.12.7"}).json()["hash"]
    r = served.get("/api/v1/appstore/hash", params={"version": version})
    assert r.status_code == 200 and r.json()["hash"] == newest
    details = served.post("/api/v1/applications/info", json={"app_ids": [], "version": version})
    assert details.status_code == 200
    entry = _details(served, version)[APP]
    assert not entry["version"].endswith("-v2")
    chart = served.get(f"/api/v1/applications/{APP}/chart", params={"fileName": entry["chartName"],
                                                                     "version": version})
    assert chart.status_code == 200 and manifest_format(package_tree(chart.content)) == V3


def test_no_version_gets_the_newest_format(served):
    assert served.get("/api/v1/appstore/hash").json()["hash"] == \
        served.get("/api/v1/appstore/hash", params={"version": "1.12.7"}).json()["hash"]
    r = served.post("/api/v1/applications/info", content=json.dumps({"app_ids": []}))
    assert r.status_code == 200


def test_health_lists_each_format(served):
    health = served.health()
    assert health["status"] == "ok", health
    formats = health["formats"]
    assert list(formats) == ["olares-v3", "olares-v2"]
    assert formats["olares-v3"]["olares"] == ">= 1.12.6" and formats["olares-v2"]["olares"] == "1.12.3 - 1.12.5"
    assert formats["olares-v3"]["apps"] == formats["olares-v2"]["apps"] == health["apps"]


def test_a_recorded_but_unserved_version_and_an_unknown_one_are_told_apart(served, store):
    releases = load_releases(store / "catalog")
    newest = releases.latest(APP).version
    unknown = served.get(f"/api/v1/applications/{APP}/chart", params={"fileName": f"{APP}-9.9.9.tgz"})
    assert unknown.status_code == 404
    detail = unknown.json()["detail"]
    assert "9.9.9 is not a released version" in detail and newest in detail
    older = [v for v in releases.apps[APP] if v != newest]
    if older:  # recorded in releases.yaml, never committed as a chart in this store: recorded, not served
        r = served.get(f"/api/v1/applications/{APP}/chart", params={"fileName": f"{APP}-{older[0]}.tgz"})
        assert r.status_code == 404 and "is recorded in releases.yaml, but no chart" in r.json()["detail"]


def test_a_format_that_is_not_recorded_is_not_listed_for_its_devices(tmp_path, rendered_market, monkeypatch):
    """An app whose olares-v2 content releases.yaml does not record is served to v3 devices only, and that is
    a problem on /health; an app the v2 profile cannot express is not listed for v2 devices, and that is not
    (it is said under `not_expressible`). The planner refusing is played by one raise (stand-in: no app of
    the fixture is out of the v2 format's reach)."""
    store = make_store(tmp_path / "store", rendered_market)
    releases_file = store / "catalog" / "releases.yaml"
    text = releases_file.read_text()
    yaml = YAML()
    data = yaml.load(text)
    version = next(iter(data["apps"][APP]))
    del data["apps"][APP][version]["formats"]
    with releases_file.open("w") as fh:
        yaml.dump(data, fh)
    from generator.catalog import load_catalog
    from generator.versions import formats

    real_plan = formats.plan
    other = "gemma426ba4bone"

    def plan(r, profile=None):
        if r.app.name == other and getattr(profile, "name", profile) == "olares-v2":
            raise UsageError(f"{other} needs two accelerator modes, which olares-v2 cannot write")
        return real_plan(r, profile=profile)

    monkeypatch.setattr(formats, "plan", plan)
    got = collect(store / "catalog", store / "charts", catalog=load_catalog(store / "catalog"))
    assert APP in got.listed["olares-v3"] and APP not in got.listed["olares-v2"]
    assert other in got.listed["olares-v3"] and other not in got.listed["olares-v2"]
    assert any(p.startswith(f"{APP} {version}: its olares-v2 chart") and "catalog bump" in p for p in got.problems)
    assert not any(other in p for p in got.problems)
    assert any(n.startswith(f"{other}: not listed for olares-v2 devices") for n in got.unexpressed)


def test_publish_to_market_writes_both_formats_without_collisions(tmp_path, rendered_market, capsys):
    store = make_store(tmp_path / "store", rendered_market)
    out = tmp_path / "worker"
    code, _, err = run_cli(capsys, "publish", "--to", f"market:{out}", "--catalog", str(store / "catalog"),
                          "--force")  # the fixture's Fast app fails FIT001 at 131,072 tokens on purpose
    assert code == 0, err
    src = out / "src"
    charts = json.loads((src / "charts.json").read_text())
    newest = json.loads((src / "catalog.json").read_text())
    v2 = json.loads((src / "catalog.olares-v2.json").read_text())
    assert json.loads((src / "catalog.olares-v3.json").read_text()) == newest
    assert newest["hash"] != v2["hash"]
    names = {d["chartName"] for d in newest["details"].values()} | {d["chartName"] for d in v2["details"].values()}
    assert len(names) == len(newest["details"]) + len(v2["details"]) and names <= set(charts)
    assert all(d["chartName"].endswith("-v2.tgz") for d in v2["details"].values())
    again = run_cli(capsys, "publish", "--to", f"market:{out}", "--catalog", str(store / "catalog"), "--json",
                    "--force")
    assert again[0] == 0 and {r["action"] for r in json.loads(again[1])} == {"skipped"}


def test_the_page_shows_each_format_with_its_olares_versions(tmp_path, rendered_market, capsys):
    store = make_store(tmp_path / "store", rendered_market)
    out = tmp_path / "site"
    shutil.rmtree(out, ignore_errors=True)
    code, _, err = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"),
                           "--base-url", "https://market.example.invalid")
    assert code == 0, err
    html = (out / "index.html").read_text()
    assert "for Olares &gt;= 1.12.6" in html and "for Olares 1.12.3 - 1.12.5" in html
    assert f"fileName={APP}-" in html and "-v2.tgz" in html


def test_bump_records_each_format_and_a_changed_variant_needs_a_new_version(tmp_path, rendered_market, capsys):
    store = make_store(tmp_path / "store", rendered_market)  # make_store ran `catalog bump`: formats recorded
    catalog = store / "catalog"
    rec = load_releases(catalog).latest(APP)
    assert rec.format_content("olares-v2") and rec.format_content("olares-v3") is None  # v3 is `content`
    releases_file = catalog / "releases.yaml"
    releases_file.write_text(releases_file.read_text().replace(rec.format_content("olares-v2"), "sha256:" + "0" * 64))
    code, out, err = run_cli(capsys, "bump", "--check", "--catalog", str(catalog))
    assert code == 1 and APP in out + err and "olares-v2" in out + err
    code, _, err = run_cli(capsys, "bump", APP, "--catalog", str(catalog))
    assert code == 0, err
    new = load_releases(catalog).latest(APP)
    assert new.version != rec.version and new.format_content("olares-v2") == rec.format_content("olares-v2")
