"""Metadata kept through import, sync and render (issue 23 item 4): license, website, sourceCode, developer and
submitter, versionName = the app's version, and the `metadata.bento` hero speed as the app's benchmark. Upstream
charts are written by the tests (tests/importer/olares_charts.py shapes); the importer, the Helm engine and the
renderer are real."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importer"))
import olares_charts as oc  # noqa: E402

from generator.catalog import load_catalog  # noqa: E402
from generator.cli import main  # noqa: E402
from generator.importer import import_paths  # noqa: E402
from generator.importer.manifest import bento_benchmark  # noqa: E402
from generator.yamlio.loader import read_document  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
BENTO = """  bento:
    family: qwen
    hero:
      value: "77 t/s"
      label: "speed @ 262K"
    specs:
      - { label: "context", value: "128K" }
      - { label: "vram", value: "20 GB" }
    capabilities:
      mtp: { enabled: true, accept: 75 }
"""
SPEC = """  sourceCode: https://github.com/example/llama.cpp/tree/mtp
  license:
    - text: MIT
      url: https://github.com/ggml-org/llama.cpp/blob/master/LICENSE
"""


def chart(root: Path, version: str, *, bento: bool = True, developer: str = "labmaintainer") -> Path:
    folder = oc.llamacpp_chart(root, context=65536, version=version)
    manifest = folder / "OlaresManifest.yaml"
    text = manifest.read_text().replace("  categories:\n", (BENTO if bento else "") + "  categories:\n", 1)
    text = text.replace("  locale:\n", SPEC + "  locale:\n", 1)
    text = text.replace("  developer: labmaintainer\n", f"  developer: {developer}\n", 1)
    manifest.write_text(text)
    return folder


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    return dest


def with_bandwidth(catalog: Path) -> None:
    """The fixture's card with its memory bandwidth: a figure can be checked against the roofline (without one, no
    upstream figure becomes a benchmark)."""
    device = catalog / "devices" / "lab-4090.yaml"
    device.write_text(device.read_text() + "memory_bandwidth_gb_s: 1008\n")


def app_file(catalog: Path, name: str = "marketqwen") -> dict:
    return read_document(catalog / "apps" / f"{name}.yaml").data


def test_the_import_keeps_links_license_developer_and_the_bento_speed(catalog, tmp_path):
    report = import_paths([chart(tmp_path / "in", "1.0.3", developer="someoneelse")], load_catalog(catalog))
    assert report.ok, report.problems
    app = app_file(catalog)
    assert app["website"] == "https://example.org/marketqwen"
    assert app["source_code"] == "https://github.com/example/llama.cpp/tree/mtp"
    assert list(app["license"]) == [{"text": "MIT", "url": "https://github.com/ggml-org/llama.cpp/blob/master/LICENSE"}]
    assert app["developer"] == "someoneelse" and "submitter" not in app  # the submitter is the first owner
    bench = app["benchmarks"][0]
    assert bench["tokens_per_s"] == 77.0 and bench["acceptance"] == 0.75
    # "speed @ 262K" and the context spec are the server's --ctx-size, not the prompt the speed was measured at
    assert "context" not in bench and "prompt length not stated" in bench["method"]
    assert isinstance(bench["date"], dt.date) and "metadata.bento" in bench["method"]
    assert "OlaresManifest.yaml:" in bench["source"]


def test_the_render_writes_them_and_version_name_is_the_apps_version(catalog, tmp_path, capsys):
    assert import_paths([chart(tmp_path / "in", "1.0.3", developer="someoneelse")], load_catalog(catalog)).ok
    out = tmp_path / "charts"
    assert main(["render", "--catalog", str(catalog), "--out", str(out)]) == 0
    spec = read_document(out / "marketqwen" / "OlaresManifest.yaml").data["spec"]
    chart_yaml = read_document(out / "marketqwen" / "Chart.yaml").data
    assert str(spec["versionName"]) == "1.0.3" == str(chart_yaml["appVersion"])
    assert spec["website"] == "https://example.org/marketqwen"
    assert spec["sourceCode"] == "https://github.com/example/llama.cpp/tree/mtp"
    assert list(spec["license"]) == [{"text": "MIT", "url": "https://github.com/ggml-org/llama.cpp/blob/master/LICENSE"}]
    assert spec["developer"] == "someoneelse" and spec["submitter"] == "labmaintainer"


def test_a_sync_adds_upstreams_new_measured_speed_typed(catalog, tmp_path, capsys):
    with_bandwidth(catalog)
    assert import_paths([chart(tmp_path / "first", "1.0.3", bento=False)], load_catalog(catalog)).ok
    assert "benchmarks" not in app_file(catalog)
    capsys.readouterr()
    assert main(["sync", str(chart(tmp_path / "up", "1.0.4").parent), "--catalog", str(catalog), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    change = next(c for a in plan["apps"] if a["app"] == "marketqwen" for c in a["changes"]
                  if c["field"] == "benchmarks")
    assert change["theirs"] == 77.0 and change["kind"] == "lands"
    bench = app_file(catalog)["benchmarks"][0]
    assert bench["tokens_per_s"] == 77.0 and isinstance(bench["date"], dt.date)
    assert "runs" not in bench
    load_catalog(catalog)
    capsys.readouterr()
    assert main(["list", "--catalog", str(catalog), "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out) if r["name"] == "marketqwen")
    assert row["tokens_per_s"] == 77.0  # the recorded speed is listed


def test_a_short_prompt_speed_above_the_full_context_roof_is_recorded(catalog, tmp_path, capsys):
    """A hero speed the roofline at the server's whole context could not reach is still a measurement (his benches
    run a short prompt): only a figure above the empty-cache bound, the bound of every prompt, is refused."""
    from generator.fit.roofline import roofline

    with_bandwidth(catalog)  # the roofline exists
    assert import_paths([chart(tmp_path / "first", "1.0.3", bento=False)], load_catalog(catalog)).ok
    resolved = next(iter(load_catalog(catalog).select(["marketqwen"])))
    full = roofline(resolved, 65536, acceptance=0.75)
    empty = roofline(resolved, 0, acceptance=0.75)
    assert full is not None and empty is not None and full.bound_tps < empty.bound_tps
    speed = round((full.bound_tps + empty.bound_tps) / 2, 1)  # above the full-context bound, under the empty one

    def synced(version: str, hero: float) -> dict:
        """The benchmarks change of a sync onto upstream's chart `version` whose bento hero speed is `hero`."""
        up = chart(tmp_path / f"up-{version}", version)
        manifest = up / "OlaresManifest.yaml"
        manifest.write_text(manifest.read_text().replace('value: "77 t/s"', f'value: "{hero} t/s"'))
        capsys.readouterr()
        assert main(["sync", str(up.parent), "--catalog", str(catalog), "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        return next(c for a in plan["apps"] if a["app"] == "marketqwen" for c in a["changes"]
                    if c["field"] == "benchmarks")

    change = synced("1.0.4", speed)
    assert change["theirs"] == speed and change["kind"] == "lands", change
    assert app_file(catalog)["benchmarks"][0]["tokens_per_s"] == speed

    change = synced("1.0.5", round(empty.bound_tps * 1.5, 1))
    assert change["kind"] == "conflict" and "roofline" in change["reason"]


def test_an_unchanged_chart_with_a_new_measured_speed_gets_the_benchmark_written(catalog, tmp_path, capsys):
    """Upstream's chart is the one the last sync saw; only the app file lacks its bento speed (an older import did
    not read it): the plan says it lands, and the sync writes it, with no new version (a benchmark is no chart
    content)."""
    with_bandwidth(catalog)
    up = chart(tmp_path / "up", "1.0.3")
    assert main(["sync", str(up.parent), "--catalog", str(catalog)]) == 0  # new
    assert main(["sync", str(up.parent), "--catalog", str(catalog)]) == 0  # ours differs at 1.0.3: goes above
    data = app_file(catalog)
    version = data["version"]
    path = catalog / "apps" / "marketqwen.yaml"
    text = path.read_text()
    start = text.index("benchmarks:\n")
    end = start + len("benchmarks:\n")
    while end < len(text) and text[end] in " -\n" or text[end:end + 4] == "    ":
        end = text.index("\n", end) + 1
    path.write_text(text[:start] + text[end:])  # the benchmark an older import did not record
    assert "benchmarks" not in app_file(catalog)
    capsys.readouterr()
    assert main(["sync", str(up.parent), "--catalog", str(catalog), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    row = next(a for a in plan["apps"] if a["app"] == "marketqwen")
    assert row["status"] == "unchanged"
    assert [c["kind"] for c in row["changes"] if c["field"] == "benchmarks"] == ["lands"]
    data = app_file(catalog)
    assert data["benchmarks"][0]["tokens_per_s"] == 77.0 and data["version"] == version


@pytest.mark.parametrize("hero", [{"value": "53.6%", "label": "swe-bench verified"},
                                  {"value": "30s", "label": "audio input max"}, {"value": "GLM-4.7"}])
def test_a_hero_that_is_not_a_speed_is_no_benchmark(hero):
    assert bento_benchmark({"hero": hero}, "x/OlaresManifest.yaml:9", dt.date(2026, 12, 2)) is None


V3_NOTES = "  upgradeDescription: 'v1.0.1: guard HF_ENDPOINT with {{- if .Values.olaresEnv.X }} (literal text)'\n"


def test_a_v3_manifest_is_read_as_plain_yaml_its_braces_literal(catalog, tmp_path):
    """The import reads a 0.12.0 / v3 manifest as Olares does: `{{` in its upgrade notes is text, not a template."""
    folder = oc.llamacpp_chart(tmp_path / "in", context=65536, version="1.0.3")
    manifest = folder / "OlaresManifest.yaml"
    text = manifest.read_text().replace("olaresManifest.version: '0.10.0'", "olaresManifest.version: '0.12.0'")
    text = text.replace("apiVersion: 'v2'", "apiVersion: 'v3'").replace("spec:\n", "spec:\n" + V3_NOTES, 1)
    manifest.write_text(text)
    report = import_paths([folder], load_catalog(catalog), dry_run=True)
    result = report.results[0]
    assert result.status != "error", result.problems
    assert result.app is not None and "{{- if .Values.olaresEnv.X }}" in (result.app.get("upgrade_description") or "")


def test_a_v2_manifest_stays_a_template(catalog, tmp_path):
    """An unclosed `{{- if` in a 0.10.0 manifest is refused: Olares renders that manifest as a Go template."""
    folder = oc.llamacpp_chart(tmp_path / "in", context=65536, version="1.0.3")
    manifest = folder / "OlaresManifest.yaml"
    manifest.write_text(manifest.read_text().replace("spec:\n", "spec:\n" + V3_NOTES, 1))
    report = import_paths([folder], load_catalog(catalog), dry_run=True)
    assert report.results[0].status == "error"
    assert any("OlaresManifest.yaml" in str(p) for p in report.results[0].problems)
