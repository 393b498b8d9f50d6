"""Open or update the pull request of an app branch through the GitHub REST API.

`POST /repos/{owner}/{repo}/pulls`, `GET ...pulls?head=owner:branch&state=open`, `PATCH ...pulls/{n}`
(docs.github.com/en/rest/pulls/pulls). HTTP goes through the GitHub adapter (generator/adapters/github.py:
the token in the Authorization header only, a total deadline per call, errors translated and redacted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from generator.adapters.github import DEFAULT_API, GitHubApi
from generator.core.errors import UsageError

_GITHUB_URL = re.compile(r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
                         r"(?P<owner>[A-Za-z0-9-]+)/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?/?$")


def github_repo(url: str) -> str | None:
    """`owner/repo` of a github.com remote URL, else None."""
    match = _GITHUB_URL.match(url)
    return f"{match['owner']}/{match['repo']}" if match else None


@dataclass
class PullRequests:
    """The pull requests of one repository (`owner/repo`)."""

    api: GitHubApi
    repo: str

    def _call(self, method: str, path: str, *, params: dict[str, str] | None = None,
              body: dict[str, Any] | None = None) -> Any:
        return self.api.request(method, f"/repos/{self.repo}{path}", params=params, body=body)

    def find_open(self, head: str) -> dict[str, Any] | None:
        found = self._call("GET", "/pulls", params={"head": head, "state": "open"})
        return found[0] if isinstance(found, list) and found and isinstance(found[0], dict) else None

    def ensure(self, *, head: str, base: str, title: str, body: str, draft: bool) -> str:
        """Open the PR for `head`, or bring an open one's title and body up to date; returns what was done."""
        existing = self.find_open(head)
        if existing is None:
            pr = self._call("POST", "/pulls", body={"title": title, "head": head, "base": base, "body": body,
                                                    "draft": draft})
            pr = pr if isinstance(pr, dict) else {}
            return f"opened PR #{pr.get('number')} {pr.get('html_url', '')}".rstrip()
        if existing.get("title") != title or (existing.get("body") or "") != body:
            self._call("PATCH", f"/pulls/{existing['number']}", body={"title": title, "body": body})
            return f"updated PR #{existing['number']}"
        return f"PR #{existing['number']} is open"

    def is_open(self, head: str, title: str) -> bool:
        existing = self.find_open(head)
        return existing is not None and existing.get("title") == title


def check_repo(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+", value):
        raise UsageError(f"--pr-repo {value!r}: expected OWNER/REPO")
    return value


__all__ = ["DEFAULT_API", "PullRequests", "check_repo", "github_repo"]
