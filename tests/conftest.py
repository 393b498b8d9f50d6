"""Shared fixtures: a private copy of the embedded catalog and helpers to edit it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parent.parent
EMBEDDED = REPO / "catalog"


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    """A copy of the embedded catalog in tmp_path/catalog (charts render to tmp_path/charts)."""
    dest = tmp_path / "catalog"
    shutil.copytree(EMBEDDED, dest)
    return dest


def edit_yaml(path: Path, **changes) -> None:
    """Round-trip edit of a YAML file: set top-level keys (None deletes), keep the rest."""
    yaml = YAML(typ="rt")
    data = yaml.load(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)


def edit_app(catalog: Path, app: str, **changes) -> Path:
    path = catalog / "apps" / f"{app}.yaml"
    edit_yaml(path, **changes)
    return path
