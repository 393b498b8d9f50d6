"""A loopback HTTP server that stands in for the Hugging Face hub (nothing real can be reached from the tests):
it answers the routes `catalog new` uses, `GET /api/models/{repo}/tree/{revision}` (a JSON file list with sizes)
and `GET /{repo}/resolve/{revision}/{path}` (the file), with HTTP Range requests (206 + Content-Range) unless
`ranges` is off, an optional delay before each chunk (a slow server), and a record of every request's
Authorization header and Range."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Hub:
    files: dict[str, dict[str, Path | bytes]] = field(default_factory=dict)  # repo -> {path: file or bytes}
    ranges: bool = True
    delay_s: float = 0.0
    chunk: int = 64 * 1024
    seen: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # (path, auth, range)
    redirects: dict[str, str] = field(default_factory=dict)  # "repo/path" -> URL answered with a 302 (a CDN)
    sent: int = 0  # body bytes sent
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def size(self, repo: str, path: str) -> int | None:
        item = self.files.get(repo, {}).get(path)
        if item is None:
            return None
        return len(item) if isinstance(item, bytes) else item.stat().st_size

    def read(self, repo: str, path: str, start: int, end: int) -> bytes:
        """Bytes start..end-1 (a real-shape file is sparse and GBs long: never read whole)."""
        item = self.files[repo][path]
        if isinstance(item, bytes):
            return item[start:end]
        with item.open("rb") as fh:
            fh.seek(start)
            return fh.read(end - start)

    def start(self) -> Hub:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.hub = self
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


class _Server(ThreadingHTTPServer):
    hub: Hub


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.server.hub.seen.append((self.path, self.headers.get("Authorization"), self.headers.get("Range")))
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        try:
            if parts[:2] == ["api", "models"] and "tree" in parts:
                self._tree("/".join(parts[2:4]))
            elif len(parts) >= 5 and parts[2] == "resolve":
                self._file("/".join(parts[:2]), "/".join(parts[4:]))
            else:
                self._send(404, b"{}", "application/json")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _tree(self, repo: str) -> None:
        listing = [{"type": "file", "path": p, "size": self.server.hub.size(repo, p), "oid": "0" * 40}
                   for p in self.server.hub.files.get(repo, {})]
        self._send(200, json.dumps(listing).encode(), "application/json")

    def _file(self, repo: str, path: str) -> None:
        hub = self.server.hub
        if f"{repo}/{path}" in hub.redirects:
            self._send(302, b"", "text/plain", {"Location": hub.redirects[f"{repo}/{path}"]})
            return
        size = hub.size(repo, path)
        if size is None:
            self._send(404, b'{"error": "not found"}', "application/json")
            return
        rng = self.headers.get("Range")
        if not (hub.ranges and rng and rng.startswith("bytes=")):
            self._send(200, b"", "application/octet-stream", length=size, body=(repo, path, 0, size))
            return
        start_s, _, end_s = rng[6:].partition("-")
        start, end = int(start_s), min(int(end_s or size - 1), size - 1)
        if start >= size:
            self._send(416, b"", "text/plain")
            return
        self._send(206, b"", "application/octet-stream", {"Content-Range": f"bytes {start}-{end}/{size}"},
                   length=end + 1 - start, body=(repo, path, start, end + 1))

    def _send(self, status: int, data: bytes, kind: str, extra: dict[str, str] | None = None, *,
              length: int | None = None, body: tuple[str, str, int, int] | None = None) -> None:
        """Answer `data`, or the file slice `body` (repo, path, start, end) read chunk by chunk; a client that hangs
        up (the reader has its header) ends the answer."""
        hub = self.server.hub
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        start, end = (0, len(data)) if body is None else (body[2], body[3])
        for i in range(start, end, hub.chunk):
            if hub.delay_s:
                time.sleep(hub.delay_s)
            piece = data[i:i + hub.chunk] if body is None else hub.read(body[0], body[1], i, min(i + hub.chunk, end))
            self.wfile.write(piece)
            hub.sent += len(piece)
