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
    v3 = render(plan(r, profile="olares-v3"))
    assert manifest(v3)["spec"]["accelerator"][0]["requiredCpu"] == "1500m"


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
