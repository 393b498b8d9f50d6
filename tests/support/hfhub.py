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
    sent: int = 0  # body bytes sent
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def body(self, repo: str, path: str) -> bytes | None:
        item = self.files.get(repo, {}).get(path)
        if item is None:
            return None
        return item if isinstance(item, bytes) else item.read_bytes()

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
        listing = [{"type": "file", "path": p, "size": len(self.server.hub.body(repo, p) or b""), "oid": "0" * 40}
                   for p in self.server.hub.files.get(repo, {})]
        self._send(200, json.dumps(listing).encode(), "application/json")

    def _file(self, repo: str, path: str) -> None:
        data = self.server.hub.body(repo, path)
        if data is None:
            self._send(404, b'{"error": "not found"}', "application/json")
            return
        rng = self.headers.get("Range")
        if not (self.server.hub.ranges and rng and rng.startswith("bytes=")):
            self._send(200, data, "application/octet-stream")
            return
        start_s, _, end_s = rng[6:].partition("-")
        start, end = int(start_s), min(int(end_s or len(data) - 1), len(data) - 1)
        if start >= len(data):
            self._send(416, b"", "text/plain")
            return
        self._send(206, data[start:end + 1], "application/octet-stream",
                   {"Content-Range": f"bytes {start}-{end}/{len(data)}"})

    def _send(self, status: int, data: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        for i in range(0, len(data), self.server.hub.chunk):
            if self.server.hub.delay_s:
                time.sleep(self.server.hub.delay_s)
            self.wfile.write(data[i:i + self.server.hub.chunk])
            self.server.hub.sent += min(self.server.hub.chunk, len(data) - i)
