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
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.adapters.deadline import DeadlineExceeded, kill_group, run_process
from generator.core import InputError, Problem, ToolError, translate_os_error

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

    def text(self, cwd: Path | str, *args: str, check: bool = True, stdin: bytes | None = None) -> str:
        return self.run(cwd, *args, stdin=stdin, check=check).decode("utf-8", "replace")

    def origin(self, folder: Path) -> tuple[str, str] | None:
        """(the `origin` remote's URL, the HEAD commit) of a clone; None when `folder` is not one or has neither."""
        url = self.text(folder, "remote", "get-url", "origin", check=False).strip()
        head = self.text(folder, "rev-parse", "HEAD", check=False).strip()
        if not url or len(head) != 40 or any(c not in "0123456789abcdef" for c in head):
            return None
        return url, head

    def clone_bounded(self, url: str, dest: Path, *, budget_bytes: int, blob_limit: int) -> None:
        """`git clone --bare --filter=blob:limit=BLOB_LIMIT` of `url` into `dest`: every commit and tree (the
        history a sync reads), the blobs of at most `blob_limit` bytes, nothing checked out (no file of upstream's
        is ever written as upstream names it, so no link is created). The clone is killed with its helpers (its
        process group) when `dest` grows past `budget_bytes` or the network deadline passes, and on any exception
        here (a SIGTERM turned into SystemExit, a Ctrl-C); the caller removes `dest`."""
        argv = ["git", "clone", "--quiet", "--bare", "--no-tags", "--single-branch",
                f"--filter=blob:limit={blob_limit}", "--", url, str(dest)]
        env = {**os.environ, **QUIET_ENV, **self.env, "GIT_NO_LAZY_FETCH": "1"}
        shown = self.redact("git clone")
        try:
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise ToolError("git is not installed or not on PATH (install git: apt-get install git)") from None
        except OSError as exc:
            raise translate_os_error(exc, dest.parent, "run git clone in") from None
        start = time.monotonic()
        try:
            while proc.poll() is None:
                if time.monotonic() - start > self.network_timeout_s:
                    raise DeadlineExceeded(f"{shown} did not finish within its deadline of "
                                           f"{self.network_timeout_s:g} s; stopped it")
                if folder_bytes(dest) > budget_bytes:
                    raise InputError([Problem(self.redact(url), None, None,
                                              f"the upstream repository is larger than {budget_bytes:,} bytes "
                                              "(without its blobs over the per-file cap), the most a sync "
                                              "fetches; point the sync at a smaller repository or a folder")])
                time.sleep(0.05)
        except BaseException:
            kill_group(proc)
            raise
        err = proc.stderr.read() if proc.stderr else b""
        if proc.stderr:
            proc.stderr.close()
        if proc.returncode != 0:
            raise ToolError(self.redact(f"git clone failed: {_tail(err, proc.returncode)}"))

    def blobs(self, repo: Path, commit: str, *, file_limit: int, max_files: int) -> dict[str, bytes | None]:
        """Every regular file of `commit` in a bare (partial) clone: path -> bytes, or None for a file over
        `file_limit` bytes (its blob was never fetched, or is larger). Links and submodules are left out: a sync
        reads only regular files. Only blobs present in the clone are read (`rev-list --missing=print` names the
        absent ones), so nothing is fetched lazily."""
        absent = {line[1:].strip() for line in self.text(repo, "rev-list", "--objects", "--missing=print",
                                                         commit).splitlines() if line.startswith("?")}
        entries: list[tuple[str, str]] = []
        for record in self.run(repo, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
            if not record:
                continue
            head, _, raw_path = record.partition(b"\t")
            mode, kind, oid = head.decode("ascii").split(" ")
            if kind != "blob" or mode not in ("100644", "100755"):
                continue  # a link (120000) or a submodule (160000): never read, never written
            entries.append((raw_path.decode("utf-8", "replace"), oid))
            if len(entries) > max_files:
                raise InputError([Problem(self.redact(str(repo)), None, None,
                                          f"more than {max_files:,} files at {commit[:12]}; a market holds a few "
                                          "thousand at most")])
        wanted = sorted({oid for _, oid in entries if oid not in absent})
        sizes: dict[str, int] = {}
        for line in self.text(repo, "cat-file", "--batch-check=%(objectname) %(objectsize)",
                              stdin="\n".join(wanted).encode() + b"\n" if wanted else b"").splitlines():
            oid, _, size = line.partition(" ")
            if size.isdigit():
                sizes[oid] = int(size)
        small = [oid for oid in wanted if sizes.get(oid, file_limit + 1) <= file_limit]
        contents = _batch(self.run(repo, "cat-file", "--batch", stdin="\n".join(small).encode() + b"\n")) \
            if small else {}
        return {path: contents.get(oid) for path, oid in entries}


def _batch(out: bytes) -> dict[str, bytes]:
    """`git cat-file --batch` output: `<oid> <type> <size>\\n<bytes>\\n` per object."""
    found: dict[str, bytes] = {}
    pos = 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        fields = out[pos:end].decode("ascii").split(" ")
        if len(fields) != 3:  # `<oid> missing`
            pos = end + 1
            continue
        size = int(fields[2])
        found[fields[0]] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return found


def folder_bytes(folder: Path) -> int:
    """The bytes of the files under `folder`, walked iteratively (links not followed; a file that vanishes while
    git renames its temporary packs counts nothing)."""
    total, stack = 0, [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as items:
                for item in items:
                    try:
                        if item.is_dir(follow_symlinks=False):
                            stack.append(item.path)
                        else:
                            total += item.stat(follow_symlinks=False).st_size
                    except FileNotFoundError:
                        continue
        except (FileNotFoundError, NotADirectoryError):
            continue
    return total


VCS = "git"  # the name pip gives git in a requirement (`git+https://...`) and PEP 610 in `vcs_info.vcs`


def _tail(stderr: bytes, code: int) -> str:
    """git's `remote:` lines (what a server says) and its last two lines, once each."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    keep = [line for line in lines if line.startswith("remote:")][:4] + lines[-2:]
    return " | ".join(dict.fromkeys(keep)) or f"exit {code}"


__all__ = ["Git", "folder_bytes"]
