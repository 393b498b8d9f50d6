"""The GitHub REST API (httpx), the one place the tool talks to GitHub.

Each call has one total deadline from the connect (`generator.adapters.http`), so a server that trickles
its headers cannot hold `publish` past it. The token travels only in the Authorization header
(docs.github.com/en/rest/authentication); messages name the method and URL without it, and pass through
the caller's redactor. httpx errors are translated here, where they are raised, into RemoteError
(DeadlineExceeded for the deadline), as httpx's own `map_exceptions` does for httpcore's
(httpx/_transports/default.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from generator.adapters.deadline import DeadlineExceeded
from generator.core import RemoteError

DEFAULT_API = "https://api.github.com"
DEFAULT_TIMEOUT_S = 60.0
MAX_BODY = 4 * 1024 * 1024  # a pull-request answer is a few KB; a larger one is not GitHub's


def _plain(text: str) -> str:
    return text


def _display(url: str) -> str:
    """`url` without userinfo (an API base URL may carry one)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, parts.fragment))


@dataclass(frozen=True)
class GitHubApi:
    """`request(method, path)` against `api` with `token`; JSON in, JSON out."""

    api: str = DEFAULT_API
    token: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    redact: Callable[[str], str] = field(default=_plain, compare=False)

    def with_redactor(self, redact: Callable[[str], str]) -> GitHubApi:
        return replace(self, redact=redact)

    def _fail(self, message: str, kind: type[RemoteError] = RemoteError) -> RemoteError:
        text = message.replace(self.token, "***") if self.token else message
        return kind(self.redact(text))

    def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                body: dict[str, object] | None = None) -> Any:
        """The decoded JSON answer; RemoteError (redacted) for a transport error, HTTP >= 400 or bad JSON."""
        import httpx

        from generator.adapters.http import deadline_client

        url = f"{self.api.rstrip('/')}{path}"
        where = f"GitHub API {method} {_display(url)}"
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                   "User-Agent": "olares-llm-catalog"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        with deadline_client(self.timeout_s) as (client, backend):
            try:
                with client.stream(method, url, headers=headers, params=params, json=body) as response:
                    data = self._read(response, where)
            except httpx.HTTPError as exc:
                if backend.fired or backend.deadline.expired:
                    raise self._fail(f"{where}: no complete answer within the deadline of {self.timeout_s:g} s",
                                     DeadlineExceeded) from None
                raise self._fail(f"{where}: {type(exc).__name__}: {exc}") from None
        return self._decode(response.status_code, data, where)

    def _read(self, response: Any, where: str) -> bytes:
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_BODY:
                raise self._fail(f"{where}: the answer is larger than {MAX_BODY} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _decode(self, status: int, data: bytes, where: str) -> Any:
        try:
            decoded = json.loads(data) if data else None
        except ValueError:
            decoded = None
        if status >= 400:
            message = decoded.get("message", "") if isinstance(decoded, dict) else data[:200].decode("utf-8", "replace")
            raise self._fail(f"{where}: HTTP {status} {message}".rstrip())
        if decoded is None and data:
            raise self._fail(f"{where}: HTTP {status} but the answer is not JSON")
        return decoded


__all__ = ["DEFAULT_API", "DEFAULT_TIMEOUT_S", "GitHubApi"]
