"""A bounded HTTP client for smoke tests: every call has a total deadline and a byte cap.

A slow, hanging, malformed, oversized or hostile answer becomes a `SmokeFailure` with a one-line reason,
never a hang or a traceback. The deadline is total, from the connect to the last byte: httpx's own
timeouts apply per socket operation (https://www.python-httpx.org/advanced/timeouts/), so a server that
sends one byte a second would never trip them. Here every socket operation of the client (connect,
TLS handshake, each read and write) waits at most the time left before the call's deadline and fails
once it has passed: the client's httpcore pool runs on a network backend (`_Backend`) that caps each
operation's timeout that way (httpcore's `network_backend` hook, encode/httpcore httpcore/_backends/).

Credentials in the endpoint URL (`http://user:pass@host`, whatever characters the password holds) are
taken out of the URL, sent as HTTP Basic auth, and masked in every message (generator/core/redact.py).
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from collections.abc import Iterator

import httpcore

if TYPE_CHECKING:
    import httpx

from generator.core import Data
from generator.core import credentials, secret_forms
from generator.core.redact import redact

JSON_CAP = 1 << 20  # /health, /v1/models, /props
METRICS_CAP = 8 << 20  # /metrics of a busy vLLM is a few hundred KiB
STREAM_CAP = 16 << 20  # one streamed completion
LINE_CAP = 1 << 20  # one SSE line
CONNECT_S = 10.0


# "foreign": something answered, but not as an OpenAI-compatible server (404 on /health and /v1/models, no model
# list): the endpoint is not the app, so nothing about the app was measured.
Unreached = Literal["connect", "timeout", "foreign"]


class SmokeFailure(Exception):
    """The endpoint did not answer as an OpenAI-compatible server should; the message says how.

    `unreached` says why nothing could be measured: "connect" (refused, DNS, reset before an answer),
    "timeout" (no byte of an answer before the deadline) or "foreign" (an answer, but not an LLM server's: the
    endpoint is not the app); None when the app did answer, wrongly.
    """

    def __init__(self, message: str, *, unreached: Unreached | None = None) -> None:
        super().__init__(message)
        self.unreached = unreached


@dataclass
class Deadline:
    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
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
        """The body as JSON; a SmokeFailure naming what is wrong (not UTF-8, not JSON, nested too deep)."""
        return parse_json(self.body, what)


def parse_json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise SmokeFailure(f"{what}: the answer is not UTF-8 JSON (byte {exc.start}: {exc.reason})") from None
    except RecursionError:
        raise SmokeFailure(f"{what}: the answer's JSON is nested too deeply to be an OpenAI-compatible reply") from None
    except ValueError as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise SmokeFailure(f"{what}: the answer is not JSON ({reason[:200]})") from None


def server_root(url: str) -> str:
    """The server root the OpenAI paths hang off: no query, fragment, trailing slash or `/v1`."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    path = path[:-3] if path.endswith("/v1") else path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def check_endpoint(url: str) -> str:
    """The server root of `url` without credentials; SmokeFailure (redacted) when it is not an http(s) URL."""
    bare = credentials(url)[0]
    shown = redact(bare)
    if not bare.lower().startswith(("http://", "https://")):
        raise SmokeFailure(f"{shown!r}: expected an http:// or https:// URL")
    try:
        import httpx

        root = server_root(bare)
        parsed = httpx.URL(root)
        if not parsed.host:
            raise SmokeFailure(f"{shown!r} is not a URL this tool can call: no host")
    except (ValueError, httpx.InvalidURL) as exc:
        raise SmokeFailure(f"{shown!r} is not a URL this tool can call: {redact(str(exc))[:200]}") from None
    return root


class _Clock:
    """The deadline of the call in flight, shared by every connection of one client."""

    def __init__(self) -> None:
        self.deadline: Deadline | None = None
        self.received = 0  # bytes of the call in flight so far

    def cap(self, timeout: float | None, expired: type[Exception]) -> float | None:
        if self.deadline is None:
            return timeout
        left = self.deadline.left()
        if left <= 0:
            raise _expired(expired)
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A socket stream whose every operation waits at most the time left before the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, clock: _Clock):
        self._inner, self._clock = inner, clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._inner.read(max_bytes, self._clock.cap(timeout, httpcore.ReadTimeout))
        self._clock.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._clock.cap(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._clock.cap(timeout, httpcore.ConnectTimeout))
        return _Stream(inner, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's blocking backend with every connect and stream bounded by the clock's deadline."""

    def __init__(self, clock: _Clock):
        self._inner, self._clock = httpcore.SyncBackend(), clock

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        # The name is resolved here, within the deadline: socket.create_connection (httpcore's SyncBackend) calls
        # getaddrinfo, which no socket timeout bounds (a resolver that never answers would hang the smoke).
        # Then each address is tried in the order the resolver gave, with what is left of the deadline; TLS
        # still verifies and sends the request's host name (httpcore passes it to start_tls).
        addresses = resolve(host, port, self._clock.cap(timeout, httpcore.ConnectTimeout))
        failure: Exception | None = None
        for address in addresses:
            try:
                stream = self._inner.connect_tcp(address, port, self._clock.cap(timeout, httpcore.ConnectTimeout),
                                                 local_address, socket_options)
            except httpcore.ConnectError as exc:
                failure = exc
                continue
            return _Stream(stream, self._clock)
        if failure is not None:
            raise failure
        raise httpcore.ConnectError(f"{host}: no address to connect to")

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self._clock.cap(timeout, httpcore.ConnectTimeout),
                                                 socket_options)
        return _Stream(stream, self._clock)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def resolve(host: str, port: int, timeout: float | None) -> list[str]:
    """The addresses of `host` (an IP literal as it is), resolved in a daemon thread bounded by `timeout`:
    httpcore.ConnectTimeout when the resolver has not answered in time (the thread is left to finish on its own),
    httpcore.ConnectError when it says the name does not exist."""
    import ipaddress
    import socket
    import threading

    try:
        ipaddress.ip_address(host.strip("[]"))
        return [host.strip("[]")]
    except ValueError:
        pass
    found: list[str] = []
    failed: list[OSError] = []

    def lookup() -> None:
        try:
            for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
                if str(sockaddr[0]) not in found:
                    found.append(str(sockaddr[0]))
        except OSError as exc:
            failed.append(exc)

    worker = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise httpcore.ConnectTimeout(f"resolving {host}: no answer from the resolver in {timeout or 0:.1f} s")
    if failed or not found:
        raise httpcore.ConnectError(f"resolving {host}: {failed[0] if failed else 'no address'}")
    return found


def _transport(clock: _Clock) -> Any:
    """httpx's transport on a pool that uses `_Backend`.

    httpx.HTTPTransport builds its httpcore.ConnectionPool in `_pool` and sends every request through it
    (encode/httpx httpx/_transports/default.py); httpx has no argument for the network backend, so the pool
    is replaced by an equal one that has it. tests/test_smoke_http.py and tests/adversarial/ fail if this
    ever stops bounding a call.
    """
    import httpx

    transport = httpx.HTTPTransport()
    transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=_Backend(clock))
    return transport


class Http:
    """One httpx.Client on a base URL; the only place this package talks HTTP to an app."""

    def __init__(self, base_url: str):
        import httpx

        self._httpx = httpx
        self._clock = _Clock()
        _, user, password = credentials(base_url)
        self.secrets = secret_forms([password] if password else [], user)
        self._invalid: str | None = None
        try:
            root = check_endpoint(base_url)
        except SmokeFailure:
            root = "http://invalid.invalid"  # never called: every call fails with the reason in `_invalid`
            self._invalid = redact(credentials(base_url)[0])
        # trust_env=False: no proxy from the environment (its transport would not be bounded); the endpoint
        # is the app itself. Certificates from SSL_CERT_FILE still count (httpx.create_ssl_context).
        self.client = httpx.Client(base_url=root, transport=_transport(self._clock),
                                   follow_redirects=False, trust_env=False,
                                   auth=(user, password or "") if user is not None else None,
                                   headers={"Accept-Encoding": "identity"})

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def redact(self, text: str) -> str:
        """`text` with the endpoint's credentials and any other secret masked."""
        return redact(text, self.secrets)

    def _timeout(self, deadline: Deadline, what: str) -> Any:
        left = deadline.left()
        if left <= 0:
            raise SmokeFailure(f"{what}: timed out", unreached="timeout")
        return self._httpx.Timeout(left, connect=min(left, CONNECT_S))

    def get(self, path: str, deadline: Deadline, cap: int = JSON_CAP, limit: float | None = None) -> Reply:
        """GET with the whole exchange inside the deadline (or `limit` seconds) and at most `cap` bytes."""
        what = f"GET {path}"
        with self._open("GET", path, what, deadline, limit) as response:
            body = b"".join(_capped(response.iter_raw(), cap, what))
            return Reply(response.status_code, body)

    def post(self, path: str, payload: dict[str, Data], deadline: Deadline, cap: int = JSON_CAP,
             limit: float | None = None) -> Reply:
        """POST JSON with the whole exchange inside the deadline (or `limit` seconds) and at most `cap` bytes."""
        what = f"POST {path}"
        with self._open("POST", path, what, deadline, limit, json=payload) as response:
            body = b"".join(_capped(response.iter_raw(), cap, what))
            return Reply(response.status_code, body)

    def stream(self, path: str, payload: dict[str, Data], deadline: Deadline) -> Iterator[tuple[float, bytes]]:
        """POST `payload` and yield (arrival time, line) for every line of a streamed 200 answer."""
        what = f"POST {path}"
        with self._open("POST", path, what, deadline, None, json=payload) as response:
            if response.status_code != 200:
                body = b"".join(_capped(response.iter_raw(), 4096, what, strict=False))
                excerpt = _excerpt(self.redact(body.decode("utf-8", "replace")))
                raise SmokeFailure(f"{what}: HTTP {response.status_code}: {excerpt}")
            yield from _lines(_capped(response.iter_raw(), STREAM_CAP, what), what)

    @contextmanager
    def _open(self, method: str, path: str, what: str, deadline: Deadline, limit: float | None,
              **kw: Any) -> Iterator[httpx.Response]:
        httpx = self._httpx
        if self._invalid is not None:
            raise SmokeFailure(f"{what}: {self._invalid!r} is not a URL this tool can call")
        bound = Deadline(min(deadline.at, time.monotonic() + limit)) if limit is not None else deadline
        timeout = self._timeout(bound, what)
        self._clock.deadline, self._clock.received = bound, 0
        try:
            with self.client.stream(method, path, timeout=timeout, **kw) as response:
                yield response
                if bound.expired():
                    raise SmokeFailure(f"{what}: no complete answer before the deadline", unreached="timeout")
        except SmokeFailure:
            raise
        except httpx.TimeoutException:
            if self._clock.received:
                raise SmokeFailure(f"{what}: no complete answer before the deadline", unreached="timeout") from None
            raise SmokeFailure(f"{what}: timed out", unreached="timeout") from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
            if bound.expired():
                raise SmokeFailure(f"{what}: no complete answer before the deadline", unreached="timeout") from None
            # ConnectError: refused, unreachable, DNS; RemoteProtocolError before any byte: the peer hung up
            unreached: Unreached | None = "connect" if isinstance(exc, (httpx.ConnectError, OSError)) or (
                isinstance(exc, httpx.RemoteProtocolError) and not self._clock.received) else None
            raise SmokeFailure(f"{what}: {type(exc).__name__}: {_reason(self.redact(str(exc)))}",
                               unreached=unreached) from None
        finally:
            self._clock.deadline = None


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


def _excerpt(body: str, limit: int = 400) -> str:
    """One line of at most `limit` characters of an (already redacted) body."""
    text = " ".join(body.split())
    return (text[:limit] + "...") if len(text) > limit else (text or "(empty body)")


def _reason(text: str) -> str:
    """An error's own (already redacted) words, without the URL."""
    text = text.strip() or "no reason given"
    return text.split(" for url ")[0][:200]


def _expired(cls: type[Exception]) -> Exception:
    """The caller's timeout class (httpcore's own), raised inside its network backend at the deadline."""
    return cls("the call's deadline has passed")
