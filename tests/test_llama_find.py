"""Which llama-server `catalog smoke --local` uses, and the one command that builds it (issue 42): `$LLAMA_SERVER`,
the build cache (`~/.cache/catalog/llama-server-*/bin`, this tool's build first), `llama-server` on PATH; none: the
message names `catalog smoke --build-llama-server` and what it costs. Real files and the real build script."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import pytest

from generator.adapters.llama import BUILD_COMMAND, SDIST_VERSION, LlamaServer, build_server, cache_folder
from generator.cli import main
from generator.core.errors import MissingDependency
from generator.core.locate import build_script, package_dir


def _program(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 'version: 1 (build 1, commit x)'\n")
    path.chmod(0o755)
    return path


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    return {"HOME": str(tmp_path / "home"), "PATH": str(empty), **more}


def test_llama_server_is_found_in_order(tmp_path):
    env = _env(tmp_path)
    with pytest.raises(MissingDependency) as missing:
        LlamaServer.find(env)
    said = str(missing.value)
    assert f"`{BUILD_COMMAND}`" in said and said.count("catalog ") == 1  # exactly one command to run
    assert "about 20 minutes" in said and "cmake" in said and "LLAMA_SERVER" in said
    on_path = _program(tmp_path / "bin" / "llama-server")
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"
    assert LlamaServer.find(env).binary == on_path
    machine = platform.machine()
    older = _program(tmp_path / "home" / ".cache" / "catalog" / f"llama-server-9093.0.0-b9093-{machine}" / "bin" /
                     "llama-server")
    assert LlamaServer.find(env).binary == older  # the cache before PATH
    newer = _program(tmp_path / "home" / ".cache" / "catalog" / f"llama-server-99999.0.0-b99999-{machine}" / "bin" /
                     "llama-server")
    assert LlamaServer.find(env).binary == newer  # the newest other build
    ours = _program(cache_folder(env) / "bin" / "llama-server")
    assert LlamaServer.find(env).binary == ours  # this tool's build first
    given = _program(tmp_path / "given" / "llama-server")
    assert LlamaServer.find({**env, "LLAMA_SERVER": str(given)}).binary == given


def test_the_build_script_ships_with_the_package():
    script = build_script()
    assert script.is_file() and script.read_text().startswith("#!/usr/bin/env bash")
    # a source checkout uses the clone's .ci/ script (a wheel: generator/_data/ci/, tests/test_install.py)
    assert script == package_dir().parent / ".ci" / "build-llama-server.sh"


@pytest.mark.needs_llama_server
def test_the_build_command_finds_a_built_server_and_smoke_local_then_passes(tmp_path, capsys, monkeypatch):
    """`catalog smoke --build-llama-server` runs the packaged script, which reuses a build in the cache (a copy of the
    real one here: a real build takes 20 minutes) and prints its path; `smoke --local` then finds it."""
    real = Path(os.environ["LLAMA_SERVER"]).parent
    cache = tmp_path / "cache"
    env = {**os.environ, "CATALOG_CACHE": str(cache)}
    shutil.copytree(real, cache_folder(env, SDIST_VERSION) / "bin", symlinks=True)
    monkeypatch.setenv("CATALOG_CACHE", str(cache))
    monkeypatch.delenv("LLAMA_SERVER")
    assert build_server() == cache_folder(env) / "bin" / "llama-server"
    assert main(["smoke", "--build-llama-server"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(cache_folder(env) / "bin" / "llama-server")
    assert "about 20 minutes" in err and "next: catalog smoke APP --local" in err


def test_build_needs_its_tools_and_says_which(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CATALOG_CACHE", str(tmp_path / "cache"))
    with pytest.raises(MissingDependency, match=r"needs bash, cmake, a C\+\+ compiler.*apt-get install -y cmake g\+\+"):
        build_server()


def test_smoke_without_an_app_or_with_a_build_and_a_remote_is_a_usage_error(capsys):
    assert main(["smoke"]) == 2
    assert "give the app to smoke" in capsys.readouterr().err
    assert main(["smoke", "someapp", "--build-llama-server"]) == 2
    assert "--build-llama-server builds the server `--local` uses" in capsys.readouterr().err
