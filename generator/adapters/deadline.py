"""Total deadlines for calls that leave the process: one clock from the start of the call, never per read.

A per-read timeout lets a peer that sends one byte a second hold a call for hours; a deadline measured
from the connect does not. Three ways to hold one, by what can be interrupted:

- a child process (git, the Helm registry worker): `run_process` kills its whole process group at the
  deadline (git's helpers, such as git-remote-https, hold the pipes too, so killing git alone would
  leave the read of its output waiting);
- a socket we own (the GitHub API through httpx): `DeadlineBackend` gives every socket read and write
  only the time left, so the call ends at the deadline wherever it is (connect, TLS, headers, body);
- a library call that owns its sockets (the kubernetes client): `call_with_deadline` runs it in a daemon
  thread and stops waiting at the deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from generator.core import CatalogError, MissingDependency, RemoteError, translate_os_error

T = TypeVar("T")


class DeadlineExceeded(RemoteError):
    """A call to a server or an external program did not finish before its total deadline."""


@dataclass
class Deadline:
    """`seconds` from now on a monotonic clock."""

    seconds: float
    start: float = field(default_factory=time.monotonic)

    @property
    def left(self) -> float:
        return max(0.0, self.start + self.seconds - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.left <= 0.0

    def cap(self, timeout: float | None) -> float:
        """`timeout` shortened to the time left."""
        return self.left if timeout is None else min(timeout, self.left)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group `proc` leads (started with start_new_session=True), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:  # the group is gone and its id reused: kill the child alone
        proc.kill()
    proc.wait()


def run_process(argv: Sequence[str], *, what: str, seconds: float, cwd: Path | str | None = None,
                env: dict[str, str] | None = None, stdin: bytes | None = None,
                install_hint: str = "") -> subprocess.CompletedProcess[bytes]:
    """Run `argv` to its end or to the deadline, whichever comes first; DeadlineExceeded at the deadline.

    `what` names the call in messages ("git fetch"); a missing program is a MissingDependency."""
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError as exc:
        if exc.filename in (None, argv[0]):
            raise MissingDependency(f"{argv[0]} is not installed or not on PATH{install_hint}") from None
        raise translate_os_error(exc, cwd, f"run {what} in") from None
    except OSError as exc:
        raise translate_os_error(exc, cwd, f"run {what} in") from None
    try:
        out, err = proc.communicate(stdin, timeout=seconds)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise DeadlineExceeded(f"{what} did not finish within its deadline of {seconds:g} s; stopped it") from None
    except BaseException:
        kill_group(proc)
        raise
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def call_with_deadline(fn: Callable[[], T], *, what: str, seconds: float,
                       passes: tuple[type[BaseException], ...] = ()) -> T:
    """`fn()` in a daemon thread; DeadlineExceeded when it has not returned after `seconds`.

    For a library that owns its sockets and cannot be interrupted: the caller stops waiting at the
    deadline; the thread is a daemon, so it never keeps the process alive. The exceptions of `fn` listed
    in `passes` (what the adapter translates) and the error tree are re-raised here as they are; any other
    is a bug: the thread prints its traceback and this raises RuntimeError."""
    box: dict[str, Any] = {}
    handed: tuple[type[BaseException], ...] = (CatalogError, *passes)

    def target() -> None:
        try:
            box["value"] = fn()
        except handed as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"deadline: {what}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise DeadlineExceeded(f"{what} did not answer within its deadline of {seconds:g} s")
    failure = box.get("error")
    if failure is not None:
        raise failure
    if "value" not in box:
        raise RuntimeError(f"{what}: an unexpected error in its thread (traceback above): a bug in catalog")
    return box["value"]  # type: ignore[no-any-return]


__all__ = ["Deadline", "DeadlineExceeded", "call_with_deadline", "kill_group", "run_process"]
