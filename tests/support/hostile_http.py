"""A hostile HTTP server on 127.0.0.1 for the smoke attacks, and helpers to run `catalog smoke` against it.

The server is a raw socket, not http.server: it must be able to send what no well-behaved server sends
(a status line one byte a second, bytes that are not HTTP, a header block that never ends, JSON that is
not UTF-8) and to keep a connection open without answering. It is a stand-in by necessity: a real
engine will not misbehave on demand. Every thread and socket it starts is closed when the context exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "catalog_small"
APP, ALIAS, CONTEXT = "qwenlab", "qwenlab", 65536  # tests/fixtures/catalog_small/apps/qwenlab.yaml (llama.cpp)


@dataclass
class Reply:
    """What the server sends for one request: the first `quick` bytes of `data` at once, the rest `chunk`
    bytes every `pace` seconds (0: at once); then it closes the connection, or keeps it open without a
    word when `hang`."""

    data: bytes
    pace: float = 0.0
    chunk: int = 1
    hang: bool = False
    quick: int = 0


def response(status: int = 200, body: bytes = b"", *, headers: list[tuple[str, str]] | None = None,
             reason: str = "OK", length: bool = True) -> bytes:
    head = [f"HTTP/1.1 {status} {reason}"]
    head += [f"{k}: {v}" for k, v in (headers or [("Content-Type", "application/json")])]
    if length:
        head.append(f"Content-Length: {len(body)}")
    head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def json_reply(data: object, status: int = 200) -> Reply:
    return Reply(response(status, json.dumps(data).encode()))


def sse_reply(*lines: bytes) -> Reply:
    """A streamed answer whose end is the connection's close (no length)."""
    return Reply(response(200, b"".join(line + b"\n" for line in lines),
                          headers=[("Content-Type", "text/event-stream")], length=False))


REFLECT = b"{request}"  # in a Reply's data: replaced by the request's head, sent back as an HTTP 500 body
HEALTHY = json_reply({"status": "ok"})
MODELS = json_reply({"object": "list", "data": [{"id": ALIAS, "meta": {"n_ctx": CONTEXT}}]})


def good_stream(text: str = "The quick brown fox jumps over the lazy dog. " * 4) -> Reply:
    words = text.split(" ")
    chunks = [b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": w + " "}}]}).encode()
              for w in words]
    return sse_reply(*chunks, b"data: " + json.dumps({"choices": [], "usage": {"completion_tokens": len(words)}})
                     .encode(), b"data: [DONE]")


@dataclass
class HostileServer:
    url: str
    routes: dict[str, Reply] = field(default_factory=dict)
    requests: list[bytes] = field(default_factory=list)  # every request as received (head and body)
    default: Reply = field(default_factory=lambda: json_reply({"error": "not found"}, 404))


@contextlib.contextmanager
def hostile_server(routes: dict[str, Reply] | None = None) -> Iterator[HostileServer]:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    server = HostileServer(f"http://127.0.0.1:{listener.getsockname()[1]}", dict(routes or {}))
    stop = threading.Event()
    conns: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            conn.settimeout(5.0)
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 65536:
                data = conn.recv(65536)
                if not data:
                    return
                request += data
            head, _, body = request.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                data = conn.recv(65536)
                if not data:
                    break
                body += data
            server.requests.append(head + b"\r\n\r\n" + body)
            path = head.split(b" ")[1].decode("latin-1") if head.count(b" ") >= 2 else "/"
            reply = server.routes.get(path.split("?")[0], server.default)
            if REFLECT in reply.data:  # echo the request head back, as a debugging proxy's error page does
                reply = Reply(response(500, reply.data.replace(REFLECT, head)), reply.pace, reply.chunk, reply.hang)
            if reply.pace <= 0:
                conn.sendall(reply.data)
            else:
                conn.sendall(reply.data[:reply.quick])
                for i in range(reply.quick, len(reply.data), reply.chunk):
                    if stop.wait(reply.pace):
                        return
                    conn.sendall(reply.data[i:i + reply.chunk])
            if reply.hang:
                stop.wait()
            conn.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (socket.timeout, OSError):
                continue
            conns.append(conn)
            thread = threading.Thread(target=serve, args=(conn,), daemon=True)
            threads.append(thread)
            thread.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield server
    finally:
        stop.set()
        acceptor.join()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()
        for thread in threads:
            thread.join(timeout=5)
        listener.close()


def catalog_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    return dest


def snapshot(root: Path) -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*") if p.is_file()}


def written(root: Path, before: dict[Path, tuple[int, int]]) -> list[Path]:
    """Every file under `root` that is new or changed since `before`."""
    return [p for p, stamp in snapshot(root).items() if before.get(p) != stamp]


def assert_nowhere(secrets: list[str], *texts: str, files: list[Path] = ()) -> None:
    """No secret in any text or any file's bytes."""
    for secret in secrets:
        for text in texts:
            assert secret not in text, f"{secret!r} leaked:\n{text}"
        for path in files:
            assert secret.encode() not in path.read_bytes(), f"{secret!r} leaked into {path}"


@dataclass
class Ran:
    code: int
    out: str
    err: str
    seconds: float


def run_catalog(*args: str, timeout: float = 60, env: dict | None = None, preexec=None) -> Ran:
    """`python -m generator.cli ARGS` in a child process (this worktree's code), timed."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "generator.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200", **(env or {})},
                          preexec_fn=preexec)
    return Ran(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def no_traceback(ran: Ran) -> None:
    assert "Traceback" not in ran.err and "internal error" not in ran.err, ran.err
