"""Round trip: for every app, import(render(app)) gives back the app (the fields that determine its chart).

A hypothesis property over the fixture catalog (tests/fixtures/catalog_small, one vLLM app with an MTP
drafter and two llama.cpp apps, one with vision), in a copy per manifest profile (olares-v2 and olares-v3,
catalog/market.yaml) with one chat template and an audio encoder on the vLLM app's model: each example draws
the profile and varies the app's chart fields (chat template, slot saving, audio, pip packages, a stated or
fit-sized GPU memory included), renders the chart with the real pipeline, writes it to a folder, imports it
through the real Helm engine and compares. The imported app must also render to the same bytes (the chart is a
fixed point), and nothing may be left unmapped. Then every app of the market fixture (tests/fixtures/market, a
frozen copy of the embedded catalog) in both profiles, and the CLI on a catalog copy (`--update` finds nothing
to change). tests/test_embedded_catalog.py round-trips the live catalog's apps.

Fields a chart does not carry are left out of the comparison: status, deprecation fields, benchmarks,
calibration, probe; and `vision` of a vLLM app without audio (the vLLM engine module renders it only in the
audio limit). A GPU memory (and vLLM utilization) the chart cannot tell from the fit's sizing is compared as
sized (generator/fit/sizing.py): the import writes it left out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.adapters.helm import CappedRenderer, Helm
from generator.catalog import Resolved, load_catalog
from generator.chart.pipeline import render_app
from generator.cli import main
from generator.fit.sizing import sized
from generator.importer.build import import_chart
from generator.importer.result import CHART_FIELDS
from generator.importer.drafts import Pool
from generator.importer.source import read_chart
from generator.schema import App

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE = FIXTURES / "catalog_small"
MARKET = FIXTURES / "market" / "catalog"  # a frozen copy of the embedded catalog, olares-v3 (no market.yaml)
PROFILES = ("olares-v2", "olares-v3")
GPU = ("gpu_memory_mib", "gpu_memory_utilization")
COMPARED = tuple(f for f in CHART_FIELDS if f != "unmapped" and f not in GPU)
TEMPLATE = "lab-template"
TEMPLATE_TEXT = "{# a test template #}\n{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{%- endfor %}\n"
PACKAGES = st.lists(st.from_regex(r"^[a-z][a-z0-9_-]{0,10}(==[0-9]\.[0-9]{1,2})?$", fullmatch=True), max_size=4)
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
    "profile": st.sampled_from(PROFILES),
    "gpu_memory_mib": st.none() | st.integers(1, 100_000),
    "chat_template": st.none() | st.just(TEMPLATE),
    "slot_save": st.booleans(),
    "audio": st.booleans(),
    "python_packages": PACKAGES,
    "utilization": st.none() | st.integers(1, 100).map(lambda n: n / 100),
    "resources": st.fixed_dictionaries({"cpu_request": QTY_CPU, "cpu_limit": QTY_CPU, "memory_request": QTY_MEM,
                                        "memory_limit": QTY_MEM, "disk_request": QTY_MEM, "disk_limit": QTY_MEM}),
    "env": st.dictionaries(st.sampled_from(ENV_NAMES), TEXT, max_size=3),
    "extra_args": ARGS,
    "vision": st.booleans(),
})


def profiled_copy(source: Path, dest: Path, profile: str) -> Path:
    """`source` copied to `dest` with a catalog/market.yaml naming `profile` (generator/schema/market.py)."""
    shutil.copytree(source, dest)
    (dest / "market.yaml").write_text(f"profile: {profile}\n", encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory):
    """catalog_small per profile, with a chat template and the Gemma model's audio encoder."""
    out = {}
    for profile in PROFILES:
        root = profiled_copy(FIXTURE, tmp_path_factory.mktemp(profile) / "catalog", profile)
        (root / "chat_templates").mkdir()
        (root / "chat_templates" / f"{TEMPLATE}.jinja").write_text(TEMPLATE_TEXT, encoding="utf-8")
        digest = hashlib.sha256(TEMPLATE_TEXT.encode()).hexdigest()
        (root / "chat_templates" / f"{TEMPLATE}.yaml").write_text(
            f"id: {TEMPLATE}\nfile: {TEMPLATE}.jinja\nsha256: {digest}\npurpose: a test template\nsources:\n"
            "  - {ref: tests/importer/test_import_roundtrip.py, note: test data}\n", encoding="utf-8")
        model = root / "models" / "gemma4-e4b.yaml"
        model.write_text(model.read_text().replace("  vision: true\n", "  vision: true\n  audio: true\n", 1))
        out[profile] = load_catalog(root)
    return out


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
                  full_description=data["full_description"], upgrade_description=data["upgrade_description"],
                  chat_template=data["chat_template"])
    # the canonical spelling of what a chart cannot tell apart: a long description equal to the short one, a
    # served name equal to the app name, a V cache type equal to the K one
    if fields["full_description"] == fields["description"]:
        fields["full_description"] = None
    if fields["served_name"] == base.app.name:
        fields["served_name"] = None
    if vllm:
        fields["gpu_memory_utilization"] = data["utilization"]
        fields["speculative"] = {"method": "mtp", "tokens": data["tokens"], "drafter": "assistant"}
        fields.update(audio=data["audio"], vision=data["vision"] and data["audio"],
                      python_packages=tuple(data["python_packages"]))
    else:
        kv_v = data["kv_cache_type_v"]
        fields["kv_cache_type_v"] = kv_v if data["kv_cache_type"] and kv_v != data["kv_cache_type"] else None
        fields.update(vision=data["vision"], slot_save=data["slot_save"])
    template = catalog.chat_templates.get(TEMPLATE) if data["chat_template"] else None
    return dataclasses.replace(base, app=App.model_validate(fields), chat_template=template)


_RENDERER: list[CappedRenderer] = []  # one capped Helm worker for the module, as one import run has one


@pytest.fixture(scope="module", autouse=True)
def _renderer():
    with Helm().capped_renderer() as renderer:
        _RENDERER.append(renderer)
        yield renderer
        _RENDERER.clear()


def import_tree(root: Path, name: str, tree: dict[str, str], catalog):
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    for rel, text in tree.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return import_chart(read_chart(folder), catalog, Pool(catalog), _RENDERER[0] if _RENDERER else None)


def assert_same_app(resolved: Resolved, result, *, exact_gpu: bool = True) -> App:
    """`exact_gpu`: the GPU fields too, as written; else as sized (the chart cannot tell a stated number from
    the fit's, and the import writes the fit's left out; a number the fit would not give is kept)."""
    assert result.status == "ok", (result.missing, result.problems)
    assert result.unmapped == [] and "unmapped" not in (result.app or {})
    got = App.model_validate(_tuples(result.app))
    skip = {"vision"} if resolved.stack.engine == "vllm" and not resolved.app.audio else set()
    diffs = {k: (getattr(resolved.app, k), getattr(got, k)) for k in COMPARED + (GPU if exact_gpu else ())
             if k not in skip and getattr(resolved.app, k) != getattr(got, k)}
    assert not diffs, diffs
    if not exact_gpu:
        want = sized(resolved).app
        have = sized(dataclasses.replace(resolved, app=got)).app
        assert [getattr(want, k) for k in GPU] == [getattr(have, k) for k in GPU]
        if got.gpu_memory_mib is None:  # left out only when the fit gives that very number
            assert resolved.app.gpu_memory_mib in (None, want.gpu_memory_mib)
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
def test_import_of_a_render_gives_back_the_app(data, catalogs, tmp_path):
    catalog = catalogs[data["profile"]]
    resolved = varied(catalog, data)
    tree = render_app(resolved)
    result = import_tree(tmp_path, resolved.app.name, tree, catalog)
    assert result.profile == data["profile"]
    got = assert_same_app(resolved, result, exact_gpu=False)
    again = render_app(dataclasses.replace(resolved, app=got))
    assert again == tree  # the imported app renders the very same chart


@pytest.fixture(scope="module")
def market(tmp_path_factory):
    """The market fixture as it is (olares-v3) and as an olares-v2 copy."""
    return {"olares-v3": load_catalog(MARKET),
            "olares-v2": load_catalog(profiled_copy(MARKET, tmp_path_factory.mktemp("v2") / "catalog", "olares-v2"))}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", sorted(p.stem for p in (MARKET / "apps").glob("*.yaml")))
def test_every_market_app_round_trips(name, profile, market, tmp_path):
    """Every engine family, Genesis patches, Lucebox, drafters, projectors, in both profiles."""
    cat = market[profile]
    resolved = cat.apps[name]
    result = import_tree(tmp_path, name, render_app(resolved), cat)
    assert result.profile == profile
    assert_same_app(resolved, result)


def test_a_chart_of_the_other_profile_is_one_note(market, tmp_path):
    """An olares-v2 chart into an olares-v3 catalog: its permission, weights folder and HF envs are the v2
    profile's, so they are not unmapped; the profile difference is one note."""
    name = sorted(market["olares-v2"].apps)[0]
    tree = render_app(market["olares-v2"].apps[name])
    result = import_tree(tmp_path, name, tree, market["olares-v3"])
    assert result.profile == "olares-v2" and result.status == "ok", result.missing
    assert result.unmapped == []
    notes = [n for n in result.notes if "manifest profile" in n]
    assert len(notes) == 1 and "the catalog renders olares-v3" in notes[0], result.notes


def test_an_unknown_chat_template_becomes_a_draft(catalogs, tmp_path, capsys):
    """A chart's chat template the catalog lacks (another sha256): a draft with the file's text, the app a draft."""
    catalog = catalogs["olares-v3"]
    base = catalog.apps["qwenlab"]
    other = dataclasses.replace(catalog.chat_templates[TEMPLATE], text=TEMPLATE_TEXT + "{# edited #}\n")
    resolved = dataclasses.replace(base, app=base.app.model_copy(update={"chat_template": TEMPLATE,
                                                                         "name": "qwentemplate"}),
                                   chat_template=other)
    chart = tmp_path / "charts" / "qwentemplate"
    for rel, text in render_app(resolved).items():
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        (chart / rel).write_text(text, encoding="utf-8")
    root = tmp_path / "catalog"
    shutil.copytree(catalog.root, root)
    assert main(["import", str(chart), "--catalog", str(root)]) == 0
    drafts = root / "drafts" / "chat_templates"
    assert (drafts / "qwentemplate-chat-template.jinja").read_text(encoding="utf-8") == other.text
    meta = (drafts / "qwentemplate-chat-template.yaml").read_text(encoding="utf-8")
    assert hashlib.sha256(other.text.encode()).hexdigest() in meta and "missing: purpose" in meta
    assert "chat_template: qwentemplate-chat-template" in (root / "drafts" / "apps" / "qwentemplate.yaml").read_text()


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
