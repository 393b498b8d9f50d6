"""One registry of engine families (generator/schema/engines.py): every family has a module whose `FAMILY` gives an
argv builder, a settings reader, a fit and its server's identity; an unknown engine stops at catalog load with its
file and line, never falls through to another engine."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import get_args

import pytest

from generator.catalog import load_catalog
from generator.core.errors import InputError
from generator.engines import engine_for
from generator.engines.family import FAMILIES, family, family_of, server_of
from generator.engines.interface import EngineFamily
from generator.engines.settings import AnySettings, settings_for
from generator.fit.sizing import memory_model, sized
from generator.schema.engines import ENGINES, REGISTRY, declared

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "catalog_small"


def test_every_family_has_a_builder():
    assert all(callable(family(name).build) for name in FAMILIES)


def test_every_family_says_what_its_argv_supports():
    def supports(name: str, argv: list[str]) -> frozenset[str]:
        return family(name).supports(argv)  # type: ignore[arg-type]

    assert supports("vllm", ["--enable-auto-tool-choice", "--tool-call-parser", "x", "--reasoning-parser", "y"]) \
        == {"tools", "thinking"}
    assert supports("vllm", ["--tool-call-parser", "x"]) == frozenset()  # no auto tool choice: no tools
    assert supports("llamacpp", ["--jinja"]) == supports("lucebox", ["--jinja"]) == {"tools"}
    assert supports("sglang", ["--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3"]) == frozenset()


def test_every_engine_name_maps_to_a_family():
    # each catalog engine name is a family (llama.cpp also has the Lucebox fork's family)
    assert set(ENGINES) <= set(FAMILIES)
    assert declared("llamacpp", "lucebox").family == "lucebox" and declared("llamacpp", "buun").family == "llamacpp"


def test_every_registered_family_has_its_module_and_a_fit():
    for decl in REGISTRY:
        fam = family(decl.family)  # type: ignore[arg-type]
        assert isinstance(fam, EngineFamily) and fam.declared == decl and fam.name == decl.family
        assert callable(memory_model(fam.fit)), f"{decl.family}: fit {fam.fit!r} names no generator/fit/ model"


def test_every_engine_has_one_server_identity():
    servers = [server_of(engine) for engine in ENGINES]
    assert len({s.owned_by for s in servers}) == len(servers)
    assert sum(s.default for s in servers) == 1  # read when a server names no engine
    assert server_of("llamacpp").version("server-cuda13-b8740") == "b8740"
    assert server_of("vllm").version("v0.19.1-cu130") == "0.19.1"


def test_each_settings_class_names_its_family():
    # every settings class is a registered family's (a new family may read its argv into an existing class)
    assert {cls.FAMILY for cls in get_args(AnySettings)} <= set(FAMILIES)


def test_fixture_apps_dispatch_to_their_family():
    cat = load_catalog(FIXTURE)
    seen = set()
    for r in cat.apps.values():
        r = sized(r)
        family = family_of(r.stack)
        s = settings_for(r, engine_for(r))
        assert s.engine == family
        seen.add(family)
    assert {"vllm", "llamacpp"} <= seen


def test_unknown_engine_is_an_error_at_catalog_load(tmp_path):
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURE, cat)
    stack = cat / "stacks" / "vllm-nightly.yaml"
    text = stack.read_text(encoding="utf-8")
    stack.write_text(text.replace("engine: vllm\n", "engine: tgi\n"), encoding="utf-8")
    line = next(i for i, ln in enumerate(stack.read_text().splitlines(), 1) if ln.startswith("engine:"))
    with pytest.raises(InputError) as err:
        load_catalog(cat)
    text = str(err.value)
    assert f"vllm-nightly.yaml:{line}" in text and "engine" in text


def test_import_recognises_every_family_by_its_launcher_and_calibrate_reads_three():
    """Each family's module says how `catalog import` finds its container (`Launcher`) and which boot-log lines
    `catalog calibrate` reads (`BootReader`; Lucebox's dflash_server prints none it reads)."""
    from generator.fit.calibrate import readers
    from generator.importer.programs import entrypoint_of, family_of as program_family, launched

    assert all(family(name).launcher is not None for name in FAMILIES)
    assert launched(["/usr/bin/llama-server-cuda", "-m", "x"]) == ("llamacpp", 1)
    assert launched(["vllm", "serve", "org/repo"]) == ("vllm", 2)
    assert launched(["vllm", "bench"]) is None  # vLLM serves only with its subcommand
    assert launched(["dflash_server", "target.gguf"]) == ("lucebox", 1)
    assert launched(["python3", "-m", "sglang.launch_server", "--model-path", "x"]) == ("sglang", 3)
    assert program_family("vllm-omni") is None and program_family("/opt/llama-server") == "llamacpp"
    assert entrypoint_of("ghcr.io/ggml-org/llama.cpp:server-cuda-b8740") == "/app/llama-server"
    # vllm-project/vllm docker/Dockerfile, stage vllm-openai: ENTRYPOINT ["vllm", "serve"]
    assert entrypoint_of("vllm/vllm-openai:v0.19.1") == "vllm serve"
    assert entrypoint_of("example.org/vllm-fork:1") is None
    assert [name for name, _ in readers()] == ["vllm", "llamacpp", "sglang"]
