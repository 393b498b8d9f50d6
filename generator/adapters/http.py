"""An httpx client whose every request has one total deadline, from the connect to the last body byte.

httpx's timeouts apply per socket operation: a server that sends its status line one byte a second
never trips a 30 s read timeout. Here each request gets its own `DeadlineBackend` (an httpcore network
backend): every connect, read, write and TLS handshake gets only the time left, and a watchdog shuts
the sockets down at the deadline, which wakes any read still blocked (a TLS handshake trickled byte by
byte included). httpx has no public hook for a network backend, so the transport's connection pool is
replaced by one built with it (httpx/_transports/default.py builds `_pool` the same way).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

from generator.adapters.deadline import Deadline

SocketOption = Any


class _Stream(httpcore.NetworkStream):
    """A network stream whose reads, writes and TLS upgrade get only the time left."""

    def __init__(self, inner: httpcore.NetworkStream, backend: DeadlineBackend):
        self._inner, self._backend = inner, backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._backend.left(timeout, "read"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._backend.left(timeout, "write"))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        upgraded = self._inner.start_tls(ssl_context, server_hostname,
                                         self._backend.left(timeout, "connect"))
        self._backend.watch(upgraded)
        return _Stream(upgraded, self._backend)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's blocking socket backend under one `Deadline`."""

    def __init__(self, deadline: Deadline):
        self.deadline = deadline
        self.fired = False
        self._inner = httpcore.SyncBackend()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def left(self, timeout: float | None, step: str) -> float:
        """`timeout` capped to the time left; httpcore's own timeout for `step` once the deadline has passed
        (httpx maps it to its TimeoutException, which the adapter translates into DeadlineExceeded)."""
        if self.fired or self.deadline.expired:
            message = f"the total deadline of {self.deadline.seconds:g} s has passed"
            if step == "connect":
                raise httpcore.ConnectTimeout(message)
            if step == "write":
                raise httpcore.WriteTimeout(message)
            raise httpcore.ReadTimeout(message)
        return self.deadline.cap(timeout)

    def watch(self, stream: httpcore.NetworkStream) -> None:
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.append(sock)
            if self.fired:
                self._shutdown()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[SocketOption] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, self.left(timeout, "connect"), local_address,
                                         socket_options)
        self.watch(stream)
        return _Stream(stream, self)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[SocketOption] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self.left(timeout, "connect"), socket_options)
        self.watch(stream)
        return _Stream(stream, self)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(min(seconds, self.deadline.left))

    def _shutdown(self) -> None:
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the fd itself, also under an SSLSocket

    def fire(self) -> None:
        self.fired = True
        self._shutdown()

    @contextlib.contextmanager
    def watchdog(self) -> Iterator[None]:
        """Shut every socket down when the deadline passes, for the duration of the block."""
        timer = threading.Timer(self.deadline.left, self.fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()


class _DeadlineTransport(httpx.HTTPTransport):
    def __init__(self, backend: DeadlineBackend, *, verify: bool | ssl.SSLContext = True):
        super().__init__(verify=verify, trust_env=False)
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, network_backend=backend, retries=0)


@contextlib.contextmanager
def deadline_client(seconds: float, **client_args: Any) -> Iterator[tuple[httpx.Client, DeadlineBackend]]:
    """An httpx.Client for one request (or a few) that all end `seconds` after this block starts.

    Environment proxies are not used (`trust_env=False`): a proxy transport would bypass the deadline."""
    backend = DeadlineBackend(Deadline(seconds))
    timeout = httpx.Timeout(seconds)
    with backend.watchdog(), httpx.Client(transport=_DeadlineTransport(backend), timeout=timeout, trust_env=False,
                                          **client_args) as client:
        yield client, backend


__all__ = ["DeadlineBackend", "deadline_client"]
