"""The driver's CUDA (issue 36 item 2): `catalog check` refuses an app whose image needs more CUDA than its device's
driver supports, naming both, on the app's own device and on each device of `devices:` (docs/devices.md "The driver's
CUDA"). Real parts: a copy of tests/fixtures/catalog_devices, the real CLI, loader, planner and rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.catalog import load_catalog
from generator.cli import main

from support.catalogs import FIXTURES, REPO

APP = "spread"  # own device small-ada on llamacpp-b8740; big-unified on llamacpp-multiarch


def _edit(path: Path, **changes) -> None:
    yaml = YAML(typ="rt")
    data = yaml.load(path.read_text(encoding="utf-8"))
    data.update(changes)
    with path.open("w", encoding="utf-8") as out:
        yaml.dump(data, out)


def _cuda(version: str) -> dict:
    return {"version": version, "source": {"ref": "a fixture build recipe", "note": f"ARG CUDA_VERSION={version}.0"}}


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURES / "catalog_devices", dest)
    _edit(dest / "stacks" / "llamacpp-b8740.yaml", cuda=_cuda("13.1"))
    _edit(dest / "stacks" / "llamacpp-multiarch.yaml", cuda=_cuda("12.8"))
    for device in ("small-ada", "big-unified"):
        _edit(dest / "devices" / f"{device}.yaml", driver_version="595.84", driver_cuda="13.2")
    return dest


def check(capsys, catalog: Path) -> tuple[int, list[dict]]:
    code = main(["check", APP, "--catalog", str(catalog), "--json", "--no-lint"])
    data = json.loads(capsys.readouterr().out)
    return code, [f for a in data["apps"] for f in a["findings"] if f["rule"].startswith("CUDA")]


def test_a_driver_that_supports_the_image_passes(catalog, capsys):
    _, found = check(capsys, catalog)
    assert found == []


def test_a_lowered_driver_fails_check_naming_both_versions(catalog, capsys):
    _edit(catalog / "devices" / "small-ada.yaml", driver_version="570.10", driver_cuda="12.8")
    code, found = check(capsys, catalog)
    assert code == 1 and [f["rule"] for f in found] == ["CUDA001"]
    message = found[0]["message"]
    assert "needs CUDA 13.1" in message and "driver 570.10 = CUDA 12.8" in message and "llamacpp-b8740" in message
    assert found[0]["severity"] == "error"


def test_a_device_of_devices_is_checked_on_its_own_stack(catalog, capsys):
    _edit(catalog / "devices" / "big-unified.yaml", driver_cuda="12.4")
    code, found = check(capsys, catalog)
    assert code == 1 and len(found) == 1
    assert found[0]["message"].startswith("on Big Unified (devices.")
    assert "needs CUDA 12.8" in found[0]["message"] and "CUDA 12.4" in found[0]["message"]


def test_a_stack_without_a_cuda_record_is_named(catalog, capsys):
    yaml = YAML(typ="rt")
    path = catalog / "stacks" / "llamacpp-b8740.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    del data["cuda"]
    with path.open("w", encoding="utf-8") as out:
        yaml.dump(data, out)
    _, found = check(capsys, catalog)
    assert [(f["rule"], f["severity"]) for f in found] == [("CUDA002", "warning")]


def test_every_stack_of_the_embedded_catalog_records_its_cuda_with_a_source():
    cat = load_catalog(REPO / "catalog")
    missing = [s.id for s in cat.stacks.values() if s.cuda is None or not s.cuda.source.ref]
    assert missing == []
    one = cat.devices["olares-one"]
    assert (one.driver_version, one.driver_cuda) == ("595.84", "13.2")
