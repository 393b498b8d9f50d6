"""A STAND-IN for the GitHub REST API's pull-request endpoints, for tests only.

It is not GitHub: it implements just what `catalog publish` calls, with GitHub's documented shapes
(docs.github.com/en/rest/pulls/pulls): `GET /repos/{owner}/{repo}/pulls?head=owner:branch&state=open`,
`POST /repos/{owner}/{repo}/pulls`, `PATCH /repos/{owner}/{repo}/pulls/{number}`, and 401
`{"message": "Bad credentials"}` for a wrong token. It runs on 127.0.0.1 in a thread.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class StandIn:
    token: str
    pulls: list[dict] = field(default_factory=list)
    requests: list[tuple[str, str, dict]] = field(default_factory=list)
    url: str = ""


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output clean
            return

        def _reply(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorised(self) -> bool:
            if self.headers.get("Authorization") != f"Bearer {state.token}":
                self._reply(401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
                return False
            return True

        def _body(self) -> dict:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def do_GET(self) -> None:
            if not self._authorised():
                return
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            state.requests.append(("GET", parts.path, query))
            repo = parts.path.split("/")[2:4]
            found = [p for p in state.pulls if p["repo"] == repo and p["state"] == query.get("state", "open")
                     and p["head_label"] == query.get("head")]
            self._reply(200, found)

        def do_POST(self) -> None:
            if not self._authorised():
                return
            body = self._body()
            state.requests.append(("POST", self.path, body))
            repo = self.path.split("/")[2:4]
            head = body["head"] if ":" in body["head"] else f"{repo[0]}:{body['head']}"
            number = len(state.pulls) + 1
            pull = {"number": number, "state": "open", "title": body["title"], "body": body.get("body"),
                    "draft": body.get("draft", False), "base": body["base"], "head_label": head, "repo": repo,
                    "html_url": f"https://github.invalid/{repo[0]}/{repo[1]}/pull/{number}"}
            state.pulls.append(pull)
            self._reply(201, pull)

        def do_PATCH(self) -> None:
            if not self._authorised():
                return
            body = self._body()
            state.requests.append(("PATCH", self.path, body))
            number = int(self.path.rsplit("/", 1)[1])
            pull = next(p for p in state.pulls if p["number"] == number)
            pull.update({k: v for k, v in body.items() if k in ("title", "body")})
            self._reply(200, pull)

    return Handler


class GitHubStandIn:
    """Context manager: `with GitHubStandIn(token) as gh: gh.url, gh.pulls`."""

    def __init__(self, token: str):
        self.state = StandIn(token)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StandIn:
        self.thread.start()
        self.state.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self.state

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
