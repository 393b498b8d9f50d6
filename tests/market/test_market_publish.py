"""`catalog publish --to market:DIR` writes what the maintainer's worker reads, and `catalog serve` agrees with it.

`Worker` below answers from the three files exactly as src/index.ts of github.com/aamsellem/orales-one-market@
6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 does (re-implemented here: its summaries, details and latest from
catalog.json, charts and icons base64-decoded), except that `last_updated` is the one the server answers
(the worker stamps the request time). Serve and the files must give the same answers for every route.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from support.bump import git, run_cli
from support.market import chart_dirs, make_store, package_tree, png, ref_id, serve

from generator.versions.releases import load_releases
from generator.versions.state import content_hash

APP = "gemma4e2bone"


class Worker:
    """src/index.ts's handlers over DIR/src/{catalog,charts,icons}.json."""

    def __init__(self, folder: Path, catalog: str = "catalog.json"):
        src = folder / "src"  # `catalog`: catalog.<profile>.json plays a worker that answers one format
        self.catalog = json.loads((src / catalog).read_text(encoding="utf-8"))
        self.charts = json.loads((src / "charts.json").read_text(encoding="utf-8"))
        self.icons = json.loads((src / "icons.json").read_text(encoding="utf-8"))

    def hash(self, version: str, now: str) -> dict:
        return {"hash": self.catalog["hash"], "last_updated": now, "version": version}

    def info(self, version: str, now: str) -> dict:
        summaries = self.catalog["summaries"]
        topic = "Featured apps in AI"
        return {"version": version, "hash": self.catalog["hash"], "last_updated": now, "data": {
            "apps": summaries, "recommends": {},
            "pages": {"AI": {"category": "AI", "content": json.dumps(
                [{"type": "Topic", "id": topic}, {"type": "Default Topic", "id": "Newest"}], separators=(",", ":"))}},
            "topics": {},
            "topic_lists": {topic: {"name": topic, "type": "Category", "content": ",".join(summaries),
                                    "title": {"en-US": topic, "zh-CN": "AI精选应用"}}},
            "tops": [], "latest": self.catalog["latest"],
            "tags": {"AI": {"_id": "ai_custom_source", "name": "AI", "title": {"en-US": "AI", "zh-CN": "AI"},
                            "icon": "https://app.cdn.olares.com/icons/market/sidebar/neurology.svg", "sort": 7,
                            "source": 0, "updated_at": now, "createdAt": "2025-11-07T05:14:01.765Z"}}},
            "stats": {"appstore_data": {"apps": len(summaries), "pages": 1, "recommends": 0, "tags": 1,
                                        "topic_lists": 1, "topics": 0}, "last_updated": now}}

    def details(self, ids: list[str], version: str) -> dict:
        apps = {i: self.catalog["details"][i] for i in ids if i in self.catalog["details"]}
        missing = [i for i in ids if i not in self.catalog["details"]]
        return {"apps": apps, "version": version, **({"not_found": missing} if missing else {})}

    def chart(self, file_name: str) -> bytes | None:
        data = self.charts.get(file_name)
        return base64.b64decode(data) if data else None

    def icon(self, name: str) -> bytes | None:
        data = self.icons.get(name)
        return base64.b64decode(data) if data else None


@pytest.fixture
def store(tmp_path, rendered_market) -> Path:
    root = make_store(tmp_path / "store", rendered_market)
    (root / "catalog" / "icons").mkdir()
    return root


def publish(capsys, catalog: Path, folder: Path, *apps: str) -> list[dict]:
    # --force: the frozen market fixture holds an app `catalog check` fails (FIT001), and this is about the target
    code, out, err = run_cli(capsys, "publish", *apps, "--to", f"market:{folder}", "--catalog", str(catalog), "--json",
                             "--force")
    assert code == 0, out + err
    return json.loads(out)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted((folder / "src").iterdir())}


def test_publish_twice_changes_nothing(store, tmp_path, capsys):
    folder = tmp_path / "worker"
    (folder / "icons").mkdir(parents=True)
    (folder / "icons" / f"{APP}.png").write_bytes(png((10, 120, 200)))
    first = publish(capsys, store / "catalog", folder)
    apps = [p.name for p in chart_dirs(store / "charts")]
    assert sorted(r["app"] for r in first) == apps and {r["action"] for r in first} == {"published"}
    files = snapshot(folder)
    assert sorted(files) == ["catalog.json", "catalog.olares-v2.json", "catalog.olares-v3.json", "charts.json",
                             "icons.json"]
    second = publish(capsys, store / "catalog", folder)
    assert {r["action"] for r in second} == {"skipped"}
    assert snapshot(folder) == files  # same bytes, not even rewritten
    catalog = json.loads(files["catalog.json"][0])
    assert list(catalog) == ["hash", "summaries", "details", "latest"]
    payload = json.dumps({k: catalog[k] for k in ("summaries", "details", "latest")}, ensure_ascii=False,
                         separators=(",", ":"))
    assert catalog["hash"] == hashlib.md5(payload.encode()).hexdigest()
    assert not files["catalog.json"][0].endswith(b"\n")  # JSON.stringify(catalog, null, 2), written as is
    assert json.loads(files["icons.json"][0]) == {APP: base64.b64encode(png((10, 120, 200))).decode()}
    releases = load_releases(store / "catalog")
    for name, data in json.loads(files["charts.json"][0]).items():
        stem, variant = name.removesuffix(".tgz"), None
        if stem.endswith("-v2"):  # the olares-v2 package of a version (generator/versions/formats.py)
            stem, variant = stem.removesuffix("-v2"), "olares-v2"
        app, version = stem.rsplit("-", 1)
        rec = releases.get(app, version)
        want = rec.format_content(variant) if variant else rec.content
        assert content_hash(package_tree(base64.b64decode(data))) == want, name


def test_serve_and_the_published_files_give_the_same_answers(store, tmp_path, capsys):
    folder = tmp_path / "worker"
    icon = png((240, 200, 0))
    (folder / "icons").mkdir(parents=True)
    (folder / "icons" / f"{APP}.png").write_bytes(icon)
    (store / "catalog" / "icons" / f"{APP}.png").write_bytes(icon)
    publish(capsys, store / "catalog", folder)
    worker = Worker(folder)
    with serve(store / "catalog", tmp_path) as served:
        now = served.get("/api/v1/appstore/hash").json()["last_updated"]
        for version, catalog in (("1.12.3", "catalog.olares-v2.json"), ("1.12.6", "catalog.json")):
            per_format = Worker(folder, catalog)  # each format's file answers the devices of that format
            assert served.get("/api/v1/appstore/hash", params={"version": version}).json() == \
                per_format.hash(version, now)
            assert served.get("/api/v1/appstore/info", params={"version": version}).json() == \
                per_format.info(version, now)
        ids = list(worker.catalog["summaries"]) + ["00000000"]
        for batch in (ids[:10], ids[10:], ids):
            got = served.post("/api/v1/applications/info", json={"app_ids": batch, "version": "1.12.6"}).json()
            assert got == worker.details(batch, "1.12.6")
        for detail in worker.catalog["details"].values():
            r = served.get(f"/api/v1/applications/{detail['name']}/chart", params={"fileName": detail["chartName"]})
            assert r.status_code == 200 and r.content == worker.chart(detail["chartName"])
        assert served.get(f"/icons/{APP}.png").content == worker.icon(APP) == icon


def test_a_new_version_joins_the_old_ones(store, tmp_path, capsys):
    folder = tmp_path / "worker"
    publish(capsys, store / "catalog", folder)
    old = load_releases(store / "catalog").latest(APP).version
    assert run_cli(capsys, "bump", APP, "--note", "A second version", "--catalog", str(store / "catalog"))[0] == 0
    new = load_releases(store / "catalog").latest(APP).version
    results = publish(capsys, store / "catalog", folder)
    assert {(r["app"], r["action"]) for r in results if r["action"] == "published"} == {(APP, "published")}
    worker = Worker(folder)
    assert {f"{APP}-{old}.tgz", f"{APP}-{new}.tgz"} <= set(worker.charts)  # every released version stays
    assert worker.catalog["details"][ref_id(APP)]["chartName"] == f"{APP}-{new}.tgz"
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "bump")
    with serve(store / "catalog", tmp_path) as served:  # serve finds the old version in git and agrees
        assert served.get("/api/v1/appstore/hash").json()["hash"] == worker.catalog["hash"]
        for name in (f"{APP}-{old}.tgz", f"{APP}-{new}.tgz"):
            got = served.get(f"/api/v1/applications/{APP}/chart", params={"fileName": name})
            assert got.content == worker.chart(name)


def test_other_content_under_a_published_version_is_refused(store, tmp_path, capsys):
    from generator.adapters.helm import Helm
    from generator.publish.market import package_bytes

    folder = tmp_path / "worker"
    publish(capsys, store / "catalog", folder)
    charts_json = folder / "src" / "charts.json"
    charts = json.loads(charts_json.read_text())
    rel = load_releases(store / "catalog").latest(APP)
    name = f"{APP}-{rel.version}.tgz"
    tree = package_tree(base64.b64decode(charts[name]))
    tree["values.yaml"] += "edited: true\n"  # the same version with other content
    charts[name] = base64.b64encode(package_bytes(tree, APP, rel.version, rel.date, helm=Helm())).decode()
    charts_json.write_text(json.dumps(charts, separators=(",", ":")))
    code, out, _ = run_cli(capsys, "publish", APP, "--to", f"market:{folder}", "--catalog", str(store / "catalog"),
                           "--json")
    rows = json.loads(out)
    assert code == 1 and rows[0]["action"] == "refused" and f"catalog bump {APP}" in rows[0]["detail"]
    assert json.loads(charts_json.read_text())[name] == charts[name]  # left as it was


def test_a_broken_charts_json_is_a_clear_failure(store, tmp_path, capsys):
    folder = tmp_path / "worker"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "charts.json").write_text("{not json")
    code, out, _ = run_cli(capsys, "publish", "--to", f"market:{folder}", "--catalog", str(store / "catalog"), "--json")
    assert code == 1 and "is not JSON" in out
    assert (folder / "src" / "charts.json").read_text() == "{not json"
    assert not (folder / "src" / "catalog.json").exists()
