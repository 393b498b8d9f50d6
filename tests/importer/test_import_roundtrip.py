"""Round trip: for every app, import(render(app)) gives back the app (the fields that determine its chart).

A hypothesis property over the fixture catalog (tests/fixtures/catalog_small, one vLLM app with an MTP
drafter and two llama.cpp apps, one with vision): each example varies the app's chart fields, renders the
chart with the real pipeline, writes it to a folder, imports it through the real Helm engine and compares.
The imported app must also render to the same bytes (the chart is a fixed point), and nothing may be left
unmapped. Then every app of the embedded catalog, and the CLI on a catalog copy (`--update` finds nothing
to change).

Fields a chart does not carry are left out of the comparison: status, deprecation fields, benchmarks,
calibration, probe; and `vision` of a vLLM app (the vLLM engine module does not render it).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.catalog import EMBEDDED, Resolved, load_catalog
from generator.chart.pipeline import render_app
from generator.cli import main
from generator.importer.build import CHART_FIELDS, import_chart
from generator.importer.drafts import Pool
from generator.importer.source import read_chart
from generator.schema import App

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
COMPARED = tuple(f for f in CHART_FIELDS if f != "unmapped")
TRICKY = st.sampled_from(["{{ .Values.x }}", "}}", "{{", ": ", "'", '"', "$(HOME)", "$$", "#", "- item", "yes",
                          "1e3", "~", "null", "é", "中文", " ", "%", "\\", "`"])
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12) \
    | st.lists(TRICKY | st.text(max_size=4), min_size=1, max_size=5).map("".join)
QTY_CPU = st.sampled_from(["1", "2", "4", "500m", "1500m", "16", "0.5"])
QTY_MEM = st.sampled_from(["512Mi", "4Gi", "8Gi", "24Gi", "40Gi", "1Ti"])
FLAGS = st.sampled_from([["--batch-size", "2048"], ["--mlock"], ["--no-context-shift"], ["--flash-attn", "auto"],
                         ["--ctx-size", "4096"], ["--host", "127.0.0.1"], ["--jinja"], ["--threads", "8"],
                         ["--max-num-seqs", "1"], ["--enable-auto-tool-choice"], ["--dtype", "float16"]])
ARGS = st.lists(FLAGS | st.tuples(st.sampled_from(["--chat-template-kwargs", "--override"]), TEXT).map(list),
                max_size=4).map(lambda groups: [t for g in groups for t in g])
ENV_NAMES = ("TZ", "HF_HUB_OFFLINE", "LLAMA_ARG_THREADS", "OMP_NUM_THREADS")


def _within(max_size: int):
    return TEXT.filter(lambda s: 1 <= len(s) <= max_size)


INPUTS = st.fixed_dictionaries({
    "app": st.sampled_from(["gemmalab", "qwenlab", "qwenvisionlab"]),
    "title": _within(30),
    "description": _within(200),
    "full_description": st.none() | _within(200),
    "upgrade_description": st.none() | _within(200),
    "owners": st.lists(st.from_regex(r"^[A-Za-z0-9-]{1,12}$", fullmatch=True), min_size=1, max_size=3),
    "version": st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 99)).map(lambda v: ".".join(map(str, v))),
    "context_length": st.integers(1, 1_048_576),
    "served_name": st.none() | st.from_regex(r"^[a-z0-9][a-z0-9._:-]{0,20}$", fullmatch=True),
    "kv_cache_type": st.none() | st.sampled_from(["q4_0", "q8_0", "f16", "fp8", "turbo3"]),
    "kv_cache_type_v": st.none() | st.sampled_from(["q4_0", "q8_0", "turbo3"]),
    "tokens": st.none() | st.integers(1, 8),
    "gpu_memory_mib": st.integers(1, 100_000),
    "utilization": st.none() | st.integers(1, 100).map(lambda n: n / 100),
    "resources": st.fixed_dictionaries({"cpu_request": QTY_CPU, "cpu_limit": QTY_CPU, "memory_request": QTY_MEM,
                                        "memory_limit": QTY_MEM, "disk_request": QTY_MEM, "disk_limit": QTY_MEM}),
    "env": st.dictionaries(st.sampled_from(ENV_NAMES), TEXT, max_size=3),
    "extra_args": ARGS,
    "vision": st.booleans(),
})


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(FIXTURE)


def varied(catalog, data: dict) -> Resolved:
    base = catalog.apps[data["app"]]
    fields = base.app.model_dump(mode="python", exclude_unset=True)
    vllm = base.stack.engine == "vllm"
    fields.update(title=data["title"], description=data["description"], owners=tuple(data["owners"]),
                  version=data["version"], context_length=data["context_length"], served_name=data["served_name"],
                  kv_cache_type=data["kv_cache_type"], gpu_memory_mib=data["gpu_memory_mib"],
                  resources=data["resources"], env=data["env"], extra_args=tuple(data["extra_args"]),
                  full_description=data["full_description"], upgrade_description=data["upgrade_description"])
    # the canonical spelling of what a chart cannot tell apart: a long description equal to the short one, a
    # served name equal to the app name, a V cache type equal to the K one
    if fields["full_description"] == fields["description"]:
        fields["full_description"] = None
    if fields["served_name"] == base.app.name:
        fields["served_name"] = None
    if vllm:
        fields["gpu_memory_utilization"] = data["utilization"]
        fields["speculative"] = {"method": "mtp", "tokens": data["tokens"], "drafter": "assistant"}
    else:
        kv_v = data["kv_cache_type_v"]
        fields["kv_cache_type_v"] = kv_v if data["kv_cache_type"] and kv_v != data["kv_cache_type"] else None
        fields["vision"] = data["vision"]
    return dataclasses.replace(base, app=App.model_validate(fields))


def import_tree(root: Path, name: str, tree: dict[str, str], catalog):
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    for rel, text in tree.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return import_chart(read_chart(folder), catalog, Pool(catalog))


def assert_same_app(resolved: Resolved, result) -> App:
    assert result.status == "ok", (result.missing, result.problems)
    assert result.unmapped == [] and "unmapped" not in (result.app or {})
    got = App.model_validate(_tuples(result.app))
    skip = {"vision"} if resolved.stack.engine == "vllm" else set()
    diffs = {k: (getattr(resolved.app, k), getattr(got, k)) for k in COMPARED
             if k not in skip and getattr(resolved.app, k) != getattr(got, k)}
    assert not diffs, diffs
    return got


def _tuples(value):
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=INPUTS)
def test_import_of_a_render_gives_back_the_app(data, catalog, tmp_path):
    resolved = varied(catalog, data)
    tree = render_app(resolved)
    result = import_tree(tmp_path, resolved.app.name, tree, catalog)
    got = assert_same_app(resolved, result)
    again = render_app(dataclasses.replace(resolved, app=got))
    assert again == tree  # the imported app renders the very same chart


@pytest.mark.parametrize("name", sorted(load_catalog(EMBEDDED).apps))
def test_every_embedded_app_round_trips(name, tmp_path):
    """Every engine family, Genesis patches, Lucebox, drafters, projectors: the catalog's own apps."""
    cat = load_catalog(EMBEDDED)
    resolved = cat.apps[name]
    result = import_tree(tmp_path, name, render_app(resolved), cat)
    assert_same_app(resolved, result)


def test_cli_update_of_rendered_charts_changes_nothing(tmp_path, capsys):
    catalog = tmp_path / "catalog"
    shutil.copytree(FIXTURE, catalog)
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    before = {p.name: p.read_bytes() for p in (catalog / "apps").iterdir()}
    charts = sorted(str(p) for p in (tmp_path / "charts").iterdir() if p.is_dir())  # not .catalog-render
    assert main(["import", *charts, "--catalog", str(catalog), "--update"]) == 0
    out = capsys.readouterr().out
    assert out.count("unchanged ") == 3, out
    assert {p.name: p.read_bytes() for p in (catalog / "apps").iterdir()} == before
