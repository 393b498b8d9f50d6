"""Issue 40 cause 6 (serve and site): a `--base-url` carrying credentials (userinfo of any shape, a secret query
value) never reaches anything printed or written: the start line, the store page, the package links, `/health`,
every file `site` writes. Each test plants a secret and greps all of it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from support.adversarial import REPO
from support.market import make_store
from support.publish import free_port

SECRET = "Pw9zQx7Lk2"
BASE_URLS = [
    f"https://admin:{SECRET}@store.example.org",
    f"https://admin:{SECRET}/with@slash@store.example.org:8443/market/",
    f"https://{SECRET}@store.example.org/x",  # a token as the user name
    f"https://store.example.org/?token={SECRET}",
    f"http://bot:{SECRET}@10.0.0.7:8787?sig={SECRET}",
]


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def _clean(secret: str, *texts: str, files: list[Path] = ()) -> None:
    for text in texts:
        assert secret not in text, text[-2000:]
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


@pytest.fixture(scope="module")
def store(tmp_path_factory, rendered_market) -> Path:
    return make_store(tmp_path_factory.mktemp("creds") / "store", rendered_market)


@pytest.mark.parametrize("base_url", BASE_URLS)
def test_site_base_url_credentials_are_in_no_output_and_no_file(store, tmp_path, base_url):
    out = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "generator.cli", "site", "--catalog", str(store / "catalog"),
                           "--out", str(out), "--base-url", base_url], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = _files(out)
    assert written
    _clean(SECRET, proc.stdout, proc.stderr, files=written)
    page = (out / "index.html").read_text()
    assert "store.example.org" in page or "10.0.0.7" in page  # the links still point at the store, bare
    assert "warning: --base-url holds credentials" in proc.stderr


@pytest.mark.parametrize("base_url", [BASE_URLS[0], BASE_URLS[3]])
def test_serve_base_url_credentials_are_not_on_the_start_line_nor_the_page(store, tmp_path, base_url):
    port = free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--catalog", str(store / "catalog"),
                                 "--port", str(port), "--base-url", base_url], cwd=REPO, env=env, stdout=sink,
                                stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        answers = [httpx.get(url + path, timeout=20).text for path in
                   ("/", "/health", "/api/v1/appstore/info?version=1.12.6")]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    _clean(SECRET, log.read_text(), *answers)
    assert "store.example.org" in answers[0]
    assert "Add source -> https://store.example.org" in log.read_text()


CATALOG_URLS = [f"https://admin:{SECRET}@example.org/icons/multi.png",
                f"https://bot:{SECRET}/x@cdn.example.org:8443/i.png",
                f"http://u:{SECRET}@10.1.2.3/i.png"]


@pytest.mark.parametrize("url", CATALOG_URLS)
def test_a_catalog_url_with_a_password_is_refused_and_never_printed_nor_written(tmp_path, url):
    """A URL with `user:password@` in a catalog file (an icon, a source) would be rendered into the charts and the
    store page: it is an error at its line, for every command that loads the catalog, and the password appears in
    nothing printed or written."""
    import shutil

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_devices"
    cat = tmp_path / "catalog"
    shutil.copytree(fixture, cat)
    app = cat / "apps" / "multi.yaml"
    app.write_text(app.read_text().replace("icon: https://example.org/icons/multi.png", f"icon: {url}"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = tmp_path / "charts"
    for args in (["render", "--out", str(out)], ["check", "--no-lint"], ["explain", "multi"], ["list"]):
        proc = subprocess.run([sys.executable, "-m", "generator.cli", *args, "--catalog", str(cat)], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1, (args, proc.stdout[-1000:], proc.stderr[-1000:])
        assert "apps/multi.yaml:5: icon: a password in a URL" in proc.stdout + proc.stderr, args
        _clean(SECRET, proc.stdout, proc.stderr, files=[f for f in _files(tmp_path) if f != app])
    assert not out.exists()
