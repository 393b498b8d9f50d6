"""Fixtures of the importer's tests: a copy of tests/fixtures/catalog_small to import into (a test module that needs
the catalog changed defines its own `catalog`, which overrides this one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(SMALL, dest)
    return dest
