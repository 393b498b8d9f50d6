"""The Hugging Face hub and remote model files: a repository's file list and config.json, and the first bytes of a
file (a GGUF header) by HTTP Range requests. The one place `catalog new` talks to a server.

Routes (the hub's documented API, as huggingface_hub's `HfApi.list_repo_tree` and huggingface.js
packages/hub/src/lib/list-files.ts call it): `GET {endpoint}/api/models/{repo}/tree/{revision}?recursive=true`
answers a JSON list of `{type, path, size, lfs: {size}}`, continued by a `Link: <…>; rel="next"` header;
`GET {endpoint}/{repo}/resolve/{revision}/{path}` answers the file (redirects followed). `HF_ENDPOINT` names the
endpoint (default https://huggingface.co, huggingface_hub's own variable), `HF_TOKEN` the token: sent as
`Authorization: Bearer` to the endpoint's own host only, never to another host (httpx drops it on a redirect to
another origin, as the hub's file redirects are), never in a message.

Every call has one total deadline from the connect to the last byte (`generator.adapters.http`); a file's head
is read with growing `Range: bytes=0-N` requests up to a byte cap, and a server that answers 200 (no Range
support) is read as a stream and closed as soon as the head is complete, so the weights are never downloaded.
httpx errors are translated here into RemoteError (DeadlineExceeded at the deadline).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from generator.adapters.deadline import DeadlineExceeded
from generator.core import RemoteError

DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_HEAD_CAP = 64 * 1024 * 1024  # a 256K-token vocabulary with its merges is ~10 MiB of header
FIRST_RANGE = 1024 * 1024
MAX_JSON = 16 * 1024 * 1024
MAX_PAGES = 50
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def display(url: str) -> str:
    """`url` without userinfo or query (a signed redirect carries credentials in its query)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True)
class RepoFile:
    path: str
    size: int


@dataclass(frozen=True)
class Head:
    """The first bytes of a remote file: `data`, the file's whole size where the server said it, and whether it
    answered Range requests."""

    data: bytes
    total: int | None
    ranged: bool


class HfApi:
    """The hub at `endpoint` with `token` (None: anonymous); every call ends within `timeout_s`."""

    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, token: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        self.endpoint = endpoint.rstrip("/")
        self._token = token or None
        self.timeout_s = timeout_s

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> HfApi:
        env = os.environ if env is None else env
        return cls(env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT, env.get("HF_TOKEN") or None, timeout_s)

    @property
    def has_token(self) -> bool:
        return self._token is not None

    def _fail(self, message: str, kind: type[RemoteError] = RemoteError) -> RemoteError:
        text = message.replace(self._token, "***") if self._token else message
        return kind(text)

    def _headers(self, url: str) -> dict[str, str]:
        headers = {"User-Agent": "olares-llm-catalog"}
        own = urlsplit(self.endpoint)
        there = urlsplit(url)
        if self._token and (there.scheme, there.netloc) == (own.scheme, own.netloc):
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def resolve_url(self, repo: str, revision: str, path: str) -> str:
        return f"{self.endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(path)}"

    # ---- JSON ------------------------------------------------------------------------------------------------

    def _get_json(self, url: str, *, missing_ok: bool = False) -> tuple[Any, str | None]:
        """(decoded JSON, the Link header's next URL); (None, None) for a 404 when `missing_ok`."""
        import httpx

        from generator.adapters.http import deadline_client

        where = f"GET {display(url)}"
        with deadline_client(self.timeout_s, follow_redirects=True) as (client, backend):
            try:
                with client.stream("GET", url, headers=self._headers(url)) as response:
                    status = response.status_code
                    link = response.headers.get("link", "")
                    if missing_ok and status == 404:
                        return None, None
                    chunks, size = [], 0
                    for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > MAX_JSON:
                            raise self._fail(f"{where}: the answer is larger than {MAX_JSON:,} bytes")
                        chunks.append(chunk)
            except httpx.HTTPError as exc:
                if backend.fired or backend.deadline.expired:
                    raise self._fail(f"{where}: no complete answer within the deadline of {self.timeout_s:g} s",
                                     DeadlineExceeded) from None
                raise self._fail(f"{where}: {type(exc).__name__}: {exc}") from None
        data = b"".join(chunks)
        if status == 401 or status == 403:
            hint = "" if self._token else " (a gated or private repository: set HF_TOKEN)"
            raise self._fail(f"{where}: HTTP {status}{hint}")
        if status >= 400:
            raise self._fail(f"{where}: HTTP {status}")
        try:
            decoded = json.loads(data)
        except ValueError:
            raise self._fail(f"{where}: HTTP {status} but the answer is not JSON") from None
        match = _NEXT.search(link)
        return decoded, (match.group(1) if match else None)

    def files(self, repo: str, revision: str = "main") -> list[RepoFile]:
        """Every file of `repo` at `revision` with its size (an LFS file's own size, not its pointer's)."""
        url: str | None = f"{self.endpoint}/api/models/{repo}/tree/{quote(revision, safe='')}?recursive=true"
        out: list[RepoFile] = []
        for _ in range(MAX_PAGES):
            if url is None:
                return out
            page, url = self._get_json(url)
            if not isinstance(page, list):
                raise self._fail(f"GET {display(self.endpoint)}/api/models/{repo}/tree/{revision}: not a file list")
            for entry in page:
                if not isinstance(entry, dict) or entry.get("type") != "file":
                    continue
                lfs = entry.get("lfs")
                size = lfs.get("size") if isinstance(lfs, dict) else entry.get("size")
                path = entry.get("path")
                if isinstance(path, str) and isinstance(size, int) and not isinstance(size, bool):
                    out.append(RepoFile(path, size))
        raise self._fail(f"{repo}: more than {MAX_PAGES} pages of files")

    def config(self, repo: str, revision: str = "main") -> dict[str, Any] | None:
        """The repository's config.json, None where it has none."""
        data, _ = self._get_json(self.resolve_url(repo, revision, "config.json"), missing_ok=True)
        if data is not None and not isinstance(data, dict):
            raise self._fail(f"{repo} config.json: not a JSON object")
        return data

    # ---- a file's head -----------------------------------------------------------------------------------------

    def read_head(self, url: str, complete: Callable[[bytes], bool], cap: int = DEFAULT_HEAD_CAP) -> Head:
        """The first bytes of `url`, as many as `complete` needs (it is asked after each read), at most `cap`.

        Range requests for 1 MiB, then twice as much each time; a server that ignores Range (HTTP 200) is read
        as one stream, stopped as soon as `complete` says so. RemoteError when the head needs more than `cap`
        bytes, the file ends first, or the server fails; DeadlineExceeded past the one deadline of the call."""
        import httpx

        from generator.adapters.http import deadline_client

        where = display(url)
        with deadline_client(self.timeout_s, follow_redirects=True) as (client, backend):
            try:
                return self._head(client, url, complete, cap)
            except httpx.HTTPError as exc:
                if backend.fired or backend.deadline.expired:
                    raise self._fail(f"{where}: the header was not read within the deadline of "
                                     f"{self.timeout_s:g} s", DeadlineExceeded) from None
                raise self._fail(f"{where}: {type(exc).__name__}: {exc}") from None

    def _head(self, client: Any, url: str, complete: Callable[[bytes], bool], cap: int) -> Head:
        where = display(url)
        data = b""
        total: int | None = None
        want = min(FIRST_RANGE, cap)
        while True:
            headers = self._headers(url) | {"Range": f"bytes={len(data)}-{want - 1}", "Accept-Encoding": "identity"}
            with client.stream("GET", url, headers=headers) as response:
                status = response.status_code
                if status == 200:  # no Range support: one stream from byte 0
                    return self._streamed(response, where, complete, cap)
                if status != 206:
                    raise self._status(where, status, len(data))
                total = _content_range_total(response.headers.get("content-range", "")) or total
                buf = bytearray(data)
                for chunk in response.iter_bytes():
                    buf += chunk
                    if len(buf) >= want:
                        break
                data = bytes(buf[:want])
            if complete(data):
                return Head(data, total, True)
            if total is not None and len(data) >= total:
                raise self._fail(f"{where}: the file ends ({total:,} bytes) before its header does")
            if want >= cap:
                raise self._over_cap(where, cap)
            want = min(want * 2, cap)

    def _streamed(self, response: Any, where: str, complete: Callable[[bytes], bool], cap: int) -> Head:
        """The head of an HTTP 200 answer: read until `complete` (asked at 1, 2, 4 … MiB, not per chunk), then
        the stream is closed, the rest of the file never read."""
        length = response.headers.get("content-length")
        total = int(length) if length and length.isdigit() else None
        buf, check = bytearray(), FIRST_RANGE
        for chunk in response.iter_bytes():
            buf += chunk
            if len(buf) >= min(check, cap):
                check = 2 * len(buf)
                if complete(bytes(buf[:cap])):
                    return Head(bytes(buf[:cap]), total, False)
                if len(buf) >= cap:
                    raise self._over_cap(where, cap)
        if complete(bytes(buf)):
            return Head(bytes(buf), total, False)
        raise self._fail(f"{where}: the file ends ({len(buf):,} bytes) before its header does")

    def _over_cap(self, where: str, cap: int) -> RemoteError:
        return self._fail(f"{where}: no complete header in its first {cap:,} bytes (--header-cap raises the limit)")

    def _status(self, where: str, status: int, have: int) -> RemoteError:
        if status == 416:
            return self._fail(f"{where}: the file ends ({have:,} bytes) before its header does")
        hint = " (a gated or private repository: set HF_TOKEN)" if status in (401, 403) and not self._token else ""
        return self._fail(f"{where}: HTTP {status}{hint}")


def _content_range_total(value: str) -> int | None:
    """`bytes 0-99/1234` -> 1234 (None for `*` or anything else)."""
    m = re.match(r"^bytes\s+\d+-\d+/(\d+)$", value.strip())
    return int(m.group(1)) if m else None


__all__ = ["DEFAULT_ENDPOINT", "DEFAULT_HEAD_CAP", "Head", "HfApi", "RepoFile", "display"]
