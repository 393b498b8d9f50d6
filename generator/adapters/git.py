"""git, the program: every call the tool makes to it goes through `Git.run`.

Like chart-testing's `pkg/tool/git.go` (github.com/helm/chart-testing): a small struct that execs git and
turns a failure into an error carrying git's own message. A non-zero exit becomes a ToolError naming the
git command and git's last lines (its `remote:` lines first), passed through the caller's redactor; a
missing git is a MissingDependency. Every call has a total deadline: local commands `timeout_s`,
network commands (fetch, push, clone, ls-remote) `network_timeout_s`; at the deadline git and its
helpers (git-remote-https, ssh) are killed together and DeadlineExceeded says so.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.adapters.deadline import run_process
from generator.core.errors import ToolError

NETWORK_COMMANDS = frozenset({"fetch", "push", "clone", "ls-remote", "pull"})
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_NETWORK_TIMEOUT_S = 300.0
# Never ask on a terminal for a password, and keep messages in one language for the tests and the user.
QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}


def _plain(text: str) -> str:
    return text


@dataclass(frozen=True)
class Git:
    timeout_s: float = DEFAULT_TIMEOUT_S
    network_timeout_s: float = DEFAULT_NETWORK_TIMEOUT_S
    env: dict[str, str] = field(default_factory=dict)  # added to the process environment
    redact: Callable[[str], str] = field(default=_plain, compare=False)

    def configured(self, *, env: dict[str, str] | None = None,
                   redact: Callable[[str], str] | None = None) -> Git:
        """The same deadlines with more environment (credentials for one remote) or another redactor."""
        return replace(self, env={**self.env, **(env or {})}, redact=redact or self.redact)

    def run(self, cwd: Path | str, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        """git's stdout; with check=False a failure returns b"" instead of raising."""
        command = next((a for a in args if not a.startswith("-")), "")
        seconds = self.network_timeout_s if command in NETWORK_COMMANDS else self.timeout_s
        env = {**os.environ, **QUIET_ENV, **self.env}
        proc = run_process(["git", *args], what=self.redact(f"git {command}"), seconds=seconds, cwd=cwd, env=env,
                           stdin=stdin, install_hint=" (install git: apt-get install git)")
        if proc.returncode == 0:
            return proc.stdout
        if not check:
            return b""
        raise ToolError(self.redact(f"git {' '.join(args[:2])} failed: {_tail(proc.stderr, proc.returncode)}"))

    @staticmethod
    def installed() -> bool:
        """Whether git is on PATH (a command that can do without it asks first)."""
        return shutil.which("git") is not None

    def text(self, cwd: Path | str, *args: str, check: bool = True) -> str:
        return self.run(cwd, *args, check=check).decode("utf-8", "replace")

    def origin(self, folder: Path) -> tuple[str, str] | None:
        """(the `origin` remote's URL, the HEAD commit) of a clone; None when `folder` is not one or has neither."""
        url = self.text(folder, "remote", "get-url", "origin", check=False).strip()
        head = self.text(folder, "rev-parse", "HEAD", check=False).strip()
        if not url or len(head) != 40 or any(c not in "0123456789abcdef" for c in head):
            return None
        return url, head


VCS = "git"  # the name pip gives git in a requirement (`git+https://...`) and PEP 610 in `vcs_info.vcs`


def _tail(stderr: bytes, code: int) -> str:
    """git's `remote:` lines (what a server says) and its last two lines, once each."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    keep = [line for line in lines if line.startswith("remote:")][:4] + lines[-2:]
    return " | ".join(dict.fromkeys(keep)) or f"exit {code}"


__all__ = ["Git"]
