"""`catalog serve` over real sockets: the five API routes, their faults, and reloading when releases change.

The server runs in a subprocess on 127.0.0.1 (killed by PID), on a store repository in git: the catalog,
its rendered charts and releases.yaml, committed; `catalog bump` then records a new version without a
restart, and the old version stays downloadable from the git history.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from support.bump import git
from support.market import chart_dirs, make_store, package_tree, png, ref_id, serve, wait_for

from generator.versions.releases import load_releases
from generator.versions.state import content_hash

CORS = {"access-control-allow-origin": "*", "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": "Content-Type, Authorization"}
APP = "gemma4e2bone"
OTHER = "gemma426ba4bone"


@pytest.fixture(scope="module")
def store(tmp_path_factory, rendered_market) -> Path:
    root = make_store(tmp_path_factory.mktemp("store"), rendered_market)
    (root / "catalog" / "icons").mkdir()
    (root / "catalog" / "icons" / f"{APP}.png").write_bytes(png((200, 30, 30)))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "icon")
    return root


def cors(response: httpx.Response) -> None:
    for key, value in CORS.items():
        assert response.headers.get(key) == value, key


def test_hash_is_the_content_hash_and_answers_304(served):
    r = served.get("/api/v1/appstore/hash", params={"version": "1.12.6"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    cors(r)
    body = r.json()
    assert list(body) == ["hash", "last_updated", "version"] and body["version"] == "1.12.6"
    assert len(body["hash"]) == 32 and r.headers["etag"] == f'"{body["hash"]}"'
    # no version: the newest format, and the answer says which (issue 42; the worker echoed its default 1.12.3)
    bare = served.get("/api/v1/appstore/hash").json()
    assert bare["version"] == "1.12.6" and bare["hash"] == body["hash"]
    assert served.get("/api/v1/appstore/info").json()["version"] == "1.12.6"
    again = served.get("/api/v1/appstore/hash", params={"version": "1.12.6"})
    assert again.content == r.content  # deterministic: no per-request clock
    for header in (r.headers["etag"], f'W/{r.headers["etag"]}', f'"nope", {r.headers["etag"]}', "*"):
        not_modified = served.get("/api/v1/appstore/hash", headers={"If-None-Match": header})
        assert not_modified.status_code == 304 and not_modified.content == b"", header
        cors(not_modified)
    assert served.get("/api/v1/appstore/hash", headers={"If-None-Match": '"other"'}).status_code == 200


def test_info_lists_every_app_and_answers_304(served, store):
    r = served.get("/api/v1/appstore/info", params={"version": "1.12.6"})
    assert r.status_code == 200
    cors(r)
    info = r.json()
    assert list(info) == ["version", "hash", "last_updated", "data", "stats"]
    assert info["version"] == "1.12.6" and info["hash"] == served.get("/api/v1/appstore/hash").json()["hash"]
    apps = [p.name for p in chart_dirs(store / "charts")]
    assert sorted(s["name"] for s in info["data"]["apps"].values()) == apps
    assert all(ident == ref_id(s["name"]) and s["source"] == 1 for ident, s in info["data"]["apps"].items())
    assert sorted(info["data"]["latest"]) == apps and info["stats"]["appstore_data"]["apps"] == len(apps)
    assert info["data"]["topic_lists"]["Featured apps in AI"]["content"] == ",".join(info["data"]["apps"])
    assert served.get("/api/v1/appstore/info", headers={"If-None-Match": r.headers["etag"]}).status_code == 304


def test_details_in_batches_with_not_found(served):
    ids = list(served.get("/api/v1/appstore/info").json()["data"]["apps"])
    r = served.post("/api/v1/applications/info", json={"app_ids": ids[:10] + ["deadbeef"], "version": "1.12.6"})
    assert r.status_code == 200
    cors(r)
    body = r.json()
    assert sorted(body["apps"]) == sorted(ids[:10]) and body["not_found"] == ["deadbeef"]
    assert body["version"] == "1.12.6"
    assert all(body["apps"][i]["id"] == i == body["apps"][i]["appID"] for i in body["apps"])
    complete = served.post("/api/v1/applications/info", json={"app_ids": ids[10:]}).json()
    assert "not_found" not in complete and complete["version"] == "1.12.6"  # as the worker: only when some are missing
    assert served.post("/api/v1/applications/info", json={"app_ids": []}).json() == {"apps": {}, "version": "1.12.6"}


@pytest.mark.parametrize(("body", "message"), [
    (b"{not json", "not JSON"),
    (b"", "empty"),
    (b"[1, 2]", "JSON object"),
    (b'"text"', "JSON object"),
    (b'{"app_ids": "abc"}', "app_ids"),
    (b'{"app_ids": [1, 2]}', "app_ids.0"),
    (b'{"app_ids": ["a"], "version": 12}', "version"),
])
def test_a_bad_body_is_a_400_with_a_message(served, body, message):
    r = served.post("/api/v1/applications/info", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    cors(r)
    assert message in r.json()["error"]


def test_too_many_ids_and_too_large_a_body(served):
    assert served.post("/api/v1/applications/info", json={"app_ids": ["x"] * 1001}).status_code == 400
    huge = b'{"app_ids": ["' + b"a" * (1 << 20) + b'"]}'
    assert served.post("/api/v1/applications/info", content=huge).status_code == 413


def test_charts_download_and_nothing_else(served, store):
    releases = load_releases(store / "catalog")
    version = releases.latest(APP).version
    url = f"/api/v1/applications/{APP}/chart"
    ok = served.get(url, params={"fileName": f"{APP}-{version}.tgz", "version": "1.12.6"})
    assert ok.status_code == 200 and ok.headers["content-type"] == "application/gzip"
    assert ok.headers["content-disposition"] == f'attachment; filename="{APP}-{version}.tgz"'
    assert ok.headers["access-control-allow-origin"] == "*"
    assert content_hash(package_tree(ok.content)) == releases.latest(APP).content
    assert served.get(url, params={"fileName": f"{APP}-{version}.tgz"}).content == ok.content  # byte-stable
    other = releases.latest(OTHER).version
    for name in (f"../{APP}-{version}.tgz", f"x/{APP}-{version}.tgz", f"{APP}-{version}.tgz/..", "..",
                 f"{OTHER}-{other}.tgz", f"{APP}-9.9.9.tgz", f"{APP}-{version}", "", f"{APP}-{version}.tgz\\x"):
        bad = served.get(url, params={"fileName": name})
        assert bad.status_code == 404 and bad.json()["error"] == "Chart not found", name
    assert served.get(url).status_code == 404  # no fileName
    assert served.get(f"/api/v1/applications/{APP}/..%2F{OTHER}/chart").status_code == 404
    other_chart = served.get(f"/api/v1/applications/{OTHER}/chart", params={"fileName": f"{OTHER}-{other}.tgz"})
    assert other_chart.status_code == 200


def test_icons_health_preflight_and_unknown_routes(served, store):
    icon = served.get(f"/icons/{APP}.png")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/png"
    assert icon.content == (store / "catalog" / "icons" / f"{APP}.png").read_bytes()
    assert served.get(f"/icons/{OTHER}.png").status_code == 404
    health = served.health()
    assert health["status"] == "ok" and health["apps"] == len(chart_dirs(store / "charts"))
    assert health["problems"] == [] and health["watching"] is True
    pre = httpx.options(served.url + "/api/v1/applications/info", timeout=10)
    assert pre.status_code == 200 and pre.content == b""
    cors(pre)
    missing = served.get("/api/v1/nothing")
    assert missing.status_code == 404 and missing.json() == {"error": "Not Found"}
    cors(missing)
    assert served.post("/api/v1/appstore/hash").status_code == 405
    page = served.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")


def test_a_new_release_is_served_without_a_restart(served, store, capsys):
    """`catalog bump` records a new version: the hash changes, both versions download, the PID is the same."""
    from generator.cli import main

    before = served.get("/api/v1/appstore/hash").json()["hash"]
    generation = served.health()["generation"]
    old = load_releases(store / "catalog").latest(APP).version
    latencies: list[float] = []
    stop = threading.Event()

    def hammer() -> None:  # requests all along the rebuild: it never blocks them
        with httpx.Client(base_url=served.url, timeout=30) as client:
            while not stop.is_set():
                start = time.perf_counter()
                assert client.get("/api/v1/appstore/hash").status_code == 200
                latencies.append(time.perf_counter() - start)
                time.sleep(0.01)

    thread = threading.Thread(target=hammer)
    thread.start()
    try:
        bump = ["bump", APP, "--note", "Re-released for the market test", "--catalog", str(store / "catalog")]
        assert main(bump) == 0
        new = load_releases(store / "catalog").latest(APP).version
        assert new != old
        after = wait_for(lambda: (h := served.get("/api/v1/appstore/hash").json()["hash"]) != before and h)
        wait_for(lambda: served.health()["generation"] > generation)
    finally:
        stop.set()
        thread.join(timeout=60)
    capsys.readouterr()
    assert served.proc.poll() is None  # the same process
    info = served.get("/api/v1/appstore/info").json()
    assert info["hash"] == after and info["data"]["apps"][ref_id(APP)]["version"] == new
    url = f"/api/v1/applications/{APP}/chart"
    assert served.get(url, params={"fileName": f"{APP}-{new}.tgz"}).status_code == 200
    old_chart = served.get(url, params={"fileName": f"{APP}-{old}.tgz"})  # from git history
    assert old_chart.status_code == 200
    assert content_hash(package_tree(old_chart.content)) == load_releases(store / "catalog").get(APP, old).content
    assert len(latencies) > 20 and max(latencies) < 2.0, (len(latencies), max(latencies))


def test_a_broken_releases_file_keeps_the_last_good_answers(served, store):
    path = store / "catalog" / "releases.yaml"
    good = path.read_text()
    before = served.get("/api/v1/appstore/hash").content
    try:
        path.write_text(good + "\n  broken: [\n")
        health = wait_for(lambda: (h := served.health())["reload_error"] and h)
        assert health["status"] == "degraded" and "releases.yaml" in health["reload_error"]
        assert served.get("/api/v1/appstore/hash").content == before
    finally:
        path.write_text(good)
    wait_for(lambda: served.health()["status"] == "ok")
    assert served.get("/api/v1/appstore/hash").content == before


def test_the_hash_is_deterministic_across_servers(store, tmp_path):
    """Two servers on the same releases answer the same bytes; the hash is md5 of the script's payload."""
    with serve(store / "catalog", tmp_path) as one:
        first = one.get("/api/v1/appstore/info").content
        ids = list(json.loads(first)["data"]["apps"])
        details = one.post("/api/v1/applications/info", json={"app_ids": ids}).json()["apps"]
    with serve(store / "catalog", tmp_path) as two:
        second = two.get("/api/v1/appstore/info").content
    assert first == second
    info = json.loads(first)
    payload = json.dumps({"summaries": info["data"]["apps"], "details": {i: details[i] for i in ids},
                          "latest": info["data"]["latest"]}, ensure_ascii=False, separators=(",", ":"))
    assert hashlib.md5(payload.encode()).hexdigest() == info["hash"]
