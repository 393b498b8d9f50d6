"""The command line's own manners: `--version`, `-h` everywhere, `catalog list` piped keeps every column, counts
with their right plural (issue 24's smaller items). Real processes: stdout is a pipe, as under `| cat`."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata

from support.catalogs import SMALL, REPO


def catalog(*args: str, columns: str = "80") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": columns, "PYTHONPATH": str(REPO)}
    env.pop("CATALOG_DIR", None)
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          timeout=120, env=env, check=False)


def test_version_prints_the_installed_version():
    done = catalog("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"catalog {metadata.version('olares-llm-catalog')}"


def test_dash_h_is_help_for_the_tool_and_for_a_command():
    top = catalog("-h")
    assert top.returncode == 0 and "Usage: catalog" in top.stdout and "smoke" in top.stdout
    sub = catalog("list", "-h")
    assert sub.returncode == 0 and "Usage: catalog list" in sub.stdout and "--json" in sub.stdout


def test_list_piped_keeps_every_column_on_a_narrow_terminal():
    done = catalog("list", "--catalog", str(SMALL), columns="80")
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("name"))
    assert header.split() == ["name", "title", "model", "stack", "context", "version", "status", "t/s", "pred",
                              "t/s", "speed/roof", "smoke"]  # "pred t/s": the speed model (issue 41)
    assert "too narrow" not in done.stdout + done.stderr
    assert "3 apps" in done.stdout


def test_one_app_is_one_app(tmp_path):
    import shutil

    one = tmp_path / "catalog"
    shutil.copytree(SMALL, one)
    for path in sorted((one / "apps").glob("*.yaml"))[1:]:
        path.unlink()
    done = catalog("list", "--catalog", str(one))
    assert done.returncode == 0, done.stderr
    assert "1 app\n" in done.stdout or done.stdout.lstrip().startswith("1 app ")
    assert "1 apps" not in done.stdout
