"""A chart's `metadata.bento.hero` figure is kept as a benchmark only for the device its label names, or for the
app's own device, said as taken, when it names none (issue 38 item 5, found importing
github.com/coynntis/olares-one-market@cb991c8f: the Nemotron diffusion chart's `self-spec ref RTX 3090` figure was
recorded as "the maintainer's measurement on Olares One"). Charts are written here (tests/importer/olares_charts.py
shapes); the importer and the Helm engine are real."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import olares_charts as oc

from generator.catalog import load_catalog
from generator.importer import import_paths
from generator.importer.bento import named_device
from generator.schema import Device
from generator.yamlio.loader import read_document


def _hero_chart(root: Path, label: str) -> Path:
    folder = oc.llamacpp_chart(root)
    manifest = folder / "OlaresManifest.yaml"
    bento = f'  bento:\n    hero:\n      value: "50 t/s"\n      label: "{label}"\n'
    manifest.write_text(manifest.read_text().replace("  categories:\n", bento + "  categories:\n", 1))
    return folder


def _import(catalog: Path, chart: Path) -> tuple[Any, dict]:
    """The import's result and the app file it wrote."""
    report = import_paths([chart], load_catalog(catalog))
    assert report.ok and report.results[0].status == "ok", (report.problems, report.results[0].missing)
    return report.results[0], read_document(catalog / "apps" / "marketqwen.yaml").data


def test_a_figure_on_a_device_the_catalog_lacks_is_no_benchmark(catalog, tmp_path):
    result, app = _import(catalog, _hero_chart(tmp_path / "in", "self-spec ref RTX 3090"))
    assert "benchmarks" not in app
    said = [u for u in result.unmapped if "metadata.bento.hero" in u]
    assert len(said) == 1 and "50 t/s (self-spec ref RTX 3090)" in said[0] and "RTX 3090 (not a catalog device)" \
        in said[0], said
    tail = said[0].split("OlaresManifest.yaml:", 1)[1]
    assert [u for u in app["unmapped"] if u.endswith(tail)]  # in the app's file, not only in the report


def test_a_figure_on_another_catalog_device_is_no_benchmark_of_this_app(catalog, tmp_path):
    other = (catalog / "devices" / "lab-4090.yaml").read_text().replace("id: lab-4090", "id: lab-3090")
    (catalog / "devices" / "lab-3090.yaml").write_text(other.replace("name: Lab RTX 4090", "name: Lab RTX 3090")
                                                       .replace("gpu: NVIDIA GeForce RTX 4090",
                                                                "gpu: NVIDIA GeForce RTX 3090"))
    result, app = _import(catalog, _hero_chart(tmp_path / "in", "self-spec ref RTX 3090"))
    assert app["device"] == "lab-4090" and "benchmarks" not in app
    assert any("a figure on RTX 3090 (lab-3090, not the app's device lab-4090)" in u for u in result.unmapped)


def test_a_figure_whose_label_names_no_device_is_the_apps_device_and_says_so(catalog, tmp_path):
    _, app = _import(catalog, _hero_chart(tmp_path / "in", "speed @ 262K"))
    (bench,) = app["benchmarks"]
    assert bench["tokens_per_s"] == 50.0 and bench["date"] == dt.date.today()
    assert "(speed @ 262K)" in bench["method"]
    assert "its label names no device: taken as a figure on the app's device Lab RTX 4090" in bench["method"]
    assert "Olares One" not in bench["method"] and "maintainer" not in bench["method"]


def test_a_figure_on_the_apps_own_device_is_kept_in_the_labels_words(catalog, tmp_path):
    _, app = _import(catalog, _hero_chart(tmp_path / "in", "speed on rtx 4090"))
    (bench,) = app["benchmarks"]
    assert "a figure on Lab RTX 4090, as its label names it" in bench["method"]


def _device(ident: str, name: str, gpu: str) -> Device:
    return Device.model_validate({"id": ident, "name": name, "gpu": gpu, "arch": "sm_86", "memory_mib": 24576,
                                  "hami_cap_mib": 24000, "gpu_sharing": "HAMi",
                                  "sources": ({"ref": "tests (test data)", "note": "a device of this test"},)})


def test_the_device_a_label_names():
    one = _device("olares-one", "Olares One", "NVIDIA GeForce RTX 5090 Mobile (GDDR7)")
    r3090 = _device("rtx-3090", "RTX 3090", "NVIDIA GeForce RTX 3090")
    r5090 = _device("rtx-5090", "RTX 5090", "NVIDIA GeForce RTX 5090")
    devices = [one, r3090, r5090]
    found = named_device("self-spec ref RTX 3090", devices, one)
    assert found is not None and found.device is r3090 and found.words == "RTX 3090"
    found = named_device("162 t/s on RTX 5090 Mobile", devices, one)  # the longest spelling: the Olares One's GPU
    assert found is not None and found.device is one
    found = named_device("measured on an olares one", devices, one)
    assert found is not None and found.device is one
    found = named_device("H100 reference", devices, one)
    assert found is not None and found.device is None and found.words == "H100"
    for label in ("speed @ 262K", "Qwen3-235B-A22B · 35B-A3B", "MTP n=5 + vision @ 192K", "Q4_K_M + cpu-moe",
                  "fp8 KV · video on", "UD-IQ2_XXS + cpu-moe", "DFlash n=6 · 72% accept · vision · 128K"):
        assert named_device(label, devices, one) is None, label
