"""Hostile servers on 127.0.0.1 for the deadline tests: real sockets, started and stopped by the test.

`silent_server()`: accepts TCP connections and never sends a byte (a registry or API that hangs).
`trickle_server()`: a STAND-IN for an HTTP API (the GitHub REST API in the tests) that answers every
request with a valid HTTP response, sent one byte a second, headers included, so that per-read
timeouts never fire. Neither is GitHub or a registry; both exist to hold a client past its deadline.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from contextlib import contextmanager
from collections.abc import Iterator

TRICKLED = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]'


class _Server:
    def __init__(self, serve) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.accepted: list[socket.socket] = []
        self._serve = serve
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._loop, daemon=True)
        self._accept.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)
            thread = threading.Thread(target=self._serve, args=(self, conn), daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        self.stop.set()
        for sock in [self.listener, *self.accepted]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._accept.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=5)


def _silent(server: _Server, conn: socket.socket) -> None:
    server.stop.wait()


def _trickle(server: _Server, conn: socket.socket) -> None:
    conn.settimeout(1.0)
    with contextlib.suppress(OSError):
        conn.recv(65536)  # the request (its first segment is enough)
    for byte in TRICKLED:
        if server.stop.wait(1.0):
            return
        try:
            conn.sendall(bytes([byte]))
        except OSError:
            return


@contextmanager
def silent_server() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts and never answers."""
    server = _Server(_silent)
    try:
        yield server.port
    finally:
        server.close()


@contextmanager
def trickle_server() -> Iterator[int]:
    """A port on 127.0.0.1 whose HTTP answer arrives one byte a second."""
    server = _Server(_trickle)
    try:
        yield server.port
    finally:
        server.close()


def elapsed(start: float) -> float:
    return time.monotonic() - start
