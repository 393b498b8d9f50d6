"""`catalog serve` and `catalog site` against a hostile or half-deployed store folder (issue 22, causes 5, 6, 7
and the minor ones): linked, endless or blocking icons, a Chart.yaml that is not YAML, a smoke dated year 1,
the catalog folder or releases.yaml gone, and the headers every answer carries.

The server runs in a subprocess on 127.0.0.1 (support/market.py `serve`, killed by PID); resource attacks
assert a measured bound (time, and the server's peak memory from /proc/<pid>/status).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.bump import git
from support.market import make_store, png, serve, wait_for

from generator.publish.market import MAX_ICON_BYTES, read_icons

REPO = Path(__file__).resolve().parents[2]
APP = "gemma4e2bone"


def year_one_row(app: str) -> str:
    """A ledger row the smoke reader accepts, dated year 1 (matplotlib draws years 1 to 9999 and pads by days)."""
    return (f"- app: {app}\n  endpoint: http://127.0.0.1:1\n  chart_version: 1.0.0\n  image: img\n"
            "  date: '0001-01-01T00:00:00Z'\n  runs: []\n  tokens_per_s: 12.5\n  acceptance: null\n"
            "  baseline_tokens_per_s: null\n  verdict: pass\n  reasons: []\n")


def peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def cli(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "generator.cli", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def store(tmp_path, rendered_market) -> Path:
    root = make_store(tmp_path / "store", rendered_market)
    (root / "catalog" / "icons").mkdir()
    return root


def test_hostile_icons_are_not_read(store, tmp_path):
    icons = store / "catalog" / "icons"
    outside = tmp_path / "secret.png"
    outside.write_bytes(png((1, 2, 3)))
    (icons / f"{APP}.png").symlink_to(outside)  # a PNG outside the catalog
    (icons / "zero.png").symlink_to("/dev/zero")
    os.mkfifo(icons / "fifo.png")
    (icons / "big.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (MAX_ICON_BYTES + 1))
    (icons / "fine.png").write_bytes(png((9, 9, 9)))
    start = time.monotonic()
    got = read_icons(icons)
    assert time.monotonic() - start < 5  # the FIFO never blocks, /dev/zero is never read
    assert list(got.icons) == ["fine"]
    assert len(got.problems) == 4 and all("not served" in p for p in got.problems)
    with serve(store / "catalog", tmp_path) as served:
        assert served.get(f"/icons/{APP}.png").status_code == 404
        assert served.get("/icons/zero.png").status_code == 404
        assert served.get("/icons/fine.png").status_code == 200
        assert peak_kib(served.pid) < 1_000_000  # KiB; /dev/zero read whole took 3 GB
        health = served.health()
        assert health["status"] == "degraded" and any("icon" in p for p in health["problems"])


def test_a_linked_icons_folder_is_not_read(store, tmp_path):
    shutil.rmtree(store / "catalog" / "icons")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / f"{APP}.png").write_bytes(png((5, 5, 5)))
    (store / "catalog" / "icons").symlink_to(tmp_path / "elsewhere")
    got = read_icons(store / "catalog" / "icons")
    assert got.icons == {} and "symbolic link" in got.problems[0]


def test_the_watcher_survives_bad_input_and_keeps_the_last_good_state(store, tmp_path):
    with serve(store / "catalog", tmp_path) as served:
        good = served.get("/api/v1/appstore/hash").json()["hash"]
        generation = served.health()["generation"]
        chart = store / "charts" / APP / "Chart.yaml"
        saved = chart.read_text()
        chart.write_text("name: [unclosed\n")  # not YAML
        wait_for(lambda: served.health()["generation"] > generation)
        health = served.health()
        assert health["status"] == "degraded" and any("not YAML" in p for p in health["problems"])
        assert served.get("/api/v1/appstore/hash").json()["hash"] == good  # still served at its released version
        chart.write_text(saved)
        ledger = store / "catalog" / "ledger"
        ledger.mkdir(exist_ok=True)
        generation = served.health()["generation"]
        (ledger / f"{APP}.yaml").write_text(year_one_row(APP))
        wait_for(lambda: served.health()["generation"] > generation)  # rebuilt: the row is not drawn, not fatal
        health = served.health()
        assert health["watching"] is True and health["reload_error"] is None, health
        assert served.get("/").status_code == 200
        (ledger / f"{APP}.yaml").unlink()
        wait_for(lambda: served.health()["status"] == "ok")


def test_a_missing_catalog_or_releases_file_keeps_the_last_good_state(store, tmp_path):
    with serve(store / "catalog", tmp_path) as served:
        good = served.get("/api/v1/appstore/info", params={"version": "1.12.6"}).json()
        releases = store / "catalog" / "releases.yaml"
        moved = tmp_path / "releases.yaml"
        shutil.move(releases, moved)  # an rsync deploy half-way
        health = wait_for(lambda: (h := served.health())["reload_error"] and h)
        assert health["status"] == "degraded" and "releases.yaml is missing" in health["reload_error"]
        assert "still serving generation" in health["reload_error"]
        assert served.get("/api/v1/appstore/info", params={"version": "1.12.6"}).json() == good  # not emptied
        shutil.move(moved, releases)
        wait_for(lambda: served.health()["status"] == "ok")
        aside = tmp_path / "catalog-aside"
        shutil.move(store / "catalog", aside)  # a branch switch
        health = wait_for(lambda: (h := served.health())["reload_error"] and h)
        assert "catalog folder" in health["reload_error"]
        assert served.get("/api/v1/appstore/info", params={"version": "1.12.6"}).json() == good
        shutil.move(aside, store / "catalog")
        wait_for(lambda: served.health()["status"] == "ok")


def test_something_not_served_makes_health_degraded(store, tmp_path):
    chart = store / "charts" / APP / "values.yaml"
    chart.write_text(chart.read_text() + "# changed without a bump\nextra: 1\n")
    git(store, "commit", "-qam", "unreleased change")
    with serve(store / "catalog", tmp_path) as served:
        health = served.health()
        assert health["status"] == "degraded" and any(APP in p for p in health["problems"])


def test_every_answer_carries_the_safe_headers(store, tmp_path):
    (store / "catalog" / "icons" / f"{APP}.png").write_bytes(png((200, 30, 30)))
    with serve(store / "catalog", tmp_path) as served:
        plot = f"/plots/{APP}-speed.svg"
        for path in ("/", "/health", "/api/v1/appstore/hash", plot, f"/icons/{APP}.png", "/nope"):
            r = served.get(path)
            assert r.headers["x-content-type-options"] == "nosniff", path
            assert r.headers["x-frame-options"] == "DENY", path
            csp = r.headers["content-security-policy"]
            assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp and "script-src" not in csp, path


@pytest.mark.parametrize("attack", ["chart-not-yaml", "ledger-year-1"])
def test_site_and_serve_start_report_bad_input_without_a_traceback(store, tmp_path, attack):
    if attack == "chart-not-yaml":
        (store / "charts" / APP / "Chart.yaml").write_text("name: [unclosed\n")
    else:
        (store / "catalog" / "ledger").mkdir()
        (store / "catalog" / "ledger" / f"{APP}.yaml").write_text(year_one_row(APP))
    done = cli("site", "--out", tmp_path / "site", "--catalog", store / "catalog")
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-2000:]
    with serve(store / "catalog", tmp_path) as served:
        assert served.get("/").status_code == 200
    assert "Traceback" not in served.log.read_text()
