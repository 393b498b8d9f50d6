"""`catalog serve` on the internet without a reverse proxy (issue 22, cause 2): slow, idle, oversized and
flooding clients, over real sockets on 127.0.0.1, against `catalog serve` in a subprocess (killed by PID).

Each test asserts a measured bound: the time until the server closes what it must close, the time a real
client waits meanwhile, and the server's peak memory (VmHWM of /proc/<pid>/status) during the attack. The
limits are generator/market/limits.py's, listed with their reasons in docs/security.md.
"""

from __future__ import annotations

import os
import resource
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.market import SERVE_START_S, free_port, make_store, serve

from generator.market.limits import MAX_HEAD_BYTES, MAX_URL_BYTES, REQUEST_READ_S

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store(tmp_path_factory, rendered_market) -> Path:
    return make_store(tmp_path_factory.mktemp("store"), rendered_market)


@pytest.fixture(scope="module")
def served(store, tmp_path_factory):
    with serve(store / "catalog", tmp_path_factory.mktemp("logs")) as server:
        yield server


def port_of(served) -> int:
    return int(served.url.rsplit(":", 1)[1])


def peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def closed(sock: socket.socket) -> bool:
    """True once the peer closed (reads EOF, possibly after a short error answer)."""
    sock.setblocking(False)
    try:
        while True:
            ready, _, _ = select.select([sock], [], [], 0)
            if not ready:
                return False
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True


def health_time(served) -> float:
    start = time.perf_counter()
    assert httpx.get(served.url + "/health", timeout=30).status_code == 200
    return time.perf_counter() - start


def test_idle_and_half_sent_connections_are_closed(served):
    port = port_of(served)
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(10)]  # idle: nothing sent
    for i in range(10):  # half a head, then nothing
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /api/v1/appstore/hash HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * i)
        socks.append(s)
    start = time.monotonic()
    try:
        while time.monotonic() - start < REQUEST_READ_S + 10:
            if all(closed(s) for s in socks):
                break
            time.sleep(0.25)
        took = time.monotonic() - start
        assert all(closed(s) for s in socks), f"{sum(not closed(s) for s in socks)} of 20 still open after {took:.0f}s"
        assert took < REQUEST_READ_S + 10
    finally:
        for s in socks:
            s.close()
    assert health_time(served) < 5


def test_a_half_sent_connection_gets_408(served):
    with socket.create_connection(("127.0.0.1", port_of(served)), timeout=REQUEST_READ_S + 10) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer


@pytest.mark.parametrize(("what", "status", "cap"), [("header", b"431", MAX_HEAD_BYTES), ("url", b"414", MAX_URL_BYTES)])
def test_an_endless_header_or_url_is_cut_at_its_cap(served, what, status, cap):
    before = peak_kib(served.pid)
    with socket.create_connection(("127.0.0.1", port_of(served)), timeout=20) as s:
        s.sendall(b"GET /" if what == "url" else b"GET /health HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        sent, answer = 0, b""
        start = time.monotonic()
        try:
            while sent < 64 * cap and time.monotonic() - start < 20:
                s.sendall(b"a" * 4096)
                sent += 4096
                if health_time(served) > 5:
                    pytest.fail("/health stalled during the attack")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed the connection: the point
        try:
            answer = s.recv(4096)
        except ConnectionResetError:
            answer = b"(reset)"
    assert answer.startswith(b"HTTP/1.1 " + status) or answer in (b"", b"(reset)"), answer[:80]
    assert sent < 64 * cap, f"{sent} bytes accepted; the cap is {cap}"
    assert peak_kib(served.pid) - before < 50_000  # KiB: the buffered head is dropped at the cap
    assert health_time(served) < 5


def test_honest_clients_pass_under_the_limits(served):
    with httpx.Client(base_url=served.url, timeout=30) as client:
        for _ in range(50):  # keep-alive: one connection, many requests
            assert client.get("/api/v1/appstore/hash", params={"version": "1.12.6"}).status_code == 200
        r = client.get("/api/v1/appstore/info", params={"version": "1.12.6"}, headers={"X-Pad": "p" * 8000})
        assert r.status_code == 200


def test_a_flood_of_half_open_connections_does_not_lock_clients_out(store, tmp_path):
    """1,100 connections that send nothing against a server limited to 1,024 file descriptors: a real client
    still gets its answer at once (the oldest idle connection is closed to make room)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"the hard file descriptor limit ({hard}) leaves no room for 1,100 client sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    port = free_port()
    log = tmp_path / "serve.log"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--catalog", str(store / "catalog"),
                                 "--port", str(port), "--no-access-log"], cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=limit)
    socks: list[socket.socket] = []
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + SERVE_START_S
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        for _ in range(1100):
            try:
                socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                break  # the backlog is full: the attack is as strong as it gets
        start = time.perf_counter()
        r = httpx.get(url + "/api/v1/appstore/hash", params={"version": "1.12.6"}, timeout=20)
        waited = time.perf_counter() - start
        assert r.status_code == 200 and waited < 5, (r.status_code, waited)
        assert proc.poll() is None
    finally:
        for s in socks:
            s.close()
        proc.kill()
        proc.wait(timeout=10)
