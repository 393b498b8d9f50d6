"""One chart for every accelerator mode of an app's devices (docs/devices.md "Charts"; Profile.per_mode).

Real parts: tests/fixtures/catalog_devices (`spread`: its own Ada card in mode `nvidia`, a unified arm64 box in mode
`nvidia-gb10` on a multi-arch stack, an Ampere card excluded), the real fit and planner, Helm's engine rendering the
chart with the values Olares injects (generator/lint/values.py: `gpu` and `GPU.Type`, as beclab/Olares
framework/app-service/pkg/appinstaller/helm_utils.go SetValues sets them), and the chart lint.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from generator.catalog import load_catalog
from generator.chart.plan import GPUMEM_MODES, k8s_literal, plan
from generator.chart.profiles import OLARES_V2, OLARES_V3, OLARES_V3_ONE_MODE
from generator.chart.render import render
from generator.fit.devices import device_plan
from generator.lint import helm
from generator.lint.run import lint_chart
from generator.lint.values import olares_values

from support.catalogs import FIXTURES, REPO

DEVICES = FIXTURES / "catalog_devices"
APP = "spread"


@pytest.fixture(scope="module")
def cat():
    return load_catalog(DEVICES)


def deployment(tree: dict[str, str], gpu: str | None, *, only_legacy: bool = False) -> dict:
    """The Deployment Helm renders with Olares' injected GPU type `gpu` (`only_legacy`: `.Values.gpu` left out, only
    `.Values.GPU.Type` set, as older app-service releases inject it)."""
    with helm.chart_folder(APP, tree) as folder:
        values = olares_values(APP, yaml.safe_load(tree["OlaresManifest.yaml"]), yaml.safe_load(tree["values.yaml"]),
                               gpu_type=gpu or "nvidia")
        if only_legacy:
            del values["gpu"]
        docs, errors = helm.documents(helm.render(folder, values, name=APP, namespace=f"{APP}-admin"))
    assert errors == []
    return next(d for d in docs if d.kind == "Deployment").body["spec"]["template"]["spec"]


def test_each_mode_gets_the_plan_of_its_device(cat):
    spec = plan(cat.apps[APP], OLARES_V3)
    assert [(m.mode, m.device) for m in spec.modes] == [("nvidia-gb10", "big-unified")]
    tree = render(spec)
    own, gb10 = spec.engine, spec.modes[0]

    pod = deployment(tree, "nvidia")
    engine = pod["containers"][0]
    assert engine["image"] == own.image
    assert engine["args"] == [k8s_literal(a) for a in own.argv]
    assert engine["resources"] == spec.values.engine.resources.to_data()
    assert engine["resources"]["limits"]["nvidia.com/gpumem"] == spec.resolved.app.gpu_memory_mib
    assert [e["value"] for e in pod["initContainers"][0]["env"] if e["name"] == "FILE_COUNT"] == [
        str(len(own.downloads))]

    for legacy in (False, True):
        pod = deployment(tree, "nvidia-gb10", only_legacy=legacy)
        engine = pod["containers"][0]
        assert engine["image"] == gb10.engine.image != own.image
        assert engine["args"] == [k8s_literal(a) for a in gb10.engine.argv]
        gpu = gb10.resolved.app.gpu_memory_mib
        assert engine["resources"] == {"requests": {"cpu": cat.apps[APP].app.resources.cpu_request,
                                                    "memory": f"{gpu}Mi"},
                                       "limits": {"cpu": cat.apps[APP].app.resources.cpu_limit, "memory": f"{gpu}Mi"}}
        assert engine["ports"][0]["containerPort"] == gb10.engine.port
    # the context and KV type the fit chose on the device are what the engine gets there
    there = device_plan(cat.apps[APP], "big-unified")
    assert there is not None and there.runs and gpu == there.gpu_mib
    args = engine["args"]
    assert args[args.index("--ctx-size") + 1] == str(there.context)
    assert args[args.index("--cache-type-k") + 1] == there.kv.split()[-1]


def test_an_unknown_or_no_selected_mode_gets_the_own_devices_values(cat):
    """app-service injects "none" when no GPU type was selected (appcfg GetSelectedGpuTypeValue): the chart keeps
    the app's own device's values, as it does for a mode it carries none for."""
    spec = plan(cat.apps[APP], OLARES_V3)
    tree = render(spec)
    for gpu in ("none", "amd-gpu"):
        assert deployment(tree, gpu)["containers"][0]["image"] == spec.engine.image


def test_the_manifest_has_one_accelerator_entry_per_mode_and_both_architectures(cat):
    spec = plan(cat.apps[APP], OLARES_V3)
    manifest = yaml.safe_load(render(spec)["OlaresManifest.yaml"])["spec"]
    own, gb10 = manifest["accelerator"]
    assert own["mode"] == "nvidia" and own["requiredGPUMemory"] == f"{spec.resolved.app.gpu_memory_mib}Mi"
    gpu = spec.modes[0].resolved.app.gpu_memory_mib
    assert gb10 == {"mode": "nvidia-gb10", "requiredCpu": own["requiredCpu"], "limitedCpu": own["limitedCpu"],
                    "requiredMemory": f"{gpu}Mi", "limitedMemory": f"{gpu}Mi", "requiredDisk": own["requiredDisk"],
                    "limitedDisk": own["limitedDisk"]}
    assert "nvidia-gb10" not in GPUMEM_MODES
    assert manifest["supportArch"] == ["amd64", "arm64"]


def test_the_lint_passes_every_mode(cat):
    """Each mode is rendered and checked (OLARES010 per mode, OLARES020, OLARES025 with its nvidia entry first, the
    Kubernetes schemas); the one-mode variant passes too."""
    assert lint_chart(APP, render(plan(cat.apps[APP], OLARES_V3))) == []
    assert lint_chart(APP, render(plan(cat.apps[APP], OLARES_V3_ONE_MODE))) == []


def test_olares025_refuses_a_chart_without_its_nvidia_entry_first_or_with_a_mode_twice(cat):
    tree = render(plan(cat.apps[APP], OLARES_V3))
    text = tree["OlaresManifest.yaml"]
    manifest = yaml.safe_load(text)
    entries = manifest["spec"]["accelerator"]
    for broken in (list(reversed(entries)), entries + [dict(entries[1])], entries + [{**entries[1], "mode": "nvidia-x"}]):
        manifest["spec"]["accelerator"] = broken
        found = lint_chart(APP, {**tree, "OlaresManifest.yaml": yaml.safe_dump(manifest, sort_keys=False)})
        assert "OLARES025" in {f.rule for f in found}, broken


@pytest.mark.parametrize("profile", [OLARES_V3_ONE_MODE, OLARES_V2])
def test_without_per_mode_the_chart_keeps_one_device(cat, profile):
    """olares-v3 with one mode and the v2 profile: one envelope, no `modes`, no branch on the GPU type."""
    spec = plan(cat.apps[APP], profile)
    tree = render(spec)
    assert spec.modes == ()
    assert "modes" not in yaml.safe_load(tree["values.yaml"])
    assert "$gpu" not in tree["templates/deployment.yaml"]
    manifest = yaml.safe_load(tree["OlaresManifest.yaml"])["spec"]
    assert manifest["supportArch"] == ["amd64"]
    if profile is OLARES_V2:
        assert "accelerator" not in manifest and manifest["requiredGpu"] == f"{spec.resolved.app.gpu_memory_mib}Mi"
        # per_mode on a flat profile changes nothing: v2 has one envelope
        assert render(plan(cat.apps[APP], replace(OLARES_V2, per_mode=True))) == tree
    else:
        assert [e["mode"] for e in manifest["accelerator"]] == ["nvidia"]


def test_an_app_whose_devices_share_its_mode_or_are_excluded_renders_as_before(cat):
    """`multi`'s unified box is excluded (amd64-only stack) and its other card shares the own mode: no more entry."""
    for name in ("multi", "plain"):
        assert render(plan(cat.apps[name], OLARES_V3)) == render(plan(cat.apps[name], OLARES_V3_ONE_MODE))


def test_the_catalogs_apps_with_a_spark_entry_render_one_chart_for_both_modes():
    """The embedded catalog with a store that targets the DGX Spark too (market.yaml `devices:`): the llama.cpp apps
    that target the Spark on beclab's multi-arch image gain its mode; the vLLM app whose image is amd64 only and the
    apps without `devices:` render as with one mode; every mode passes the lint. The embedded store itself targets
    the Olares One alone: no app gains a mode there (the maintainer's validator accepts one accelerator entry)."""

    embedded = load_catalog(REPO / "catalog")
    assert embedded.market.devices == ("olares-one",)
    gained, own_store = {}, {}
    for r in embedded.select():
        if r.app.status == "removed" or not r.targets:
            continue
        if plan(r, OLARES_V3).modes:
            own_store[r.app.name] = True
        spark = replace(r, market=r.market.model_copy(update={"devices": ("olares-one", "dgx-spark")}))
        spec = plan(spark, OLARES_V3)
        if spec.modes:
            gained[r.app.name] = [(m.mode, m.device) for m in spec.modes]
            assert lint_chart(r.app.name, render(spec)) == []
        else:
            assert render(spec) == render(plan(spark, OLARES_V3_ONE_MODE))
    assert own_store == {}
    assert gained == {name: [("nvidia-gb10", "dgx-spark")]
                      for name in ("gemma426ba4bone", "gemma4e2bone", "llamacppqwen36mtpone")}


def test_a_store_that_does_not_target_a_device_gives_it_no_entry(tmp_path):
    import shutil

    copy = tmp_path / "catalog"
    shutil.copytree(DEVICES, copy)
    (copy / "market.yaml").write_text("devices: [small-ada]\n")
    spread = load_catalog(copy).apps[APP]
    assert plan(spread, OLARES_V3).modes == ()
    (copy / "market.yaml").write_text("devices: [small-ada, nowhere]\n")
    from generator.core.errors import InputError

    with pytest.raises(InputError, match="device 'nowhere' is not in devices/"):
        load_catalog(copy)
