"""Issue 40 cause 9 (explain --device): a `devices:` entry is judged against the device, not against its own
figure. An entry asking more GPU memory than the card has is never FIT or TIGHT, whatever the size and device; one
within the card keeps the fit's verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.bump import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_devices"
MEMORY = {"small-ada": 8192}  # (big-unified is arm64: the stack is excluded there)


def _catalog(tmp_path: Path, device: str, mib: int) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    app = dest / "apps" / "multi.yaml"
    text = app.read_text()
    old = f"  - {{device: {device}}}"
    assert old in text
    app.write_text(text.replace(old, f"  - {{device: {device}, gpu_memory_mib: {mib}}}"))
    return dest


def _json(capsys, *args: str) -> dict:
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("device,mib", [("small-ada", 8193), ("small-ada", 24_576), ("small-ada", 2**20)])
def test_an_entry_asking_more_than_the_card_has_is_not_fit(tmp_path, capsys, device, mib):
    catalog = _catalog(tmp_path, device, mib)
    one = _json(capsys, "explain", "multi", "--device", device, "--catalog", str(catalog), "--json")
    assert one["verdict"] == "FAIL" and one["gpu_mib"] == mib
    assert any(f"{MEMORY[device]:,} MiB" in line for line in one["gave_up"])
    card = _json(capsys, "explain", "--device", device, "--catalog", str(catalog), "--json")
    assert next(a for a in card["apps"] if a["app"] == "multi")["verdict"] == "FAIL"


def test_an_entry_within_the_card_keeps_the_fits_verdict(tmp_path, capsys):
    catalog = _catalog(tmp_path, "small-ada", 5000)
    one = _json(capsys, "explain", "multi", "--device", "small-ada", "--catalog", str(catalog), "--json")
    assert one["verdict"] in ("FIT", "TIGHT", "FAIL") and not any("MiB of GPU memory;" in g for g in one["gave_up"])
