"""The limits a reverse proxy would otherwise give `catalog serve` (docs/security.md "The market source over HTTP").

uvicorn (0.54, httptools parser) closes an idle keep-alive connection after `timeout_keep_alive`, but has no
deadline for a request that never finishes arriving, no cap on the request head (httptools appends every piece
of an endless header value, and uvicorn every piece of an endless URL, to one growing buffer), and accepts
connections until the process runs out of file descriptors. `GuardedHttpToolsProtocol` is uvicorn's own
httptools protocol with those limits added around its parser callbacks (uvicorn's `Config(http=<class>)`):

- REQUEST_READ_S: a request (head and body) must arrive within this many seconds of its first byte, and a new
  connection must send one within it; otherwise 408 and the connection is closed. Between requests uvicorn's
  `timeout_keep_alive` (KEEP_ALIVE_S) closes an idle connection.
- MAX_HEAD_BYTES: the request line and headers together, counted on the raw bytes before the parser sees them
  (and again from the parser's callbacks for pipelined requests), MAX_URL_BYTES: the request target. Over: 431 /
  414 and the connection is closed; what was buffered is dropped, so an endless header costs at most this much.
- MAX_CONNECTIONS (and the file descriptor limit): at the cap, the oldest connection that is not in the middle
  of answering a request (idle, or still sending its head) is closed to make room; when every connection is
  busy, the new one gets 503 and is closed at once. A flood of half-open connections therefore cannot keep
  a real client out: the client's connection is the newest, and it sends its request at once.
"""

from __future__ import annotations

import resource
import time
from asyncio import TimerHandle, Transport
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_READ_S = 10.0  # Olares' detail request has a 30 s deadline in all (beclab/market detail_fetch_step.go)
KEEP_ALIVE_S = 5  # uvicorn's default; Olares polls every 5 minutes, so keep-alive only spans one sync
MAX_HEAD_BYTES = 16 * 1024  # h11's default max_incomplete_event_size; Olares sends heads of ~200 bytes
MAX_URL_BYTES = 8 * 1024  # nginx's large_client_header_buffers line size
MAX_CONNECTIONS = 4096
FD_RESERVE = 256  # descriptors kept for the rebuild (git, Helm, chart files) and the log
FD_WANTED = 8192  # the soft RLIMIT_NOFILE asked for at start (never above the hard limit)


def connection_cap() -> int:
    """Raise the soft file descriptor limit towards FD_WANTED (the hard limit allowing) and return the
    connection cap that leaves FD_RESERVE descriptors free."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = FD_WANTED if hard == resource.RLIM_INFINITY else min(FD_WANTED, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass  # keep the limit we have; the cap follows it
    usable = MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else soft - FD_RESERVE
    return max(16, min(MAX_CONNECTIONS, usable))


def _answer(status: bytes, reason: str) -> bytes:
    body = reason.encode("ascii")
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: "
            + str(len(body)).encode("ascii") + b"\r\nconnection: close\r\n\r\n" + body)


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a request deadline, a head and URL cap and a connection cap."""

    cap = MAX_CONNECTIONS  # set by `catalog serve` from connection_cap()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # waiting for (or reading) a request head
        self._head_bytes = 0
        self._head_tail = b""  # the last bytes of the head so far: a CRLFCRLF split between two reads is found
        self._parsed_head = 0  # the request line and headers as the parser reports them (pipelined requests)
        self._url_bytes = 0
        self._reading = False  # a request has started arriving and is not complete
        self._deadline: TimerHandle | None = None
        self._made_at = 0.0

    # -- the connection cap ---------------------------------------------------------------------------------
    def _busy(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
        self._made_at = time.monotonic()
        if len(self.connections) >= self.cap:
            idle = [c for c in self.connections if isinstance(c, GuardedHttpToolsProtocol) and not c._busy()]
            if not idle:
                transport.write(_answer(b"503 Service Unavailable", "too many connections; try again"))
                transport.close()
                return
            min(idle, key=lambda c: c._made_at).transport.close()  # the oldest idle or half-sent connection
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if hasattr(self, "transport"):
            super().connection_lost(exc)

    # -- the request deadline -------------------------------------------------------------------------------
    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(REQUEST_READ_S, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if not self._busy():
            self.transport.write(_answer(b"408 Request Timeout", f"the request did not arrive within "
                                         f"{REQUEST_READ_S:g} s"))
        self.transport.close()

    # -- the head and URL caps ------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return
        if self._in_head:
            self._arm()  # the first byte of a request (uvicorn has just cancelled its keep-alive timer)
            # the raw bytes of the head, counted before the parser sees them: a whole head sent in one write is
            # parsed and answered within this call, so a count taken afterwards came too late (issue 40: a 17-70 KB
            # head in one write got 200)
            joined = self._head_tail + data
            end = joined.find(b"\r\n\r\n")
            self._head_bytes += len(data) if end < 0 else end + 4 - len(self._head_tail)
            self._head_tail = joined[-3:] if end < 0 else b""
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse(b"431 Request Header Fields Too Large",
                             f"the request line and headers are larger than {MAX_HEAD_BYTES} bytes")
                return
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._url_bytes > MAX_URL_BYTES:
            self._refuse(b"414 URI Too Long", f"the request target is longer than {MAX_URL_BYTES} bytes")
        elif self._in_head and self._head_bytes > MAX_HEAD_BYTES:
            self._refuse(b"431 Request Header Fields Too Large",
                         f"the request line and headers are larger than {MAX_HEAD_BYTES} bytes")

    def _refuse(self, status: bytes, reason: str) -> None:
        self._disarm()
        self.url, self.headers = b"", []  # drop what was buffered
        self.transport.write(_answer(status, reason))
        self.transport.close()

    def on_url(self, url: bytes) -> None:
        self._url_bytes += len(url)
        self._parsed_head += len(url)
        if self._url_bytes <= MAX_URL_BYTES:
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parsed_head += len(name) + len(value) + 4  # `: ` and CRLF
        super().on_header(name, value)

    def on_message_begin(self) -> None:
        self._url_bytes = self._parsed_head = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self._parsed_head > MAX_HEAD_BYTES:  # a later request of a pipelined read: refused before it is answered
            self._refuse(b"431 Request Header Fields Too Large",
                         f"the request line and headers are larger than {MAX_HEAD_BYTES} bytes")
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self.transport.is_closing():
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head, self._head_bytes, self._head_tail = True, 0, b""
        if not self.transport.is_closing():
            super().on_message_complete()


__all__ = ["FD_RESERVE", "GuardedHttpToolsProtocol", "KEEP_ALIVE_S", "MAX_CONNECTIONS", "MAX_HEAD_BYTES",
           "MAX_URL_BYTES", "REQUEST_READ_S", "connection_cap"]
