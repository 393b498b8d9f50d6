"""Every entry `catalog serve` answers equals what the maintainer's build script produces for the same chart.

Checked three ways:
- over HTTP, for every app of the market fixture (the catalog frozen with olares-v3 charts; the live
  embedded catalog, olares-v2, is checked the same way in tests/test_embedded_catalog.py), against `reference_entry`, a
  re-implementation of build-catalog.js's documented rules in tests/support/market.py that shares no code with
  generator/publish/market_entry.py;
- the same charts rewritten in the olares-v2 form (flat requiredCpu/Memory/Disk/Gpu, as the maintainer's
  market and beclab/apps write them) give the same entries: both profiles read alike;
- against the real script, when a checkout of github.com/aamsellem/orales-one-market is named by
  ORALES_MARKET and node can load js-yaml (skipped otherwise): its catalog.json for our v2 charts equals ours
  byte for byte once its build-time stamps are replaced by the release dates.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.market import (
    chart_dirs,
    package_tree,
    ids_in_batches,
    ref_bytes,
    ref_cpu,
    ref_id,
    reference_entry,
    to_v2,
)

from generator.chart.writer import read_tree
from generator.publish.market import Released, build_market
from generator.publish.market_entry import (
    parse_bytes,
    parse_cpu,
    read_chart,
    strip_helm_templates,
)
from generator.versions.releases import Release, load_releases
from generator.versions.state import content_hash


def _expected(store: Path) -> dict[str, tuple[dict, dict]]:
    releases = load_releases(store / "catalog")
    out = {}
    for chart in chart_dirs(store / "charts"):
        rel = releases.latest(chart.name)
        summary, detail = reference_entry(chart, rel.date)
        out[summary["id"]] = (summary, detail)
    return out


def test_every_app_answers_the_script_entry_over_http(store, served):
    expected = _expected(store)
    assert len(expected) == len(list((store / "catalog" / "apps").glob("*.yaml")))
    info = served.get("/api/v1/appstore/info?version=1.12.6").json()
    assert info["data"]["apps"] == {i: s for i, (s, _) in expected.items()}
    got = {}
    for batch in ids_in_batches(sorted(info["data"]["apps"])):
        answer = served.post("/api/v1/applications/info", json={"app_ids": batch, "version": "1.12.6"}).json()
        assert "not_found" not in answer and answer["version"] == "1.12.6"
        got.update(answer["apps"])
    for ident, (_, detail) in expected.items():
        assert got[ident] == detail, ident
        assert list(got[ident]) == list(detail)  # the script's field order (the hash reads it)
    for detail in got.values():  # no "0" resource left: the v3 accelerator figures were read
        assert all(detail[k] not in ("0", "") for k in ("requiredCPU", "requiredMemory", "requiredDisk", "requiredGPU"))


def test_the_v2_form_of_the_same_charts_gives_the_same_entries(store, tmp_path):
    """olares-v2 (flat fields) and olares-v3 (accelerator) manifests of one app read alike."""
    releases = load_releases(store / "catalog")
    v3, v2 = [], []
    for chart in chart_dirs(store / "charts"):
        rel = releases.latest(chart.name)
        copy = tmp_path / chart.name
        shutil.copytree(chart, copy)
        to_v2(copy)
        assert "accelerator" not in (copy / "OlaresManifest.yaml").read_text()
        v3.append(Released(chart.name, rel.version, read_tree(chart), rel.date, b""))
        v2.append(Released(chart.name, rel.version, read_tree(copy), rel.date, b""))
        assert read_chart(read_tree(copy), chart.name).manifest.profile == "olares-v2"
        assert read_chart(read_tree(chart), chart.name).manifest.profile == "olares-v3"
        assert reference_entry(copy, rel.date) == reference_entry(chart, rel.date)
    a, b = build_market(v3, {}), build_market(v2, {})
    assert a.details() == b.details() and a.summaries() == b.summaries() and a.hash == b.hash


MANIFEST_V2 = """\
olaresManifest.version: '0.10.0'
olaresManifest.type: app
apiVersion: 'v2'
metadata:
  name: demoone
  icon: https://example.invalid/icons/demoone.png
  description: A demo app in the maintainer's form
  appid: demoone
  title: Demo One
  version: '1.0.7'
  categories:
    - AI
entrances:
  - name: demoone
    port: 8080
    host: demoone
    title: Demo One
{{- if and .Values.admin .Values.bfl.username (eq .Values.admin .Values.bfl.username) }}
    authLevel: internal
{{- else }}
    authLevel: private
{{- end }}
spec:
  versionName: '1.0.3'
  fullDescription: |
    Line one.
    Line two with {{ .Values.secret }} removed.
  developer: someone
  limitedCpu: 16
  requiredCpu: 4000m
  requiredDisk: 30Gi
  requiredMemory: 24Gi
  requiredGpu: 1536Mi
  supportArch:
    - amd64
permission:
  appData: true
options:
  apiTimeout: 0
  dependencies:
    - name: olares
      version: '>=1.12.3-0'
      type: system
"""


def test_a_v2_manifest_with_helm_branches_and_i18n(tmp_path):
    chart = tmp_path / "demoone"
    (chart / "i18n" / "zh-CN").mkdir(parents=True)
    (chart / "i18n" / "en-US").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demoone\nversion: '1.0.7'\nappVersion: '1.0.6'\n")
    (chart / "OlaresManifest.yaml").write_text(MANIFEST_V2)
    (chart / "i18n" / "zh-CN" / "OlaresManifest.yaml").write_text("metadata:\n  title: 演示\n  description: 一个演示\n"
                                                                 "spec:\n  fullDescription: 全文\n")
    (chart / "i18n" / "en-US" / "OlaresManifest.yaml").write_text("metadata:\n  title: Demo One\n")
    build = build_market([Released("demoone", "1.0.7", read_tree(chart), "2026-05-21", b"x")], {})
    detail = build.details()[ref_id("demoone")]
    assert detail == reference_entry(chart, "2026-05-21")[1]
    assert (detail["requiredCPU"], detail["requiredMemory"], detail["requiredDisk"], detail["requiredGPU"]) == (
        "4", "25769803776", "32212254720", "1610612736")
    assert detail["entrances"][0]["authLevel"] == "internal"  # the admin branch is kept
    assert detail["fullDescription"] == "Line one.\nLine two with  removed.\n"
    assert detail["locale"] == ["en-US", "zh-CN"] and detail["i18n"]["zh-CN"]["metadata"]["title"] == "演示"
    assert detail["versionName"] == "1.0.3" and detail["versionHistory"][0]["versionName"] == "1.0.6"
    assert detail["chartName"] == "demoone-1.0.7.tgz" and detail["submitter"] == "orales-market"


@pytest.mark.parametrize("value", ["4000m", "500m", "1500m", 4, "4", 0, None, "", "2.5", "333m"])
def test_cpu_conversion_matches_the_rule(value):
    assert parse_cpu(value) == ref_cpu(value)


@pytest.mark.parametrize("value", ["24Gi", "24300Mi", "512Ki", "1Ti", "1.5Gi", "1000", "1G", 0, None, "", 25769803776])
def test_byte_conversion_matches_the_rule(value):
    assert parse_bytes(value) == ref_bytes(value)


def test_strip_keeps_the_if_branch_and_drops_inline_expressions():
    text, lines = strip_helm_templates("a: 1\n{{ if x }}\nb: 2\n{{ else }}\nb: 3\n{{ end }}\nc: {{ .V }}x\n")
    assert text == "a: 1\nb: 2\nc: x\n" and lines == [1, 3, 7, 8]


def test_a_broken_manifest_names_its_file_and_line(tmp_path):
    from generator.core.errors import InputError

    tree = {"Chart.yaml": "name: x\nversion: 1.0.0\n", "OlaresManifest.yaml": "metadata:\n  name: x\n  title: [oops\n"}
    with pytest.raises(InputError) as err:
        read_chart(tree, "x", "charts/x")
    assert "charts/x/OlaresManifest.yaml" in str(err.value) and "not valid YAML" in str(err.value)


# ---- against the real script (opt-in) --------------------------------------------------------------------

REAL = os.environ.get("ORALES_MARKET")


@pytest.mark.skipif(not REAL, reason="set ORALES_MARKET to a checkout of github.com/aamsellem/orales-one-market "
                                     "(with js-yaml in its node_modules) to compare with the real build script")
def test_the_real_build_script_writes_the_same_catalog(store, tmp_path):
    from support.market import node_with_js_yaml

    checkout = Path(REAL)
    script = checkout / "scripts" / "build-catalog.js"
    node = node_with_js_yaml(checkout)
    if not script.is_file() or node is None:
        pytest.skip(f"{script} or node with js-yaml is missing")
    work = tmp_path / "market"
    (work / "scripts").mkdir(parents=True)
    (work / "src").mkdir()
    shutil.copy(script, work / "scripts")
    releases = load_releases(store / "catalog")
    ours = []
    for chart in chart_dirs(store / "charts"):
        shutil.copytree(chart, work / chart.name)
        to_v2(work / chart.name)
        rel = releases.latest(chart.name)
        ours.append(Released(chart.name, rel.version, read_tree(work / chart.name), rel.date, b""))
    env = {**os.environ, "NODE_PATH": os.pathsep.join(filter(None, [str(checkout / "node_modules"),
                                                                     os.environ.get("NODE_PATH")]))}
    done = subprocess.run([node, str(work / "scripts" / "build-catalog.js")], check=False, cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    theirs = (work / "src" / "catalog.json").read_text(encoding="utf-8")
    build = build_market(ours, {})
    data = json.loads(theirs)
    stamps = {e.summary.name: e.summary.updated_at for e in build.entries}
    for section in ("summaries", "details"):
        for entry in data[section].values():
            theirs = theirs.replace(entry["updated_at"], stamps[entry["name"]])
    from generator.publish.market import payload_hash

    normalised = json.loads(theirs)
    their_hash = payload_hash(normalised["summaries"], normalised["details"], normalised["latest"])
    assert their_hash == build.hash
    assert theirs.replace(data["hash"], their_hash) == build.catalog_json()


def test_served_charts_are_the_recorded_content(store, served):
    """Each listed version downloads as a Helm package whose content is the one releases.yaml records."""
    
    releases = load_releases(store / "catalog")
    info = served.get("/api/v1/appstore/info").json()
    answer = served.post("/api/v1/applications/info", json={"app_ids": list(info["data"]["apps"])}).json()
    for detail in answer["apps"].values():
        got = served.get(f"/api/v1/applications/{detail['name']}/chart", params={"fileName": detail["chartName"]})
        assert got.status_code == 200 and got.headers["content-type"] == "application/gzip"
        rec: Release = releases.get(detail["name"], detail["version"])
        assert content_hash(package_tree(got.content)) == rec.content
