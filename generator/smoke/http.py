"""A bounded HTTP client for smoke tests: every call has a deadline and a byte cap.

A slow, hanging, malformed or oversized answer becomes a `SmokeFailure` with a one-line reason,
never a hang or a traceback. Before the response headers arrive, httpx's own timeouts (set to the
time left) bound the wait; while a body streams, a watchdog shuts the socket down at the deadline,
so a server that trickles bytes cannot stretch a call past it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

JSON_CAP = 1 << 20  # /health, /v1/models, /props
METRICS_CAP = 8 << 20  # /metrics of a busy vLLM is a few hundred KiB
STREAM_CAP = 16 << 20  # one streamed completion
LINE_CAP = 1 << 20  # one SSE line
CONNECT_S = 10.0


class SmokeFailure(Exception):
    """The endpoint did not answer as an OpenAI-compatible server should; the message says how."""


@dataclass
class Deadline:
    at: float

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(time.monotonic() + seconds)

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.at


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes

    def json(self, what: str) -> Any:
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise SmokeFailure(f"{what}: the answer is not JSON ({exc.msg})") from None


def server_root(url: str) -> str:
    """The server root the OpenAI paths hang off: no query, fragment, trailing slash or `/v1`."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    path = path[:-3] if path.endswith("/v1") else path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class Http:
    """One httpx.Client on a base URL; the only place this package talks HTTP to an app."""

    def __init__(self, base_url: str):
        import httpx

        self._httpx = httpx
        self.client = httpx.Client(base_url=server_root(base_url), follow_redirects=False,
                                   headers={"Accept-Encoding": "identity"})

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> "Http":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _timeout(self, deadline: Deadline, what: str) -> Any:
        left = deadline.left()
        if left <= 0:
            raise SmokeFailure(f"{what}: timed out")
        return self._httpx.Timeout(left, connect=min(left, CONNECT_S))

    def get(self, path: str, deadline: Deadline, cap: int = JSON_CAP, limit: float | None = None) -> Reply:
        """GET with the whole exchange inside the deadline (or `limit` seconds) and at most `cap` bytes."""
        what = f"GET {path}"
        with self._open("GET", path, what, deadline, limit) as response:
            body = b"".join(_capped(response.iter_raw(), cap, what))
            return Reply(response.status_code, body)

    def stream(self, path: str, payload: dict, deadline: Deadline) -> Iterator[tuple[float, bytes]]:
        """POST `payload` and yield (arrival time, line) for every line of a streamed 200 answer."""
        what = f"POST {path}"
        with self._open("POST", path, what, deadline, None, json=payload) as response:
            if response.status_code != 200:
                body = b"".join(_capped(response.iter_raw(), 4096, what, strict=False))
                raise SmokeFailure(f"{what}: HTTP {response.status_code}: {_excerpt(body)}")
            yield from _lines(_capped(response.iter_raw(), STREAM_CAP, what), what)

    @contextmanager
    def _open(self, method: str, path: str, what: str, deadline: Deadline, limit: float | None, **kw: Any):
        httpx = self._httpx
        bound = Deadline(min(deadline.at, time.monotonic() + limit)) if limit is not None else deadline
        try:
            with self.client.stream(method, path, timeout=self._timeout(bound, what), **kw) as response:
                with _watchdog(response, bound):
                    yield response
                    if bound.expired():
                        raise SmokeFailure(f"{what}: no complete answer before the deadline")
        except SmokeFailure:
            raise
        except httpx.TimeoutException:
            raise SmokeFailure(f"{what}: timed out") from None
        except (httpx.HTTPError, OSError) as exc:
            if bound.expired():
                raise SmokeFailure(f"{what}: no complete answer before the deadline") from None
            raise SmokeFailure(f"{what}: {type(exc).__name__}: {_reason(exc)}") from None


@contextmanager
def _watchdog(response: Any, deadline: Deadline) -> Iterator[None]:
    """Shut the response's socket down at the deadline, which wakes a blocked read."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    done = threading.Event()

    def fire() -> None:
        if not done.wait(deadline.left()) and sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    thread = threading.Thread(target=fire, name="smoke-watchdog", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _capped(chunks: Iterator[bytes], cap: int, what: str, strict: bool = True) -> Iterator[bytes]:
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > cap:
            if not strict:
                yield chunk[: max(0, cap - (total - len(chunk)))]
                return
            raise SmokeFailure(f"{what}: the answer exceeds {cap // 1024} KiB; not an OpenAI-compatible reply")
        yield chunk


def _lines(chunks: Iterator[bytes], what: str) -> Iterator[tuple[float, bytes]]:
    pending = b""
    for chunk in chunks:
        now = time.monotonic()
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield now, line.rstrip(b"\r")
        if len(pending) > LINE_CAP:
            raise SmokeFailure(f"{what}: a streamed line exceeds {LINE_CAP // 1024} KiB")
    if pending:
        yield time.monotonic(), pending.rstrip(b"\r")


def _excerpt(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return (text[:limit] + "...") if len(text) > limit else (text or "(empty body)")


def _reason(exc: BaseException) -> str:
    """The error's own words, without the URL (which may carry credentials)."""
    text = str(exc).strip() or type(exc).__name__
    return text.split(" for url ")[0][:200]
