"""`catalog smoke` says what it waits for, fails fast when nothing listens, and never records a row for an endpoint
that is not the app (issue 24). Real processes (stderr is a pipe, as in CI), REAL loopback sockets: a closed port,
a plain web server that is not an LLM server, a server that answers 503 while "loading" (a stand-in: a real
llama-server answers 503 only for the moments it loads, too short to watch)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import yaml
from support.catalogs import REPO
from support.smoke import QuietHandler, free_port, serve_http

APP = "llamacppqwen36mtpone"


def smoke(catalog, url: str, *extra: str, timeout: int = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "generator.cli", "smoke", APP, "--endpoint", url, "--catalog",
                           str(catalog), "--runs", "1", *extra], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)
    return done, time.monotonic() - start


class WebSite(QuietHandler):
    """Some other web server on the port: a page at every path, 404 for the OpenAI ones."""

    def do_GET(self) -> None:
        if self.path in ("/v1/models", "/props", "/version"):
            self.send_json(404, {"detail": "Not Found"})
        else:
            body = b"<html><body>my blog</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


class Loading(QuietHandler):
    def do_GET(self) -> None:
        self.send_json(503, {"error": {"message": "Loading model", "type": "unavailable_error"}})


def test_nothing_listening_is_an_error_at_once_that_names_wait_boot(catalog_copy):
    url = f"http://127.0.0.1:{free_port()}"
    done, took = smoke(catalog_copy, url, "--timeout", "600")
    assert done.returncode == 1 and took < 20, (took, done.stderr)  # the process start included; not 600 s
    assert f"nothing listens at {url}" in done.stdout and "--wait-boot" in done.stdout
    assert "Traceback" not in done.stderr and not (catalog_copy / "ledger").exists()


def test_a_server_that_is_not_an_llm_server_is_never_a_ledger_row(catalog_copy):
    with serve_http(WebSite) as url:
        done, _ = smoke(catalog_copy, url, "--timeout", "30", "--record-errors")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ERROR" in done.stdout and "not an OpenAI-compatible server root" in done.stdout
    assert "GET /v1/models answers HTTP 404" in done.stdout and "without /v1" not in done.stdout
    assert "not recorded: the endpoint is not an LLM server" in done.stdout
    assert not (catalog_copy / "ledger").exists()  # even with --record-errors


def test_a_loading_server_is_waited_for_with_a_line_every_few_seconds_on_stderr(catalog_copy):
    with serve_http(Loading) as url:
        done, took = smoke(catalog_copy, url, "--timeout", "12", "--json")
    lines = [line for line in done.stderr.splitlines() if line.startswith("smoke: waiting for")]
    assert 2 <= len(lines) <= 4, done.stderr  # at 0, 5 and 10 s of the 12 s budget
    assert lines[0] == f"smoke: waiting for {url}: GET /health: HTTP 503 (still loading) (0 s of 12 s)"
    assert "(5 s of 12 s)" in lines[1]
    record = yaml.safe_load(done.stdout)
    assert record["verdict"] == "error" and "not ready before the timeout" in record["reasons"][0]


def test_wait_boot_waits_for_a_closed_port(catalog_copy):
    url = f"http://127.0.0.1:{free_port()}"
    done, took = smoke(catalog_copy, url, "--timeout", "6", "--wait-boot")
    # it waited out the budget (a fail-fast answer takes well under a second); the last probe may end a few
    # hundredths before the 6 s when the next one would pass the deadline
    assert done.returncode == 1 and took >= 5
    assert "not ready before the timeout" in done.stdout and "nothing listens" not in done.stdout
    assert f"smoke: waiting for {url}: GET /health: ConnectError" in done.stderr




def test_the_pod_s_state_decides_whether_a_refused_connection_is_waited_out():
    """--kube-context: a pod whose engine is starting is waited for; a ready, crashing or finished one is not.
    (The pod is the adapter's view, built here as the cluster would report it: no API server runs here.)"""
    from types import SimpleNamespace

    from generator.cli.smoke import _booting

    def pod(phase: str, ready: bool, state: str, deleting: bool = False) -> SimpleNamespace:
        return SimpleNamespace(engine=SimpleNamespace(ready=ready, state=state),
                               pod=SimpleNamespace(phase=phase, deleting=deleting, namespace="ns", name="app-0"))

    said: list[str] = []
    assert _booting(pod("Pending", False, "waiting: ContainerCreating"), said.append)
    assert _booting(pod("Running", False, "running"), said.append)
    assert said[0] == "the pod ns/app-0 is starting (waiting: ContainerCreating, not ready): waiting for it"
    assert not _booting(pod("Running", True, "running"), said.append)
    assert not _booting(pod("Running", False, "waiting: CrashLoopBackOff"), said.append)
    assert not _booting(pod("Failed", False, "terminated: Error (exit 1)"), said.append)
    assert not _booting(pod("Running", False, "running", deleting=True), said.append)
