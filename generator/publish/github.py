"""Open or update the pull request of an app branch through the GitHub REST API.

`POST /repos/{owner}/{repo}/pulls`, `GET ...pulls?head=owner:branch&state=open`, `PATCH ...pulls/{n}`
(docs.github.com/en/rest/pulls/pulls). HTTP goes through the GitHub adapter (generator/adapters/github.py:
the token in the Authorization header only, a total deadline per call, errors translated and redacted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from generator.adapters import DEFAULT_API, GitHubApi
from generator.core import RemoteError, UsageError

_GITHUB_URL = re.compile(r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
                         r"(?P<owner>[A-Za-z0-9-]+)/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?/?$")


def github_repo(url: str) -> str | None:
    """`owner/repo` of a github.com remote URL, else None."""
    match = _GITHUB_URL.match(url)
    return f"{match['owner']}/{match['repo']}" if match else None


@dataclass(frozen=True)
class PullRequest:
    """The fields of a pull request the publish flow reads (docs.github.com/en/rest/pulls/pulls)."""

    number: int
    title: str
    body: str
    html_url: str = ""

    @classmethod
    def of(cls, data: object, where: str) -> PullRequest:
        if not isinstance(data, dict) or not isinstance(data.get("number"), int):
            raise RemoteError(f"{where}: the answer is not a pull request")
        return cls(data["number"], str(data.get("title") or ""), str(data.get("body") or ""),
                   str(data.get("html_url") or ""))


@dataclass
class PullRequests:
    """The pull requests of one repository (`owner/repo`)."""

    api: GitHubApi
    repo: str

    def _call(self, method: str, path: str, *, params: dict[str, str] | None = None,
              body: dict[str, object] | None = None) -> object:
        return self.api.request(method, f"/repos/{self.repo}{path}", params=params, body=body)

    def find_open(self, head: str) -> PullRequest | None:
        found = self._call("GET", "/pulls", params={"head": head, "state": "open"})
        if not isinstance(found, list):
            raise RemoteError(f"GitHub API GET /repos/{self.repo}/pulls: the answer is not a list")
        return PullRequest.of(found[0], f"GitHub API GET /repos/{self.repo}/pulls") if found else None

    def ensure(self, *, head: str, base: str, title: str, body: str, draft: bool) -> str:
        """Open the PR for `head`, or bring an open one's title and body up to date; returns what was done."""
        existing = self.find_open(head)
        if existing is None:
            created = self._call("POST", "/pulls", body={"title": title, "head": head, "base": base, "body": body,
                                                         "draft": draft})
            pr = PullRequest.of(created, f"GitHub API POST /repos/{self.repo}/pulls")
            return f"opened PR #{pr.number} {pr.html_url}".rstrip()
        if existing.title != title or existing.body != body:
            self._call("PATCH", f"/pulls/{existing.number}", body={"title": title, "body": body})
            return f"updated PR #{existing.number}"
        return f"PR #{existing.number} is open"

    def is_open(self, head: str, title: str) -> bool:
        existing = self.find_open(head)
        return existing is not None and existing.title == title


def check_repo(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+", value):
        raise UsageError(f"--pr-repo {value!r}: expected OWNER/REPO")
    return value


__all__ = ["DEFAULT_API", "PullRequest", "PullRequests", "check_repo", "github_repo"]
