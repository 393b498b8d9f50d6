"""Load and faults over real sockets: 200 concurrent clients on hash / info / details, bounded in count and
time, get 200s with identical bytes while bad requests are mixed in; a client that disconnects mid-request
or sends a body slowly does not stop the others. The throughput figures are bench/serve_bench.py's.
"""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest
from support.market import make_store, serve

CLIENTS = 200
PER_CLIENT = 5


@pytest.fixture(scope="module")
def served(tmp_path_factory, rendered_market):
    store = make_store(tmp_path_factory.mktemp("store"), rendered_market)
    with serve(store / "catalog", tmp_path_factory.mktemp("logs")) as server:
        yield server


async def _storm(url: str, ids: list[str]) -> tuple[dict[str, set[bytes]], list[int], list[float]]:
    bodies: dict[str, set[bytes]] = {"hash": set(), "info": set(), "details": set()}
    statuses: list[int] = []
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60.0) as client:

        async def one(n: int) -> None:
            for k in range(PER_CLIENT):
                kind = ("hash", "info", "details", "bad")[(n + k) % 4]
                start = time.perf_counter()
                if kind == "hash":
                    r = await client.get("/api/v1/appstore/hash", params={"version": "1.12.6"})
                elif kind == "info":
                    r = await client.get("/api/v1/appstore/info", params={"version": "1.12.6"})
                elif kind == "details":
                    r = await client.post("/api/v1/applications/info", json={"app_ids": ids, "version": "1.12.6"})
                else:
                    r = await client.post("/api/v1/applications/info", content=b"{broken")
                latencies.append(time.perf_counter() - start)
                statuses.append(r.status_code if kind != "bad" else (200 if r.status_code == 400 else r.status_code))
                if kind != "bad":
                    bodies[kind].add(r.content)

        await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(CLIENTS))), timeout=240)
    return bodies, statuses, latencies


def test_200_clients_get_the_same_answers(served):
    ids = list(served.get("/api/v1/appstore/info").json()["data"]["apps"])[:10]
    bodies, statuses, latencies = asyncio.run(_storm(served.url, ids))
    assert len(statuses) == CLIENTS * PER_CLIENT and set(statuses) == {200}
    assert all(len(v) == 1 for v in bodies.values()), {k: len(v) for k, v in bodies.items()}  # one snapshot
    latencies.sort()
    assert latencies[int(len(latencies) * 0.99)] < 20.0  # bounded even on a loaded CI machine
    assert served.health()["status"] == "ok"


def read_answer(sock: socket.socket, limit: int = 1 << 20) -> bytes:
    """One whole HTTP/1.1 answer: the head up to its blank line, then Content-Length bytes of body (or up to
    the close). One `recv()` may return a part of it (the head alone, a few bytes), so read until complete."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data  # closed before (or without) a head
        data += chunk
        assert len(data) < limit, "an answer head larger than 1 MiB"
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                   if line.lower().startswith(b"content-length:")), None)
    while length is None or len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
        assert len(body) < limit, "an answer larger than 1 MiB"
    return head + b"\r\n\r\n" + body


def _raw(port: int, data: bytes, *, read: bool) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        return read_answer(sock) if read else b""


def test_broken_and_slow_clients_do_not_stop_the_others(served):
    port = int(served.url.rsplit(":", 1)[1])
    body = b'{"app_ids": ["x"]}'
    for _ in range(20):  # disconnect after half a body / half a request line
        half = b"POST /api/v1/applications/info HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"app"
        _raw(port, half, read=False)
        _raw(port, b"GET /api/v1/apps", read=False)
    slow = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:  # a client that sends its body a byte at a time keeps its own connection busy, nobody else's
        slow.sendall(b"POST /api/v1/applications/info HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
        slow.sendall(body[:3])
        start = time.perf_counter()
        assert served.get("/api/v1/appstore/hash").status_code == 200
        assert time.perf_counter() - start < 5.0
        slow.sendall(body[3:])
        answer = read_answer(slow)
        assert answer.startswith(b"HTTP/1.1 200") and b'"not_found":["x"]' in answer
    finally:
        slow.close()
    garbage = _raw(port, b"\x16\x03\x01\x02\x00garbage\r\n\r\n", read=True)  # TLS hello on plain HTTP
    assert garbage == b"" or garbage.startswith(b"HTTP/1.1 400")
    assert served.health()["status"] == "ok"
