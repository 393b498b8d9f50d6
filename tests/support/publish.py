"""Real parts for the publish tests, started on 127.0.0.1 and stopped by PID: Debian's docker-registry,
`python -m http.server`, a bare git market repository."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

import httpx
import pytest

from support.bump import git

MISSING = "{tool} is not installed: run scripts/test.sh (it installs docker-registry and apache2-utils), or " \
          "apt-get install -y docker-registry apache2-utils"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(MISSING.format(tool=tool))
    return path


def _wait_http(url: str, proc: subprocess.Popen, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode} before serving {url}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {seconds}s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@dataclass(frozen=True)
class Registry:
    host: str  # 127.0.0.1:PORT
    user: str | None = None
    password: str | None = None

    @property
    def ref(self) -> str:
        return f"oci://{self.host}/charts"


@contextmanager
def docker_registry(root: Path, *, user: str | None = None, password: str | None = None) -> Iterator[Registry]:
    """Debian's docker-registry on a free loopback port (docs/testing.md), optionally behind htpasswd."""
    binary = need("docker-registry")
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    auth = ""
    if user:
        htpasswd = need("htpasswd")
        line = subprocess.run([htpasswd, "-Bbn", user, password], capture_output=True, text=True, check=True).stdout
        (root / "htpasswd").write_text(line)
        auth = f"auth: {{htpasswd: {{realm: basic-realm, path: {root / 'htpasswd'}}}}}\n"
    config = root / "registry.yml"
    config.write_text(
        "version: 0.1\nlog: {level: error, accesslog: {disabled: true}}\n"
        f"storage: {{filesystem: {{rootdirectory: {root / 'data'}}}, delete: {{enabled: true}}}}\n"
        f"http: {{addr: 127.0.0.1:{port}}}\nhealth: {{storagedriver: {{enabled: false}}}}\n" + auth)
    with open(root / "registry.log", "wb") as log:  # the registry keeps its own descriptor of the log
        proc = subprocess.Popen([binary, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=log)
    try:
        _wait_http(f"http://127.0.0.1:{port}/v2/", proc)
        yield Registry(f"127.0.0.1:{port}", user, password)
    finally:
        _stop(proc)


@contextmanager
def static_server(folder: Path) -> Iterator[str]:
    """`python -m http.server` on loopback serving `folder`; yields its base URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_http(f"http://127.0.0.1:{port}/", proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)


def bare_market(root: Path) -> Path:
    """A bare market repository with one commit on main (as a fresh beclab/apps-style repo)."""
    bare = root / "market.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    (seed / "README.md").write_text("# market\n")
    git(seed, "add", "README.md")
    git(seed, "commit", "-q", "-m", "market")
    git(seed, "push", "-q", str(bare), "main")
    return bare


def merge_branch(bare: Path, branch: str) -> None:
    """What GitBot does after its checks: the PR branch is merged into main."""
    work = bare.parent / "merge-work"
    if not work.exists():
        git(bare.parent, "clone", "-q", str(bare), str(work))
    git(work, "fetch", "-q", "origin")
    git(work, "checkout", "-q", "-B", "main", "origin/main")
    git(work, "merge", "-q", "--no-edit", f"origin/{branch}")
    git(work, "push", "-q", "origin", "main")
