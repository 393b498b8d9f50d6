"""The engines' shared builder, the typed settings per engine family, and the typed release state.

Real parts: the embedded catalog (copied where a test edits it), the real CLI entry point in-process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from support.bump import run_cli
from support.catalogs import MARKET_CATALOG
from support.checks import FAST, LONG, add_args, check, findings
from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.engines import engine_for
from generator.engines.base import MODELS_DIR
from generator.fit.sizing import sized
from generator.engines.settings import (VLLM_DEFAULT_MAX_SEQS, LlamaCppSettings, LuceboxSettings, VllmSettings,
                                        settings_for)
from generator.versions.releases import load_releases
from generator.versions.state import ReleaseState, release_state


@pytest.fixture(scope="module")
def cat():
    catalog = load_catalog(MARKET_CATALOG)  # the frozen fixture: logic tests never read the live catalog
    catalog.apps = {name: sized(r) for name, r in catalog.apps.items()}  # GPU memory as plan() sizes it
    return catalog


def test_every_engine_ends_with_the_stack_args_then_the_app_args(cat) -> None:
    for r in cat.apps.values():
        engine = engine_for(r)
        pieces = [(a.origin, a.tokens) for a in engine.args]
        expected = [(f"stack {r.stack.id}", r.stack.args)] * bool(r.stack.args)
        expected += [("app.extra_args", r.app.extra_args)] * bool(r.app.extra_args)
        assert pieces[len(pieces) - len(expected):] == expected, r.app.name
        assert sum(origin in (f"stack {r.stack.id}", "app.extra_args") for origin, _ in pieces) == len(expected)
        assert sum(a.tokens == ("--host", "0.0.0.0", "--port", str(r.stack.port)) for a in engine.args) == 1


def test_env_groups_come_in_order_and_a_later_name_wins(cat) -> None:
    for r in cat.apps.values():
        engine = engine_for(r)
        names = [e.name for e in engine.env]
        assert len(names) == len(set(names)), r.app.name
        env = engine.env_map
        assert env["HF_HOME"] == r.app.env.get("HF_HOME", MODELS_DIR)
        limit = next(e for e in engine.env if e.name == "CUDA_DEVICE_MEMORY_LIMIT_0")
        if "CUDA_DEVICE_MEMORY_LIMIT_0" not in r.app.env:
            assert (limit.value, limit.origin) == (f"{r.app.gpu_memory_mib}m", "app.gpu_memory_mib")
        for name, value in r.app.env.items():  # the app's own env is applied last
            assert env[name] == value and next(e for e in engine.env if e.name == name).origin == "app.env"


def test_gguf_engines_fetch_the_target_first_and_pass_its_path(cat) -> None:
    for r in cat.apps.values():
        engine = engine_for(r)
        if r.stack.engine == "vllm":
            assert engine.downloads == () and engine.args[0].tokens[0] == r.model.weight(r.app.quantization).repo
            continue
        target = engine.downloads[0]
        assert target.file == r.model.weight(r.app.quantization).file
        assert target.path in engine.args[0].tokens, r.app.name
        assert all(d.path in engine.argv for d in engine.downloads), r.app.name


def test_settings_are_typed_per_engine_family(cat) -> None:
    kinds = {}
    for r in cat.apps.values():
        s = settings_for(r, engine_for(r))
        kinds[type(s)] = s.engine
        if isinstance(s, VllmSettings):
            assert 0 < s.util.value <= 1 and s.seqs.value > 0 and s.batched.value > 0
        elif isinstance(s, LlamaCppSettings | LuceboxSettings):
            assert s.parallel.value >= 1 and s.ubatch.value > 0
        assert s.context.value == r.app.context_length, r.app.name
    assert kinds == {VllmSettings: "vllm", LlamaCppSettings: "llamacpp", LuceboxSettings: "lucebox"}


def test_a_value_keeps_the_flag_it_came_from(catalog_copy: Path) -> None:
    add_args(catalog_copy, FAST, "--max-num-seqs", "3")
    r = load_catalog(catalog_copy).apps[FAST]
    s = settings_for(r, engine_for(r))
    assert isinstance(s, VllmSettings)
    assert s.seqs.value == 3 and s.seqs.where() == "from extra_args"
    assert s.graphs_profiled.source is None
    assert s.graphs_profiled.where() == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (stack genesis-vllm)"


def test_a_number_the_engine_cannot_read_is_reported_not_a_crash(capsys, catalog_copy: Path) -> None:
    """`-ub x2` crashed the memory fit (int(None)); now the fit uses the default and FLAG002 names the value."""
    add_args(catalog_copy, LONG, "-ub", "x2")
    add_args(catalog_copy, FAST, "--max-num-seqs", "abc")
    code, data = check(capsys, catalog_copy, LONG, FAST)
    assert code == 1
    bad = findings(data, "FLAG002", LONG)
    assert any("x2" in f["message"] for f in bad), bad
    r = load_catalog(catalog_copy).apps[FAST]
    s = settings_for(r, engine_for(r))
    assert isinstance(s, VllmSettings) and s.seqs.value == VLLM_DEFAULT_MAX_SEQS and s.seqs.source is not None
    code, out, err = run_cli(capsys, "explain", FAST, "--catalog", catalog_copy, "--json")
    assert code == 0, err


def test_release_state_reads_the_typed_chart_parts(cat) -> None:
    r = cat.apps[FAST]
    spec = plan(r)
    state = release_state(r, spec, {"Chart.yaml": "name: x\n"})
    accel = spec.manifest.spec.accelerator[0]
    assert state.resources["requiredGPUMemory"] == accel.required_gpu_memory == f"{r.app.gpu_memory_mib}Mi"
    assert "mode" not in state.resources
    assert state.entrances == {r.app.name: r.stack.port} and state.workloads == [r.app.name]
    assert "engine.resources.limits.nvidia.com/gpumem" in state.values_keys
    assert ReleaseState.from_data(state.to_data()) == state
    assert list(state.to_data()) == ["status", "stack", "engine", "image", "command", "model", "context", "args", "env",
                                     "resources", "entrances", "workloads", "values_keys", "metadata", "files"]


def test_releases_yaml_round_trips_through_the_typed_state(catalog_copy: Path) -> None:
    releases = load_releases(catalog_copy)
    text = releases.dump()
    (catalog_copy / "releases.yaml").write_text(text, encoding="utf-8")
    assert load_releases(catalog_copy).dump() == text
    assert all(isinstance(rel.state, ReleaseState) for versions in releases.apps.values() for rel in versions.values()
               if rel.state is not None)


def test_a_bad_recorded_state_names_the_file_and_field(capsys, catalog_copy: Path) -> None:
    path = catalog_copy / "releases.yaml"
    yaml = YAML(typ="rt")
    data = yaml.load(path.read_text(encoding="utf-8"))
    version = next(iter(data["apps"][FAST]))
    data["apps"][FAST][version]["state"]["context"] = "lots"
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)
    code, out, err = run_cli(capsys, "bump", "--check", "--catalog", catalog_copy)
    assert code == 1, (out, err)
    assert "releases.yaml" in err and f"apps.{FAST}.{version}.state.context" in err, err
    assert "internal error" not in err
