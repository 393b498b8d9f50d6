"""The platform's own validator as an oracle (issue 36 item 3).

The Go module proxy refused beclab/Olares framework/oac at the version beclab/market pins (README.md "The platform's
validator"), so oac cannot run here. Instead, oac's own test vectors for the 0.12.0 resource envelope
(beclab/Olares@10dc755bf1b666ff5723264aae3c171b5bda9173 framework/oac/internal/manifest/resources_test.go:
TestResourceMode_BadMode, TestRule1_ModeArchRequirement, TestRule2_*, TestRule3_NonGPUFamilyModesForbidGPU,
TestRule4_GPUMemoryAllowedModes, TestRule5_LimitGERequired, TestSectionComplete_*, TestRule7_*,
TestResourcesCheckApplies) are re-stated below as manifests and run through our ported rules
(generator/lint/olares.py OLARES010, OLARES019, OLARES020): each vector that oac refuses must be refused by ours,
naming the field oac names, and each it accepts must pass. Where CATALOG_OACLINT (or olares-cli) is present, the last
test runs the real validator over every chart of the embedded catalog.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.adapters.oac import Oac
from generator.lint import olares
from generator.lint.view import ChartView

from support.catalogs import REPO

FULL = {"requiredCpu": "100m", "limitedCpu": "200m", "requiredMemory": "100Mi", "limitedMemory": "200Mi",
        "requiredDisk": "1Gi", "limitedDisk": "2Gi"}  # oac fullCPUMemoryDisk()


def view(entries: list[dict[str, Any]], arch: tuple[str, ...] = ("amd64", "arm64"), version: str = "0.12.0",
         **spec: Any) -> ChartView:
    manifest = {"olaresManifest.version": version, "apiVersion": "v3" if version >= "0.12" else "v2",
                "metadata": {"name": "vec", "version": "1.0.0", "title": "Vec"},
                "spec": {"supportArch": list(arch), "accelerator": entries, **spec}}
    return ChartView("vec", {"OlaresManifest.yaml": yaml.safe_dump(manifest)}, manifest=manifest)


def messages(v: ChartView) -> list[str]:
    found = [*olares.v3_accelerator_modes(v), *olares.envelope(v), *olares.v3_deprecated(v)]
    return [i.message for i in found]


def gpu(entry: dict[str, str], required: str | None = "1Gi", limited: str | None = "1Gi") -> dict[str, str]:
    out = dict(entry)
    if required is not None:
        out["requiredGPUMemory"] = required
    if limited is not None:
        out["limitedGPUMemory"] = limited
    return out


def test_bad_mode_is_refused():  # TestResourceMode_BadMode
    assert any("'rocm-mi300' is not an accelerator mode" in m for m in messages(view([{"mode": "rocm-mi300"}])))


@pytest.mark.parametrize(("mode", "arch", "need"), [  # TestRule1_ModeArchRequirement
    ("nvidia", ("arm64",), "amd64"), ("nvidia", ("amd64",), None), ("amd-gpu", ("arm64",), "amd64"),
    ("nvidia-gb10", ("amd64",), "arm64"), ("mthreads-m1000", ("amd64",), "arm64"), ("cpu", ("amd64",), None)])
def test_mode_needs_its_architecture(mode, arch, need):
    entry = gpu(FULL) if mode in olares.GPU_MEMORY_MODES else dict(FULL)
    found = messages(view([{"mode": mode, **entry}], arch))
    if need is None:
        assert found == []
    else:
        assert any(f"requires spec.supportArch to contain {need!r}" in m for m in found), found


@pytest.mark.parametrize(("drop", "missing"), [("limitedGPUMemory", "limitedGPUMemory"),
                                               ("requiredGPUMemory", "requiredGPUMemory")])
def test_nvidia_pairs_its_gpu_memory(drop, missing):  # TestRule2_NvidiaModeRequiresGPUPair, ..._GPUModePairsGPU
    entry = {k: v for k, v in gpu(FULL, "8Gi", "8Gi").items() if k != drop}
    found = messages(view([{"mode": "nvidia", **entry}]))
    assert any(f"{missing} is required to declare a complete resource envelope" in m for m in found), found


def test_cpu_mode_with_a_complete_envelope_passes():  # TestRule2_NonGPUModeAcceptsCompleteEnvelope
    assert messages(view([{"mode": "cpu", **FULL}])) == []


@pytest.mark.parametrize("mode", ["cpu", "strix-halo", "apple-m", "nvidia-gb10", "mthreads-m1000"])
def test_modes_without_gpu_memory_refuse_it(mode):  # TestRule3_NonGPUFamilyModesForbidGPU, TestRule4_*
    arch = ("arm64",) if mode in ("nvidia-gb10", "mthreads-m1000") else ("amd64",)
    found = messages(view([{"mode": mode, **gpu(FULL, "8Gi", "8Gi")}], arch))
    assert any("requiredGPUMemory must be empty" in m for m in found), found


@pytest.mark.parametrize("mode", ["nvidia", "amd-gpu"])
def test_gpu_memory_modes_accept_it(mode):  # TestRule4_GPUMemoryAllowedModes
    assert messages(view([{"mode": mode, **gpu(FULL, "8Gi", "8Gi")}], ("amd64",))) == []


@pytest.mark.parametrize(("low", "high", "a", "b"), [("requiredCpu", "limitedCpu", "200m", "100m"),
                                                     ("requiredMemory", "limitedMemory", "200Mi", "100Mi")])
def test_limit_below_required_is_refused(low, high, a, b):  # TestRule5_LimitGERequired
    found = messages(view([{"mode": "cpu", **FULL, low: a, high: b}]))
    assert any(f"{low} {a} exceeds {high} {b}" in m for m in found), found


@pytest.mark.parametrize("field", list(FULL))
def test_each_missing_field_is_named(field):  # TestSectionComplete_InlineMissingFieldReported
    entry = {k: v for k, v in FULL.items() if k != field}
    found = messages(view([{"mode": "cpu", **entry}]))
    assert any(f"{field} is required to declare a complete resource envelope" in m for m in found), found


def test_an_empty_section_names_every_field():  # TestSectionComplete_EmptySectionRejected
    found = " ".join(messages(view([{"mode": "cpu"}])))
    for field in FULL:
        assert f"{field} is required to declare a complete resource envelope" in found


@pytest.mark.parametrize("legacy", ["requiredCpu", "limitedCpu", "requiredMemory", "limitedMemory", "requiredDisk",
                                    "limitedDisk", "requiredGpu", "limitedGpu"])
def test_legacy_flat_fields_beside_accelerator_entries(legacy):  # TestRule7_LegacySpecResourceFieldsRejected
    found = messages(view([{"mode": "cpu", **FULL}], **{legacy: "1"}))
    assert any(f"spec.{legacy} is deprecated" in m for m in found), found


@pytest.mark.parametrize(("version", "applies"), [("0.11.0", False), ("0.12.0", True), ("0.12.1", True)])
def test_the_version_gate(version, applies):  # TestResourcesCheckApplies: the cross-field rules from 0.12.0 on
    found = [i.message for i in olares.v3_accelerator_modes(view([{"mode": "nvidia", **FULL}], ("arm64",), version))]
    assert bool(found) is applies


# --- the adapter, and the real validator where it is here ------------------------------------------------------

def test_find_says_why_when_no_validator_is_here(tmp_path):
    found = Oac.find({"HOME": str(tmp_path), "PATH": str(tmp_path)})
    assert isinstance(found, str) and "olares-cli" in found and "oaclint" in found


def test_the_adapter_reads_the_validators_answer(tmp_path):
    """A stand-in for the oaclint binary (the real one cannot be built while the proxy refuses the module): a shell
    script that answers as tools/oaclint/main.go does, refusing a folder whose Chart.yaml lacks `version:`."""
    script = tmp_path / "oaclint"
    script.write_text('#!/bin/sh\nif grep -q "^version:" "$1/Chart.yaml"; then echo "$1: ok"; exit 0; fi\n'
                      'echo "$1: chart folder check: Chart.yaml version is required"; exit 1\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    found = Oac.find({"CATALOG_OACLINT": str(script)})
    assert isinstance(found, Oac)
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, text in ((good, "name: good\nversion: 1.0.0\n"), (bad, "name: bad\n")):
        folder.mkdir()
        (folder / "Chart.yaml").write_text(text)
    assert found.lint(good).error is None
    assert found.lint(bad).error == "chart folder check: Chart.yaml version is required"


def test_the_platforms_validator_passes_every_committed_chart():
    found = Oac.find()
    if not isinstance(found, Oac):
        pytest.skip(f"the platform's validator (oac) did not run: {found}")
    refused = {}
    for folder in sorted(p for p in (REPO / "charts").iterdir() if (p / "Chart.yaml").is_file()):
        verdict = found.lint(folder)
        if verdict.error is not None:
            refused[folder.name] = verdict.error
    assert refused == {}, refused


def test_oaclint_pins_the_version_beclab_market_requires():
    gomod = (REPO / "tools" / "oaclint" / "go.mod").read_text()
    assert "github.com/beclab/Olares/framework/oac v0.0.0-20260509033324-899cba323495" in gomod
    assert "oac.Lint(dir, oac.WithAutoOwnerScenarios())" in (REPO / "tools" / "oaclint" / "main.go").read_text()
    assert os.access(REPO / ".ci" / "build-oaclint.sh", os.R_OK)
    assert Path(REPO / ".ci" / "run").read_text().count("build-oaclint.sh") == 1


# --- oac's structural vectors (framework/oac/internal/manifest/validate_test.go@0096aee3286e718f69a7c7796eb1323d4b681850:
# TestEntrance_AuthLevelEnum, _OpenMethodEnum, _IconURL, _Required, _UniqueNames, _PortNegative) through OLARES029 ---

ENTRANCE = {"name": "main", "host": "vec", "port": 8080, "title": "Main", "icon": "https://example.com/e.png",
            "authLevel": "public", "openMethod": "default"}


def structure(**entrance: Any) -> list[str]:
    manifest = {"olaresManifest.version": "0.12.0", "apiVersion": "v3",
                "metadata": {"name": "vec", "version": "1.0.0", "title": "Vec", "icon": "https://example.com/i.png",
                             "description": "a fixture"},
                "entrances": [{**ENTRANCE, **entrance}], "spec": {"supportArch": ["amd64"]}}
    v = ChartView("vec", {"OlaresManifest.yaml": yaml.safe_dump(manifest)}, manifest=manifest)
    return [i.message for i in olares.oac_structure(v)]


@pytest.mark.parametrize(("value", "bad"), [("", False), ("public", False), ("private", False), ("internal", False),
                                            ("bogus", True)])
def test_entrance_auth_level(value, bad):
    assert bool(structure(authLevel=value)) is bad


@pytest.mark.parametrize(("value", "bad"), [("", False), ("default", False), ("iframe", False), ("window", False),
                                            ("popup", True)])
def test_entrance_open_method(value, bad):
    assert bool(structure(openMethod=value)) is bad


@pytest.mark.parametrize(("icon", "bad"), [("", False), ("http://example.com/x.png", False),
                                           ("https://example.com/x.png", False), ("ftp://example.com/x.png", True),
                                           ("not-a-url", True)])
def test_entrance_icon_url(icon, bad):
    assert bool(structure(icon=icon)) is bad


def test_entrance_port_must_be_positive():
    assert any("port -1 must be > 0" in m for m in structure(port=-1))


def test_entrances_are_required_and_unique():
    manifest = {"olaresManifest.version": "0.12.0", "metadata": {"icon": "https://e/i.png", "description": "d"},
                "entrances": [], "spec": {}}
    v = ChartView("vec", {"OlaresManifest.yaml": ""}, manifest=manifest)
    assert any("0 entrances" in i.message for i in olares.oac_structure(v))
    manifest["entrances"] = [{**ENTRANCE, "name": "dup", "host": "alpha"}, {**ENTRANCE, "name": "dup", "host": "bravo"}]
    assert any("duplicate" in i.message for i in olares.oac_structure(v))


def test_every_committed_chart_passes_the_structural_vectors():
    found = {}
    for folder in sorted(p for p in (REPO / "charts").iterdir() if (p / "OlaresManifest.yaml").is_file()):
        text = (folder / "OlaresManifest.yaml").read_text(encoding="utf-8")
        v = ChartView(folder.name, {"OlaresManifest.yaml": text}, manifest=yaml.safe_load(text))
        issues = [i.message for i in olares.oac_structure(v)]
        if issues:
            found[folder.name] = issues
    assert found == {}


def test_a_pre_release_version_is_where_ours_is_stricter_than_oac():
    """oac accepts metadata.version 1.2.3-beta (TestAppMetaData_VersionSemver); OLARES004 refuses it on purpose:
    GitBot's PR title and the Market's ingest take only X.Y.Z (its source). Not a disagreement to fix."""
    manifest = {"metadata": {"name": "vec", "version": "1.2.3-beta"}}
    v = ChartView("vec", {"OlaresManifest.yaml": "", "Chart.yaml": ""}, chart={"name": "vec", "version": "1.2.3-beta"},
                  manifest=manifest)
    assert any("not a plain X.Y.Z" in i.message for i in olares.same_version(v))


def test_check_says_plainly_when_the_platforms_validator_did_not_run(catalog_copy, capsys, monkeypatch, tmp_path):
    from generator.cli import main
    from generator.lint import oac

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CATALOG_OACLINT", raising=False)
    monkeypatch.delenv("CATALOG_CACHE", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                                if not (Path(p) / "olares-cli").exists()))
    oac.validator.cache_clear()
    try:
        main(["check", "gemma4e2bone", "--catalog", str(catalog_copy)])
    finally:
        oac.validator.cache_clear()
    err = " ".join(capsys.readouterr().err.split())
    assert "the platform's validator (oac) did not run: neither an oaclint binary" in err
    main(["check", "gemma4e2bone", "--catalog", str(catalog_copy), "--no-lint"])
    assert "the platform's validator (oac) did not run: --no-lint" in " ".join(capsys.readouterr().err.split())
