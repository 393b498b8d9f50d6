"""Helpers of the adversarial corpus (issue "Nothing lost, nothing leaked, nothing hangs").

Each test tries one attack as a hostile input or a failing environment would, through the real command
(`python -m generator.cli` in a subprocess where a kill, a lock or a time bound matters, `main()` in-process
otherwise) and asserts what the tool must do: a clear message and exit code, nothing written or everything
written, nothing outside the chosen folders touched, a bounded time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "catalog_small"
APPS = ("gemmalab", "qwenlab", "qwenvisionlab")


def cli(*args: str | Path, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`catalog ARGS` as a separate process (this worktree's code), with a time bound."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "generator.cli", *map(str, args)], cwd=cwd or REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def popen(*args: str | Path, cwd: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, "-m", "generator.cli", *map(str, args)], cwd=cwd or REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (files by content, links by target, folders by name), never following a
    link: what an attack may not change."""
    out: dict[str, str] = {}
    if not os.path.lexists(folder):
        return out
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top, name)
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out[rel] = f"link:{os.readlink(path)}"
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes().hex()
    return out


def assert_clean_failure(proc: subprocess.CompletedProcess[str], code: int) -> None:
    """The exit code asked for, a message, and no traceback."""
    both = proc.stdout + proc.stderr
    assert proc.returncode == code, both
    assert "Traceback" not in both and "internal error" not in both, both
    assert proc.stderr.strip(), "no message"


@pytest.fixture
def small_catalog(tmp_path: Path) -> Path:
    """A private copy of the small fixture catalog at tmp_path/catalog."""
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    return dest


def many_apps(catalog: Path, count: int) -> None:
    """`count` more llama.cpp apps (copies of qwenlab under new names): a render long enough to kill."""
    text = (catalog / "apps" / "qwenlab.yaml").read_text(encoding="utf-8")
    for index in range(count):
        (catalog / "apps" / f"qwenlab{index}.yaml").write_text(text.replace("name: qwenlab\n", f"name: qwenlab{index}\n"),
                                                                encoding="utf-8")


def set_descriptions(catalog: Path, text: str) -> None:
    """Change every app's chart (its description): a render then rewrites every chart folder."""
    for path in (catalog / "apps").glob("*.yaml"):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(f"description: {text}\n" if line.startswith("description:") else line
                                for line in lines), encoding="utf-8")
