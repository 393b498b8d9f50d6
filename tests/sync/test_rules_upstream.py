"""MKT002/MKT003 (one content per version, apps upstream removed), MEAS001 (measured beats modeled), IMG001
(floating tags) and publish's refusal, on copies of tests/fixtures/catalog_small."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.chart.pipeline import render_app
from generator.publish.core import Item, upstream_refusal
from generator.rules import context, run_rules
from generator.rules.tags import floating
from generator.rules.versions_upstream import chart_digest, version_refusal
from generator.schema.upstream import SyncFile, SyncRecord

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
OTHER = "sha256:" + "0" * 64


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    return dest


def findings(catalog: Path, app: str, rule_id: str) -> list:
    cat = load_catalog(catalog)
    return [f for f in run_rules(context(cat.apps[app], cat)) if f.rule == rule_id]


def record(catalog: Path, text: str) -> None:
    (catalog / "sync.yaml").write_text(f"upstream: a test\napps:\n{text}")


def test_version_refusal_below_at_and_above_upstream():
    rec = SyncRecord(version="1.0.4", chart=OTHER)
    assert "below upstream's newest 1.0.4" in version_refusal("a", "1.0.3", OTHER, rec)
    assert "one version, one content" in version_refusal("a", "1.0.4", "sha256:" + "1" * 64, rec)
    assert version_refusal("a", "1.0.4", OTHER, rec) is None
    assert version_refusal("a", "1.0.5", "sha256:" + "1" * 64, rec) is None


def test_chart_digest_ignores_line_endings_and_trailing_blanks_only():
    assert chart_digest({"a.yaml": "x: 1  \r\ny: 2\n"}) == chart_digest({"a.yaml": "x: 1\ny: 2"})
    assert chart_digest({"a.yaml": "x: 1\n"}) != chart_digest({"a.yaml": "x: 2\n"})


def test_mkt002_fails_an_app_at_upstream_version_with_other_content(catalog):
    version = load_catalog(catalog).apps["qwenlab"].app.version
    record(catalog, f"  qwenlab: {{version: '{version}', chart: '{OTHER}'}}\n")
    [finding] = findings(catalog, "qwenlab", "MKT002")
    assert finding.severity == "error" and "one version, one content" in finding.message


def test_mkt002_passes_upstream_own_chart_and_a_version_above(catalog):
    cat = load_catalog(catalog)
    r = cat.apps["qwenlab"]
    spec = context(r, cat).chart
    from generator.chart.render import render

    digest = chart_digest(render(spec))
    record(catalog, f"  qwenlab: {{version: '{r.app.version}', chart: '{digest}'}}\n")
    assert findings(catalog, "qwenlab", "MKT002") == []
    record(catalog, f"  qwenlab: {{version: '0.0.1', chart: '{OTHER}'}}\n")
    assert findings(catalog, "qwenlab", "MKT002") == []


def test_mkt003_fails_an_app_upstream_removed(catalog):
    record(catalog, "  qwenlab: {version: '1.0.0', status: removed}\n")
    [finding] = findings(catalog, "qwenlab", "MKT003")
    assert "upstream removed qwenlab" in finding.message


def test_meas001_warns_when_the_chart_overrides_a_measurement(catalog):
    app = catalog / "apps" / "qwenlab.yaml"
    app.write_text(app.read_text() + "measured:\n- {field: context_length, value: '131072', note: booted at 131072 "
                   "tokens, source: a test}\n")
    [finding] = findings(catalog, "qwenlab", "MEAS001")
    assert "65536 in the chart" in finding.message and "measured 131072" in finding.message
    assert "catalog calibrate qwenlab" in finding.fix


def test_meas001_warns_with_both_numbers_when_the_fit_disagrees(catalog):
    app = catalog / "apps" / "qwenlab.yaml"
    app.write_text(app.read_text() + "measured:\n- {field: gpu_memory_mib, value: '23000', note: held 99K tokens, "
                   "source: a test}\n")
    [finding] = findings(catalog, "qwenlab", "MEAS001")
    assert "the fit models" in finding.message and "measured 23000" in finding.message
    assert "kept" in finding.message


@pytest.mark.parametrize("image, word", [
    ("vllm/vllm-openai:cu129-nightly-x86_64", "nightly"), ("vllm/vllm-openai:cu130-nightly", "nightly"),
    ("example.org/x/y", "latest"), ("localhost:5000/x:main", "main"), ("x/y:master", "master"),
    ("vllm/vllm-openai:nightly-1acd67a795ebccdf9b9db7697ae9082058301657", None),
    ("docker.io/aamsellem/llama-cpp-mtp:master-ad27757", None), ("x/y:latest@sha256:" + "a" * 64, None),
    ("vllm/vllm-openai:v0.22.1-x86_64-cu129-ubuntu2404", None), ("x/y:mainline-2", None)])
def test_floating_tags(image, word):
    assert floating(image) == word


def test_img001_fails_a_floating_stack_image(catalog):
    stack = catalog / "stacks" / "vllm-nightly.yaml"
    stack.write_text(stack.read_text().replace("nightly-1acd67a795ebccdf9b9db7697ae9082058301657", "cu130-nightly"))
    [finding] = findings(catalog, "gemmalab", "IMG001")
    assert finding.severity == "error" and "2026-06-14" in finding.message
    assert findings(catalog, "qwenlab", "IMG001") == []


def test_publish_refuses_what_upstream_forbids(catalog):
    r = load_catalog(catalog).apps["qwenlab"]
    tree = render_app(r)
    item = Item(r.app.name, r.app.version, "active", tree, None, "2026-01-01")
    same = SyncFile(upstream="t", apps={"qwenlab": SyncRecord(version=r.app.version, chart=chart_digest(tree))})
    assert upstream_refusal(item, same) is None
    other = SyncFile(upstream="t", apps={"qwenlab": SyncRecord(version=r.app.version, chart=OTHER)})
    assert "one version, one content" in upstream_refusal(item, other)
    gone = SyncFile(upstream="t", apps={"qwenlab": SyncRecord(version="1.0.0", status="removed")})
    assert "not listed again" in upstream_refusal(item, gone)
    assert upstream_refusal(item, None) is None
