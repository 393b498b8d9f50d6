"""`generator.lint.run.lint_chart`: real Helm engine, real Kubernetes schemas, one test per Olares rule.

Each rule test takes a chart rendered from the market fixture, breaks it in memory the way a template
or plan bug would, and asserts that exactly that rule fires. That every chart of the embedded catalog lints
clean: tests/test_embedded_catalog.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.lint.run import CHART_RULES, lint_chart
from generator.chart.pipeline import render_apps, rendered_apps

from support.catalogs import MARKET_CATALOG, REPO

APP = "gemma4e2bone"  # llama.cpp fork, GPU, init container, hostPath: exercises every rule


@pytest.fixture(scope="module")
def charts() -> dict[str, dict[str, str]]:
    return render_apps(rendered_apps(load_catalog(MARKET_CATALOG)))


@pytest.fixture
def tree(charts) -> dict[str, str]:
    return dict(charts[APP])


def swap(tree: dict[str, str], rel: str, old: str, new: str) -> dict[str, str]:
    """Replace one exact occurrence of `old` in a chart file (fails loudly if the chart changed shape)."""
    assert tree[rel].count(old) == 1, f"{rel} should contain {old!r} exactly once"
    tree[rel] = tree[rel].replace(old, new)
    return tree


def ids(findings) -> set[str]:
    return {f.rule for f in findings}


def only(findings, rule: str) -> list:
    assert ids(findings) == {rule}, "\n".join(str(f) for f in findings)
    return findings


# --- the market fixture's charts ------------------------------------------------------------------------

def test_render_with_injected_values_produces_the_workload(charts):
    from generator.lint import helm
    from generator.lint.view import build_view

    for name, tree in charts.items():
        with helm.chart_folder(name, tree) as folder:
            view = build_view(name, tree, folder)
        assert view.render_errors == [] and view.main is not None
        deployment = next(d for d in view.main if d.kind == "Deployment")
        assert deployment.name == name
        pod = deployment.body["spec"]["template"]["spec"]
        assert pod["volumes"][0]["hostPath"]["path"] == "/olares/userdata/Common/huggingface"


# --- Helm and Kubernetes ----------------------------------------------------------------------------------

def test_helm002_template_that_fails_under_olares_values(tree):
    tree["templates/broken.yaml"] = "value: {{ .Values.notInjected.deep }}\n"
    found = lint_chart(APP, tree)
    assert {"HELM001", "HELM002"} <= ids(found)
    helm002 = [f for f in found if f.rule == "HELM002"]
    assert "nil pointer" in helm002[0].message and helm002[0].severity == "error"


def test_helm001_template_rendering_broken_yaml(tree):
    tree["templates/bad.yaml"] = "items: [a, b\n"
    found = lint_chart(APP, tree)
    helm001 = [f for f in found if f.rule == "HELM001"]
    assert helm001 and "unable to parse YAML" in helm001[0].message
    assert "K8S002" in ids(found)


def test_k8s001_unknown_field_names_the_document_and_path(tree):
    swap(tree, "templates/deployment.yaml", "          ports:\n", "          gpu: 1\n          ports:\n")
    found = only(lint_chart(APP, tree), "K8S001")
    assert "Deployment/gemma4e2bone" in found[0].message
    assert "spec.template.spec.containers.0" in found[0].message and "'gpu' was unexpected" in found[0].message
    assert found[0].file == f"{APP}/templates/deployment.yaml"


def test_k8s001_wrong_type(tree):
    swap(tree, "templates/service.yaml", "  type: ClusterIP\n", "  type: ClusterIP\n  sessionAffinityConfig: yes\n")
    found = only(lint_chart(APP, tree), "K8S001")
    assert "Service/gemma4e2bone: spec.sessionAffinityConfig" in found[0].message


def test_k8s003_unknown_kind_is_a_warning(tree):
    tree["templates/monitor.yaml"] = "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: m\n"
    found = only(lint_chart(APP, tree), "K8S003")
    assert found[0].severity == "warning"


def test_cached_schemas_agree_with_kubernetes_validate(charts):
    from kubernetes_validate import utils as kvu

    from generator.lint import helm
    from generator.lint import kube
    from generator.lint.view import build_view

    tree = charts[APP]
    with helm.chart_folder(APP, tree) as folder:
        docs = build_view(APP, tree, folder).main
    for doc in docs:
        assert kvu.validate(doc.body, "1.30.0", strict=True) == "1.30"
        assert kube.validate(doc.body) == []
    bad = dict(docs[0].body, spec=dict(docs[0].body["spec"], replicas="three"))
    with pytest.raises(kvu.ValidationError) as caught:
        kvu.validate(bad, "1.30.0", strict=True)
    errors = kube.validate(bad)
    assert [e.path for e in errors] == [".".join(map(str, caught.value.path))]
    assert errors[0].message == caught.value.message


# --- Olares rules: one broken chart each ------------------------------------------------------------------

def test_olares001_missing_manifest(tree):
    del tree["OlaresManifest.yaml"]
    found = only(lint_chart(APP, tree), "OLARES001")
    assert "OlaresManifest.yaml: missing" in found[0].message


def test_olares001_manifest_not_a_mapping(tree):
    tree["OlaresManifest.yaml"] = "- just\n- a list\n"
    assert "expected a mapping" in only(lint_chart(APP, tree), "OLARES001")[0].message


def test_olares002_chart_name_differs(tree):
    swap(tree, "Chart.yaml", f"name: {APP}\n", "name: gemma4e2btwo\n")
    assert "Chart.yaml name 'gemma4e2btwo'" in only(lint_chart(APP, tree), "OLARES002")[0].message


def _renamed(tree: dict[str, str], new: str) -> dict[str, str]:
    return {rel: text.replace(APP, new) for rel, text in tree.items()}


@pytest.mark.parametrize("name", ["kube", "pod", "a" + "b" * 30])
def test_olares003_reserved_or_too_long_name(tree, name):
    found = only(lint_chart(name, _renamed(tree, name)), "OLARES003")
    assert repr(name) in found[0].message


def test_olares004_versions_differ(tree):
    swap(tree, "Chart.yaml", "version: 1.0.2\n", "version: 1.0.3\n")
    found = only(lint_chart(APP, tree), "OLARES004")
    assert "'1.0.3' != metadata.version '1.0.2'" in found[0].message


def test_olares004_pre_release_version(tree):
    swap(tree, "Chart.yaml", "version: 1.0.2\n", "version: 1.0.2-rc.1\n")
    swap(tree, "OlaresManifest.yaml", "  version: 1.0.2\n", "  version: 1.0.2-rc.1\n")
    found = only(lint_chart(APP, tree), "OLARES004")
    assert {f.file for f in found} == {f"{APP}/Chart.yaml", f"{APP}/OlaresManifest.yaml"}
    assert all(f.line for f in found)


def test_olares005_no_workload_named_after_the_app(tree):
    swap(tree, "templates/deployment.yaml", f"metadata:\n  name: {APP}\n", f"metadata:\n  name: {APP}-engine\n")
    swap(tree, "OlaresManifest.yaml", f"workloadReplicas:\n  {APP}: 1\n", f"workloadReplicas:\n  {APP}-engine: 1\n")
    found = lint_chart(APP, tree)
    assert "OLARES005" in ids(found) <= {"OLARES005", "OLARES026"}  # the v3 wiring rule sees the rename too
    assert "no Deployment or StatefulSet named 'gemma4e2bone'" in [f for f in found if f.rule == "OLARES005"][0].message


def test_olares006_unknown_workload_replicas_entry(tree):
    swap(tree, "OlaresManifest.yaml", f"workloadReplicas:\n  {APP}: 1\n", f"workloadReplicas:\n  {APP}: 1\n  llminit: 1\n")
    found = only(lint_chart(APP, tree), "OLARES006")
    assert "'llminit' matches no rendered" in found[0].message and found[0].line


@pytest.mark.parametrize("replicas", ["{{ .Values.workloads.gemma4e2bone.replicaCount | default 1 }}", "1"])
def test_olares007_replicas_ignore_replica_count(tree, replicas):
    swap(tree, "templates/deployment.yaml", "replicas: {{ .Values.workloads.gemma4e2bone.replicaCount }}",
         f"replicas: {replicas}")
    found = [f for f in lint_chart(APP, tree) if f.rule != "OLARES026"]  # OLARES026 reads the template's text
    assert ids(found) == {"OLARES007"} and "replicaCount was 0" in found[0].message


def test_olares008_hostpath_with_rolling_update(tree):
    swap(tree, "templates/deployment.yaml", "    type: Recreate\n", "    type: RollingUpdate\n")
    assert "hostPath volume(s) models" in only(lint_chart(APP, tree), "OLARES008")[0].message


def test_olares009_container_without_memory_request(tree):
    swap(tree, "values.yaml", "    requests:\n      cpu: '4'\n      memory: 4Gi\n", "    requests:\n      cpu: '4'\n")
    found = only(lint_chart(APP, tree), "OLARES009")
    assert "container 'engine' sets no valid requests.memory" in found[0].message


def test_olares010_limits_exceed_the_envelope(tree):
    swap(tree, "values.yaml", "      memory: 40Gi\n", "      memory: 400Gi\n")
    found = only(lint_chart(APP, tree), "OLARES010")
    assert "limits.memory" in found[0].message and "limitedMemory '40Gi'" in found[0].message


def test_olares010_required_above_limited(tree):
    swap(tree, "OlaresManifest.yaml", "    requiredCpu: '4'\n", "    requiredCpu: '32'\n")
    assert "requiredCpu 32 exceeds limitedCpu 16" in only(lint_chart(APP, tree), "OLARES010")[0].message


def test_olares011_template_syntax_in_manifest(tree):
    line = next(i for i, t in enumerate(tree["OlaresManifest.yaml"].splitlines(), 1) if t.startswith("  description:"))
    swap(tree, "OlaresManifest.yaml", "\n  description: Gemma", "\n  description: \"{{ .Values.bfl.username }}\" # Gemma")
    found = only(lint_chart(APP, tree), "OLARES011")
    assert found[0].line == line


def test_olares012_literal_namespace(tree):
    swap(tree, "templates/service.yaml", "metadata:\n", "metadata:\n  namespace: gemma4e2bone-admin\n")
    found = only(lint_chart(APP, tree), "OLARES012")
    assert "Service/gemma4e2bone sets metadata.namespace 'gemma4e2bone-admin'" in found[0].message


def test_olares013_entrance_host_is_not_a_service(tree):
    swap(tree, "OlaresManifest.yaml", f"  host: {APP}\n", "  host: download-svc\n")
    assert "'download-svc' is not a rendered Service" in only(lint_chart(APP, tree), "OLARES013")[0].message


def test_olares013_entrance_port_is_not_a_service_port(tree):
    swap(tree, "OlaresManifest.yaml", "  port: 8080\n", "  port: 8090\n")
    assert "port 8090 is not a port of Service" in only(lint_chart(APP, tree), "OLARES013")[0].message


def test_olares014_gpumem_with_a_unit(tree):
    tree["values.yaml"] = tree["values.yaml"].replace("nvidia.com/gpumem: 24300", "nvidia.com/gpumem: 24300Mi")
    found = only(lint_chart(APP, tree), "OLARES014")
    assert {f.message for f in found} == {
        f"Deployment/{APP} container 'engine': {part}.nvidia.com/gpumem '24300Mi' is not a bare integer of MiB"
        for part in ("requests", "limits")}


def test_olares014_gpumem_differs_from_required_gpu_memory(tree):
    swap(tree, "OlaresManifest.yaml", "requiredGPUMemory: 24300Mi", "requiredGPUMemory: 23Gi")
    found = only(lint_chart(APP, tree), "OLARES014")
    assert "24300 != requiredGPUMemory 23552 MiB" in found[0].message


def test_olares014_no_gpumem_at_all(tree):
    tree["values.yaml"] = re.sub(r"\n +nvidia.com/gpumem: 24300", "", tree["values.yaml"])
    assert "no container requests nvidia.com/gpumem" in only(lint_chart(APP, tree), "OLARES014")[0].message


def test_olares015_gpu_inject_names_another_container(tree):
    swap(tree, "templates/deployment.yaml", 'gpu-inject: "engine"', 'gpu-inject: "model-fetch"')
    found = only(lint_chart(APP, tree), "OLARES015")
    assert {f.message.split("container ")[1] for f in found} == {"'engine' disagree", "'model-fetch' disagree"}


def test_olares016_missing_olares_dependency(tree):
    swap(tree, "OlaresManifest.yaml", "  - name: olares\n", "  - name: ollama\n")
    assert "no {name: olares, type: system" in only(lint_chart(APP, tree), "OLARES016")[0].message


# --- the olares-v2 profile (docs/profiles.md) --------------------------------------------------------------

@pytest.fixture
def v2tree() -> dict[str, str]:
    """The same app rendered with the olares-v2 profile: 0.10.0 / v2, flat spec resources, appData."""
    from generator.chart.plan import plan
    from generator.chart.render import render

    return render(plan(load_catalog(MARKET_CATALOG).apps[APP], profile="olares-v2"))


def test_v2_chart_lints_clean_and_keeps_the_v2_shape(v2tree):
    assert lint_chart(APP, v2tree) == []
    manifest = v2tree["OlaresManifest.yaml"]
    assert "apiVersion: v2" in manifest and "requiredGpu: 24300Mi" in manifest and "accelerator" not in manifest


def test_olares017_mixed_version_and_api_version(tree):
    swap(tree, "OlaresManifest.yaml", "olaresManifest.version: 0.12.0", "olaresManifest.version: 0.10.0")
    found = only(lint_chart(APP, tree), "OLARES017")
    assert "'0.10.0' with apiVersion 'v3'" in found[0].message and found[0].line == 2


def test_olares017_v3_manifest_that_admits_old_olares(tree):
    swap(tree, "OlaresManifest.yaml", "version: '>=1.12.6-0'", "version: '>=1.12.3-0'")
    found = lint_chart(APP, tree)
    assert ids(found) == {"OLARES017", "OLARES027"}  # OLARES027: the market's text check of the same line
    assert "admits Olares 1.12.3, which cannot install it" in [f for f in found if f.rule == "OLARES017"][0].message


def test_olares018_v2_cpu_in_millicores(v2tree):
    swap(v2tree, "OlaresManifest.yaml", "  requiredCpu: '4'\n", "  requiredCpu: 4000m\n")
    found = only(lint_chart(APP, v2tree), "OLARES018")
    assert "spec.requiredCpu '4000m' is not a whole number of cores" in found[0].message


def test_olares018_v3_cpu_in_millicores(tree):
    swap(tree, "OlaresManifest.yaml", "    requiredCpu: '4'\n", "    requiredCpu: 4000m\n")
    assert "spec.accelerator[0].requiredCpu '4000m'" in only(lint_chart(APP, tree), "OLARES018")[0].message


def test_olares014_v2_gpumem_differs_from_required_gpu(v2tree):
    swap(v2tree, "OlaresManifest.yaml", "requiredGpu: 24300Mi", "requiredGpu: 23Gi")
    found = only(lint_chart(APP, v2tree), "OLARES014")
    assert "24300 != requiredGpu 23552 MiB" in found[0].message


def test_olares010_v2_required_above_limited(v2tree):
    swap(v2tree, "OlaresManifest.yaml", "  requiredMemory: 4Gi\n", "  requiredMemory: 64Gi\n")
    found = only(lint_chart(APP, v2tree), "OLARES010")
    assert "spec: requiredMemory 64Gi exceeds limitedMemory 40Gi" in found[0].message


def test_v2_manifest_may_hold_template_directives(v2tree):
    """OLARES011 is a v3 rule: the maintainer's 0.10.0 manifests carry {{ if }} branches his build script strips."""
    swap(v2tree, "OlaresManifest.yaml", "\n  description: Gemma",
         "\n  description: \"{{ .Values.bfl.username }}\" # Gemma")
    assert "OLARES011" not in ids(lint_chart(APP, v2tree))


# --- reporting ----------------------------------------------------------------------------------------

def test_findings_can_point_at_the_catalog_file(tree):
    swap(tree, "templates/deployment.yaml", "    type: Recreate\n", "    type: RollingUpdate\n")
    found = only(lint_chart(APP, tree, file=f"catalog/apps/{APP}.yaml"), "OLARES008")
    assert found[0].file == f"catalog/apps/{APP}.yaml" and found[0].line is None
    assert found[0].message.startswith("templates/deployment.yaml: ")


def test_every_rule_is_documented_and_tested():
    doc = (REPO / "docs" / "rules.md").read_text(encoding="utf-8").split("\n## Catalog rules\n")[0]
    documented = set(re.findall(r"^\| (?:`)?([A-Z0-9]+\d{3})(?:`)? \|", doc, flags=re.M))
    assert documented == set(CHART_RULES)
    tests = Path(__file__).read_text(encoding="utf-8").lower()
    assert all(f"test_{rid.lower()}" in tests for rid in CHART_RULES)


def test_lint_leaves_no_temporary_folder(tree, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lint_chart(APP, tree)
    assert list(tmp_path.iterdir()) == []


def test_k8s002_document_without_kind(tree):
    tree["templates/orphan.yaml"] = "apiVersion: v1\nmetadata:\n  name: orphan\n"
    found = lint_chart(APP, tree)
    k8s002 = [f for f in found if f.rule == "K8S002"]
    assert k8s002 and "without apiVersion or kind" in k8s002[0].message
    assert ids(found) <= {"K8S002", "HELM001"}


def test_helm001_chart_without_chart_yaml(tree):
    del tree["Chart.yaml"]
    found = lint_chart(APP, tree)
    assert ids(found) == {"HELM001", "OLARES001"}
    assert any("Chart.yaml" in f.message for f in found if f.rule == "HELM001")


# --- olares-v3: the platform's 0.12.0 rules and the maintainer's validator, written as rules ------------------

MAN = "OlaresManifest.yaml"
I18N = "i18n/en-US/OlaresManifest.yaml"


def test_olares019_deprecated_appid(tree):
    swap(tree, MAN, "metadata:\n  name: gemma4e2bone\n", "metadata:\n  name: gemma4e2bone\n  appid: gemma4e2bone\n")
    found = only(lint_chart(APP, tree), "OLARES019")
    assert "metadata.appid is deprecated" in found[0].message and found[0].line is not None


def test_olares019_flat_resources_beside_the_accelerator(tree):
    swap(tree, MAN, "  accelerator:\n", "  requiredGpu: 1Gi\n  accelerator:\n")
    assert "spec.requiredGpu is deprecated" in only(lint_chart(APP, tree), "OLARES019")[0].message


def test_olares019_olares_111_category(tree):
    swap(tree, MAN, "  categories:\n  - AI\n", "  categories:\n  - AI\n  - Utilities\n")
    found = lint_chart(APP, tree)
    assert ids(found) == {"OLARES019", "OLARES024"}
    assert any("Olares 1.11 category" in f.message for f in found if f.rule == "OLARES019")


def test_olares020_nvidia_needs_amd64(tree):
    swap(tree, MAN, "  supportArch:\n  - amd64\n", "  supportArch:\n  - arm64\n")
    assert "mode nvidia requires spec.supportArch to contain 'amd64'" in only(lint_chart(APP, tree),
                                                                             "OLARES020")[0].message


def test_olares020_unknown_mode_and_gb10_without_gpu_memory(tree):
    swap(tree, MAN, "  - mode: nvidia\n", "  - mode: nvidia-gb10\n")
    found = [f.message for f in lint_chart(APP, tree) if f.rule == "OLARES020"]
    assert any("mode nvidia-gb10 requires spec.supportArch to contain 'arm64'" in m for m in found)
    assert any("requiredGPUMemory must be empty for mode nvidia-gb10" in m for m in found)


def test_olares020_incomplete_envelope(tree):
    swap(tree, MAN, "    requiredDisk: 15Gi\n", "")
    found = lint_chart(APP, tree)
    assert {"OLARES020", "OLARES025"} <= ids(found) <= {"OLARES010", "OLARES020", "OLARES025"}
    assert any("requiredDisk is required" in f.message for f in found if f.rule == "OLARES020")


def test_olares021_entrance_title_with_a_dot(tree):
    tree[MAN] = tree[MAN].replace("title: Gemma 4 E2B One", "title: Gemma 4.0 E2B One")
    found = only(lint_chart(APP, tree), "OLARES021")
    assert len(found) == 1 and "entrances[0].title 'Gemma 4.0 E2B One' holds '.'" in found[0].message


def test_olares021_title_too_long(tree):
    tree[MAN] = tree[MAN].replace("title: Gemma 4 E2B One", "title: " + "G" * 31)
    found = only(lint_chart(APP, tree), "OLARES021")
    assert {f.message.split(" ")[0] for f in found} == {"metadata.title", "entrances[0].title"}


def test_olares022_no_i18n(tree):
    del tree[I18N]
    assert "no i18n/<locale>/OlaresManifest.yaml" in only(lint_chart(APP, tree), "OLARES022")[0].message


def test_olares022_v2_locale_manifest_and_untranslated_fields(tree):
    tree["i18n/zh-CN/OlaresManifest.yaml"] = "olaresManifest.version: '0.10.0'\napiVersion: v2\nmetadata:\n" \
                                             "  title: x\n  icon: y\n"
    tree["i18n/fr-FR/README"] = "no manifest here\n"
    found = [f.message for f in only(lint_chart(APP, tree), "OLARES022")]
    assert any("is a v2 manifest" in m for m in found)
    assert any("metadata holds fields the Market does not translate" in m for m in found)
    assert any("i18n/fr-FR/ has no OlaresManifest.yaml" in m for m in found)


def test_olares023_only_admin(tree):
    swap(tree, MAN, "  supportArch:\n", "  onlyAdmin: true\n  supportArch:\n")
    assert "spec.onlyAdmin is true" in only(lint_chart(APP, tree), "OLARES023")[0].message


def test_olares023_shared(tree):
    swap(tree, MAN, "  LLMGatewaySupported: true\n", "  LLMGatewaySupported: true\n  shared: true\n")
    assert "options.shared is true" in only(lint_chart(APP, tree), "OLARES023")[0].message


def test_olares024_categories_other_than_ai(tree):
    swap(tree, MAN, "  categories:\n  - AI\n", "  categories:\n  - Developer Tools\n")
    assert "metadata.categories is ['Developer Tools']" in only(lint_chart(APP, tree), "OLARES024")[0].message


def test_olares025_not_an_nvidia_envelope(tree):
    swap(tree, MAN, "  - mode: nvidia\n", "  - mode: amd-gpu\n")
    found = [f for f in lint_chart(APP, tree) if f.rule == "OLARES025"]
    assert found and "1 entries (amd-gpu)" in found[0].message


def test_olares026_templated_deployment_name(tree):
    swap(tree, "templates/deployment.yaml", "metadata:\n  name: gemma4e2bone\n", "metadata:\n  name: {{ .Release.Name }}\n")
    assert "metadata.name is not written literally" in only(lint_chart(APP, tree), "OLARES026")[0].message


def test_olares026_two_deployments(tree):
    tree["templates/extra.yaml"] = tree["templates/deployment.yaml"].replace("name: gemma4e2bone\n", "name: other\n", 1)
    found = [f.message for f in lint_chart(APP, tree) if f.rule == "OLARES026"]
    assert any("2 Deployment templates" in m for m in found)


def test_olares027_dependency_double_quoted(tree):
    swap(tree, MAN, "version: '>=1.12.6-0'", 'version: ">=1.12.6-0"')
    assert "no line `version: '>=1.12.6-0'`" in only(lint_chart(APP, tree), "OLARES027")[0].message


def test_olares028_unknown_capability(tree):
    swap(tree, MAN, "  default: tools\n", "  default: tools,wings\n")
    assert "MODEL_SUPPORTS 'tools,wings'" in only(lint_chart(APP, tree), "OLARES028")[0].message


def test_olares028_flag_not_a_boolean(tree):
    swap(tree, MAN, "  LLMGatewaySupported: true\n", "  LLMGatewaySupported: 'yes'\n")
    assert "is not a boolean" in only(lint_chart(APP, tree), "OLARES028")[0].message


def test_v2_chart_skips_the_v3_rules():
    """The olares-v3 rules read the chart's own profile: a v2 render of the same app raises none of them."""
    from generator.chart.plan import plan
    from generator.chart.render import render

    resolved = next(r for r in load_catalog(MARKET_CATALOG).select() if r.app.name == APP)
    v2 = render(plan(resolved, profile="olares-v2"))
    assert I18N not in v2 and "apiVersion: v2" in v2[MAN]
    assert lint_chart(APP, v2) == []


def test_olares029_entrance_with_an_unknown_auth_level(tree):
    swap(tree, "OlaresManifest.yaml", "authLevel: internal", "authLevel: everyone")
    found = [f for f in lint_chart(APP, tree) if f.rule == "OLARES029"]
    assert found and "authLevel 'everyone' must be one of" in found[0].message


def test_oac001_the_platforms_validator_refuses_the_chart(tree, tmp_path, monkeypatch):
    """A stand-in for the oaclint binary (the real one cannot be built while the Go module proxy refuses oac): it
    answers as tools/oaclint/main.go does, refusing every chart; OAC001 carries its message."""
    from generator.lint import oac

    script = tmp_path / "oaclint"
    script.write_text('#!/bin/sh\necho "$1: manifest: entrances[0].authLevel must be one of ..."\nexit 1\n')
    script.chmod(0o755)
    monkeypatch.setenv("CATALOG_OACLINT", str(script))
    oac.validator.cache_clear()
    try:
        found = [f for f in lint_chart(APP, tree) if f.rule == "OAC001"]
    finally:
        oac.validator.cache_clear()
    assert len(found) == 1 and found[0].severity == "error"
    assert "manifest: entrances[0].authLevel must be one of" in found[0].message and str(tmp_path) not in found[0].fix


def test_shared001_a_shared_chart_is_v3_only_admin_with_a_shared_entrance(tree):
    """A chart that declares options.shared without onlyAdmin or a shared entrance is refused in a store of the shared
    form (docs/forms.md); the single form's OLARES023 does not fire there."""
    swap(tree, "OlaresManifest.yaml", "options:\n  apiTimeout: 0\n", "options:\n  shared: true\n  apiTimeout: 0\n")
    found = only(lint_chart(APP, tree, form="shared"), "SHARED001")
    assert {f.message for f in found} == {"options.shared is true but spec.onlyAdmin is not true",
                                          "options.shared is true but there is no sharedEntrances entry"}
    assert "OLARES023" in ids(lint_chart(APP, tree))
