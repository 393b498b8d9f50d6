"""One catalog-wide lock for every command that writes the catalog (issue 40 cause 8).

Two writers at once each read the catalog, change it and write it back: the second write undoes the first (two
`catalog bump` lost a release record, four `calibrate --write` kept one run's rows). Each writer therefore holds
`flock(LOCK_EX)` on the catalog folder itself (an open descriptor of the directory: no lock file is left in the
catalog) from the moment the command resolves its catalog, before it reads anything, until it ends; the CLI
takes it in one place (generator/cli/discovery.py `use_catalog`, for the commands in WRITERS). A second writer
says once that it waits, and waits at most WAIT_S seconds. flock is released by the kernel when the process
ends, however it ends; readers (`check`, `explain`, `list`, `serve`) never take it.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from generator.core.errors import ExternalError, translate_os_error
from generator.core.text import safe_line

WAIT_S = 600.0  # as long as the charts folder's own lock waits (generator/chart/writer.py)
POLL_S = 0.05
WRITERS = frozenset({"bump", "calibrate", "import", "init", "prune", "render", "sync"})


def hold(folder: Path, command: str, *, on_wait: Callable[[str], None] | None = None,
         wait_s: float = WAIT_S) -> int:
    """An open descriptor of `folder` holding flock(LOCK_EX); waits for another writer (saying so once through
    `on_wait`) at most `wait_s` seconds, then ExternalError. Release with `release`."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise translate_os_error(exc, folder, "lock") from exc
    deadline = time.monotonic() + wait_s
    told = False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                pass
            if not told and on_wait is not None:
                on_wait(f"waiting for another catalog command writing {safe_line(folder)} to finish")
                told = True
            if time.monotonic() >= deadline:
                raise ExternalError(f"`catalog {command}`: another catalog command has been writing "
                                    f"{safe_line(folder)} for more than {wait_s:g} s; nothing was written. Run "
                                    "again once it has finished")
            time.sleep(POLL_S)
    except BaseException:
        os.close(fd)
        raise


def release(fd: int | None) -> None:
    """Give the lock back (closing the descriptor releases it)."""
    if fd is not None:
        os.close(fd)


__all__ = ["POLL_S", "WAIT_S", "WRITERS", "hold", "release"]
