"""Open or update the pull request of an app branch through the GitHub REST API (httpx).

`POST /repos/{owner}/{repo}/pulls`, `GET ...pulls?head=owner:branch&state=open`, `PATCH ...pulls/{n}`
(docs.github.com/en/rest/pulls/pulls). The token goes in the Authorization header only; errors are
redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.publish.secrets import PublishError, Redactor

DEFAULT_API = "https://api.github.com"
_GITHUB_URL = re.compile(r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
                         r"(?P<owner>[A-Za-z0-9-]+)/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?/?$")


def github_repo(url: str) -> str | None:
    """`owner/repo` of a github.com remote URL, else None."""
    match = _GITHUB_URL.match(url)
    return f"{match['owner']}/{match['repo']}" if match else None


@dataclass
class GitHub:
    api: str
    token: str
    repo: str  # owner/repo the pull request is opened against
    redact: Redactor
    timeout: float = 30.0

    def _call(self, method: str, path: str, **kwargs) -> object:
        import httpx

        url = f"{self.api.rstrip('/')}/repos/{self.repo}{path}"
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "olares-llm-catalog"}
        try:
            response = httpx.request(method, url, headers=headers, timeout=self.timeout, **kwargs)
        except httpx.HTTPError as exc:
            raise self.redact.error(f"GitHub API {method} {url}: {exc}") from None
        if response.status_code >= 400:
            try:
                message = response.json().get("message", "")
            except ValueError:
                message = response.text[:200]
            raise self.redact.error(f"GitHub API {method} {url}: HTTP {response.status_code} {message}".rstrip())
        return response.json()

    def find_open(self, head: str) -> dict | None:
        found = self._call("GET", "/pulls", params={"head": head, "state": "open"})
        return found[0] if isinstance(found, list) and found else None

    def ensure(self, *, head: str, base: str, title: str, body: str, draft: bool) -> str:
        """Open the PR for `head`, or bring an open one's title and body up to date; returns what was done."""
        existing = self.find_open(head)
        if existing is None:
            pr = self._call("POST", "/pulls", json={"title": title, "head": head, "base": base, "body": body,
                                                    "draft": draft})
            return f"opened PR #{pr.get('number')} {pr.get('html_url', '')}".rstrip()
        if existing.get("title") != title or (existing.get("body") or "") != body:
            self._call("PATCH", f"/pulls/{existing['number']}", json={"title": title, "body": body})
            return f"updated PR #{existing['number']}"
        return f"PR #{existing['number']} is open"

    def is_open(self, head: str, title: str) -> bool:
        existing = self.find_open(head)
        return existing is not None and existing.get("title") == title


def check_repo(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+", value):
        raise PublishError(f"--pr-repo {value!r}: expected OWNER/REPO")
    return value
