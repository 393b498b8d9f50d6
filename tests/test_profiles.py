"""Olares manifest profiles (docs/profiles.md): olares-v2 (0.10.0 / v2, the maintainer's market) and olares-v3.

Real parts: the small fixture catalog and the market fixture rendered through the real CLI and planner, the chart
lint with the Helm engine, golden files for the v2 render (tests/golden_v2/, `UPDATE_GOLDEN=1` to refresh, review
the diff). The market build script's conversions are re-implemented here (`parse_cpu`, `parse_bytes`) as written in
github.com/aamsellem/orales-one-market scripts/build-catalog.js@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9; the script
itself (Node + js-yaml) is not part of this repository: docs/profiles.md says how to run it on rendered charts.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.chart.profiles import OLARES_V2, OLARES_V3, PROFILES, get_profile
from generator.chart.render import render
from generator.chart.writer import diff_tree, read_tree
from generator.cli import main
from generator.core.errors import InputError, UsageError
from generator.lint.run import lint_chart

from support.catalogs import MARKET_CATALOG, SMALL, TESTS

GOLDEN_V2 = TESTS / "golden_v2"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
SMALL_APPS = sorted(p.stem for p in (SMALL / "apps").glob("*.yaml"))


def manifest(tree: dict[str, str]) -> dict:
    return yaml.safe_load(tree["OlaresManifest.yaml"])


# ---- the maintainer's build script, re-implemented (scripts/build-catalog.js) ------------------------------------

def parse_cpu(value: object) -> str:
    """`parseCpu`: falsy -> "0"; "4000m" -> String(parseInt("4000m") / 1000) = "4"; else String(value)."""
    if not value:
        return "0"
    text = str(value)
    if text.endswith("m"):
        number = int(re.match(r"^\s*[+-]?\d+", text).group(0)) / 1000  # parseInt reads the leading digits
        return str(int(number)) if number == int(number) else str(number)
    return text


def parse_bytes(value: object) -> str:
    """`parseBytes`: falsy -> "0"; "24Gi" -> String(parseInt("24Gi") * 2**30); an unknown unit: the text as is."""
    if not value:
        return "0"
    text = str(value)
    for suffix, mult in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("Ti", 2**40)):
        if text.endswith(suffix):
            return str(int(re.match(r"^\s*[+-]?\d+", text).group(0)) * mult)
    return text


def market_entry(tree: dict[str, str]) -> dict[str, str]:
    """The resource fields the build script puts in the market's catalog.json for one chart."""
    spec = manifest(tree).get("spec") or {}
    return {"requiredMemory": parse_bytes(spec.get("requiredMemory")),
            "requiredDisk": parse_bytes(spec.get("requiredDisk")),
            "requiredGPU": parse_bytes(spec.get("requiredGpu")), "requiredCPU": parse_cpu(spec.get("requiredCpu"))}


def test_the_reimplemented_conversions_match_the_documented_ones():
    """The script's CLAUDE.md: "CPU: `4000m` -> `"4"`", "`24Gi` -> `"25769803776"`"."""
    assert parse_cpu("4000m") == "4" and parse_cpu("4") == "4" and parse_cpu(None) == "0"
    assert parse_bytes("24Gi") == "25769803776" and parse_bytes("24300Mi") == str(24300 * 2**20)
    assert parse_bytes(None) == "0"


@pytest.fixture(scope="module")
def market():
    return load_catalog(MARKET_CATALOG)


def test_the_build_script_reads_non_zero_resources_from_every_v2_chart(market):
    """Fed olares-v2 charts, the market build script reads GPU, memory, CPU and disk for every app; fed today's
    olares-v3 charts it read "0" for all four (the fields live in spec.accelerator there)."""
    for r in market.select():
        v2 = market_entry(render(plan(r, profile="olares-v2")))
        assert all(value != "0" for value in v2.values()), (r.app.name, v2)
        assert int(v2["requiredGPU"]) == r.app.gpu_memory_mib * 2**20
        assert re.fullmatch(r"[1-9][0-9]*", v2["requiredCPU"]), v2
        v3 = market_entry(render(plan(r, profile="olares-v3")))
        assert set(v3.values()) == {"0"}, v3


# ---- what each profile writes ----------------------------------------------------------------------------------

def test_profiles_are_the_two_formats():
    assert sorted(PROFILES) == ["olares-v2", "olares-v3"]
    assert (OLARES_V2.manifest_version, OLARES_V2.api_version, OLARES_V2.olares_dependency) == \
        ("0.10.0", "v2", ">=1.12.3-0")
    assert (OLARES_V3.manifest_version, OLARES_V3.api_version, OLARES_V3.olares_dependency) == \
        ("0.12.0", "v3", ">=1.12.6-0")


@pytest.mark.parametrize("app", ["vllmqwen36turbo27bone", "gemma4e2bone"])
def test_v2_manifest_has_the_maintainers_shape(market, app):
    r = market.apps[app]
    tree = render(plan(r, profile="olares-v2"))
    data = manifest(tree)
    spec = data["spec"]
    assert data["olaresManifest.version"] == "0.10.0" and data["apiVersion"] == "v2"
    assert "workloadReplicas" not in data and "accelerator" not in spec
    assert data["permission"] == {"appData": True}
    assert data["options"]["dependencies"] == [{"name": "olares", "version": ">=1.12.3-0", "type": "system"}]
    assert [e["valueFrom"]["envName"] for e in data["envs"]] == ["OLARES_USER_HUGGINGFACE_SERVICE",
                                                                  "OLARES_USER_HUGGINGFACE_TOKEN"]
    res = r.app.resources
    assert spec["requiredCpu"] == res.cpu_request and spec["limitedCpu"] == res.cpu_limit
    assert (spec["requiredMemory"], spec["limitedMemory"]) == (res.memory_request, res.memory_limit)
    assert spec["requiredGpu"] == spec["limitedGpu"] == f"{r.app.gpu_memory_mib}Mi"
    assert 'printf "%s/models" ($us.appData' in tree["templates/deployment.yaml"]
    assert lint_chart(app, tree) == []


def test_v2_cpu_is_whole_cores(catalog_copy):
    """The maintainer's rule: CPU in integer cores. Millicores in the catalog are rounded up in the manifest; the
    containers keep the catalog's quantities (they fit under the rounded-up envelope)."""
    from support.checks import set_app

    set_app(catalog_copy, "gemma4e2bone", resources={"cpu_request": "1500m", "cpu_limit": "8000m",
                                                     "memory_request": "4Gi", "memory_limit": "40Gi",
                                                     "disk_request": "15Gi", "disk_limit": "20Gi"})
    r = load_catalog(catalog_copy).apps["gemma4e2bone"]
    v2 = render(plan(r, profile="olares-v2"))
    assert (manifest(v2)["spec"]["requiredCpu"], manifest(v2)["spec"]["limitedCpu"]) == ("2", "8")
    assert "cpu: 1500m" in v2["values.yaml"]
    assert lint_chart("gemma4e2bone", v2) == []
    v3 = render(plan(r, profile="olares-v3"))  # the maintainer's CLAUDE.md @b41af142 keeps integer cores in v3
    assert manifest(v3)["spec"]["accelerator"][0]["requiredCpu"] == "2" and "cpu: 1500m" in v3["values.yaml"]
    assert lint_chart("gemma4e2bone", v3) == []


@pytest.mark.parametrize("app", ["vllmqwen36turbo27bone", "gemma4e2bone"])
def test_v3_manifest_is_the_0120_format(market, app):
    """Olares >= 1.12.6 and the maintainer's validator: no appid, no onlyAdmin, one nvidia accelerator entry,
    user HF envs with required false, i18n/en-US, the dependency '>=1.12.6-0', apiTimeout 0, Router's flag."""
    r = market.apps[app]
    tree = render(plan(r, profile="olares-v3"))
    data = manifest(tree)
    spec, meta, options = data["spec"], data["metadata"], data["options"]
    assert data["olaresManifest.version"] == "0.12.0" and data["apiVersion"] == "v3"
    assert "appid" not in meta and meta["categories"] == ["AI"] and "onlyAdmin" not in spec
    assert data["workloadReplicas"] == {app: 1} and yaml.safe_load(tree["values.yaml"])["workloads"] == \
        {app: {"replicaCount": 1}}
    assert f"replicas: {{{{ .Values.workloads.{app}.replicaCount }}}}" in tree["templates/deployment.yaml"]
    assert f"kind: Deployment\nmetadata:\n  name: {app}\n" in tree["templates/deployment.yaml"]
    [entry] = spec["accelerator"]
    assert entry["mode"] == "nvidia" and entry["requiredGPUMemory"] == entry["limitedGPUMemory"] == \
        f"{r.app.gpu_memory_mib}Mi"
    assert not {"requiredCpu", "requiredGpu", "limitedGpu"} & set(spec)
    hf = [e for e in data["envs"] if e["envName"] in ("HF_ENDPOINT", "HF_TOKEN")]
    assert [(e["valueFrom"]["envName"], e["required"], e["applyOnChange"]) for e in hf] == \
        [("OLARES_USER_HUGGINGFACE_SERVICE", False, True), ("OLARES_USER_HUGGINGFACE_TOKEN", False, True)]
    assert options["apiTimeout"] == 0 and options["LLMGatewaySupported"] is True
    assert "version: '>=1.12.6-0'" in tree["OlaresManifest.yaml"] and "{{" not in tree["OlaresManifest.yaml"]
    locale = yaml.safe_load(tree["i18n/en-US/OlaresManifest.yaml"])
    assert locale["metadata"] == {"title": r.app.title, "description": r.app.description}
    assert spec["locale"] == ["en-US"]
    assert lint_chart(app, tree) == []


def _envs(tree: dict[str, str]) -> dict[str, str]:
    return {e["envName"]: e.get("default") for e in manifest(tree)["envs"]}


def test_router_card_comes_from_the_catalog(market):
    """MODEL_SUPPORTS is read off facts the chart already holds: vLLM's tool and reasoning parsers, llama.cpp's
    --jinja, the app's vision; MODEL_NAME is the name the server answers to."""
    turbo = market.apps["vllmqwen36turbo27bone"]  # vLLM, --reasoning-parser qwen3, --tool-call-parser qwen3_coder
    envs = _envs(render(plan(turbo, profile="olares-v3")))
    assert envs["MODEL_MODE"] == "chat" and envs["MODEL_NAME"] == turbo.app.model_alias
    assert envs["MODEL_SUPPORTS"] == "tools,thinking"
    e2b = market.apps["gemma4e2bone"]  # llama.cpp fork with --jinja, no vision
    assert _envs(render(plan(e2b, profile="olares-v3")))["MODEL_SUPPORTS"] == "tools"
    vision = market.apps["qwen36a3bvisionone"]
    assert _envs(render(plan(vision, profile="olares-v3")))["MODEL_SUPPORTS"].split(",")[0] == "vision"
    v2 = manifest(render(plan(turbo, profile="olares-v2")))
    assert "LLMGatewaySupported" not in v2["options"] and "MODEL_MODE" not in {e["envName"] for e in v2["envs"]}


def test_no_capability_reads_none(catalog_copy):
    from support.checks import set_app

    set_app(catalog_copy, "vllmqwen36turbo27bone", extra_args=["--language-model-only"])
    r = load_catalog(catalog_copy).apps["vllmqwen36turbo27bone"]
    assert _envs(render(plan(r, profile="olares-v3")))["MODEL_SUPPORTS"] == "none"


def test_translations_become_i18n_manifests(catalog_copy):
    from support.checks import set_app

    set_app(catalog_copy, "gemma4e2bone", i18n={"zh-CN": {"title": "Gemma 4 E2B", "description": "zh"}})
    r = load_catalog(catalog_copy).apps["gemma4e2bone"]
    tree = render(plan(r, profile="olares-v3"))
    assert manifest(tree)["spec"]["locale"] == ["en-US", "zh-CN"]
    zh = yaml.safe_load(tree["i18n/zh-CN/OlaresManifest.yaml"])
    assert zh["metadata"] == {"title": "Gemma 4 E2B", "description": "zh"}
    assert zh["spec"]["fullDescription"] == (r.app.full_description or r.app.description)
    assert lint_chart("gemma4e2bone", tree) == []
    set_app(catalog_copy, "gemma4e2bone", i18n={"en-US": {"title": "x", "description": "y"}})
    with pytest.raises(InputError, match="i18n.en-US"):
        load_catalog(catalog_copy)


def test_mkt002_an_app_without_market_categories(catalog_copy):
    """MKT004 when catalog/market.yaml says the market shows its own taxonomy."""
    from generator.rules import context, run_rules
    from support.checks import set_app

    def mkt002() -> list[str]:
        catalog = load_catalog(catalog_copy)
        return [f.message for f in run_rules(context(catalog.apps["gemma4e2bone"], catalog)) if f.rule == "MKT004"]

    assert mkt002() == []  # no market.yaml: nothing asks for categories
    (catalog_copy / "market.yaml").write_text("categories: true\n", encoding="utf-8")
    assert mkt002() and "names no market categories" in mkt002()[0]
    set_app(catalog_copy, "gemma4e2bone", categories=["LLM Chat"])
    assert mkt002() == []


# ---- who chooses: the catalog's market settings, or the caller (a publish target) ---------------------------------

def _small_copy(tmp_path: Path, profile: str | None) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(SMALL, dest)
    if profile:
        (dest / "market.yaml").write_text(f"profile: {profile}\n", encoding="utf-8")
    return dest


@pytest.mark.parametrize("profile, version", [(None, "0.12.0"), ("olares-v3", "0.12.0"), ("olares-v2", "0.10.0")])
def test_the_catalogs_market_settings_choose_the_profile(tmp_path, profile, version):
    catalog = _small_copy(tmp_path, profile)
    assert main(["render", "--catalog", str(catalog), "--out", str(tmp_path / "charts")]) == 0
    for app in SMALL_APPS:
        data = yaml.safe_load((tmp_path / "charts" / app / "OlaresManifest.yaml").read_text(encoding="utf-8"))
        assert str(data["olaresManifest.version"]) == version


def test_a_caller_overrides_the_catalogs_profile(tmp_path):
    """What a publish target's `--profile` does: plan(r, profile=...) wins over catalog/market.yaml."""
    cat = load_catalog(_small_copy(tmp_path, "olares-v2"))
    r = cat.apps[SMALL_APPS[0]]
    assert manifest(render(plan(r)))["apiVersion"] == "v2"
    assert manifest(render(plan(r, profile="olares-v3")))["apiVersion"] == "v3"
    assert manifest(render(plan(r, profile=OLARES_V3)))["apiVersion"] == "v3"
    with pytest.raises(UsageError, match="unknown manifest profile 'olares-v9'; known: olares-v2, olares-v3"):
        plan(r, profile="olares-v9")
    assert get_profile("olares-v2") is OLARES_V2


def test_an_unknown_profile_in_the_market_settings_is_an_input_error(tmp_path):
    catalog = _small_copy(tmp_path, "olares-v4")
    with pytest.raises(InputError) as err:
        load_catalog(catalog)
    assert "market.yaml:1" in str(err.value) and "profile" in str(err.value)


# ---- golden files of the v2 render -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def v2_trees() -> dict[str, dict[str, str]]:
    cat = load_catalog(SMALL)
    trees = {name: render(plan(r, profile="olares-v2")) for name, r in cat.apps.items()}
    if UPDATE:
        shutil.rmtree(GOLDEN_V2, ignore_errors=True)
        for name, tree in trees.items():
            for rel, text in tree.items():
                path = GOLDEN_V2 / name / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return trees


def test_same_apps_as_the_v2_golden(v2_trees):
    assert sorted(v2_trees) == sorted(p.name for p in GOLDEN_V2.iterdir()) == SMALL_APPS


@pytest.mark.parametrize("app", SMALL_APPS)
def test_v2_chart_matches_golden_and_lints_clean(v2_trees, app):
    diff = diff_tree(app, read_tree(GOLDEN_V2 / app), v2_trees[app])
    assert not diff, "v2 render differs from tests/golden_v2 (UPDATE_GOLDEN=1 to accept):\n" + "".join(diff)
    assert lint_chart(app, v2_trees[app]) == []


def test_v2_and_v3_differ_only_in_the_manifest_and_the_weights_folder(v2_trees):
    """The profile changes OlaresManifest.yaml (v3 adds its i18n/<locale>/ manifests) and where the weights live
    on the host; nothing else."""
    golden_v3 = TESTS / "golden"
    for app in SMALL_APPS:
        v3 = read_tree(golden_v3 / app)
        changed = {rel for rel in set(v3) | set(v2_trees[app]) if v3.get(rel) != v2_trees[app].get(rel)}
        assert changed == {"OlaresManifest.yaml", "i18n/en-US/OlaresManifest.yaml", "templates/deployment.yaml"}, app
        assert "i18n/en-US/OlaresManifest.yaml" not in v2_trees[app]
        lines = [line for line in diff_tree(app, v3, v2_trees[app]) if line.startswith(("+{{", "-{{"))]
        assert len(lines) == 2 and all("$models :=" in line for line in lines), lines
