"""Where the test catalogs are, and round-trip edits of their YAML files.

- `MARKET`: tests/fixtures/market/ — a store repository frozen from the embedded catalog (catalog/ as it was at
  commit c8bc22a, 11 apps, 4 of them deprecated) and a small CHANGELOG.md beside it. Logic tests use it, so the
  live catalog/ can change (apps added, deprecated, removed) without moving them. Its charts are rendered at the
  start of a session (tests/conftest.py), never committed.
- `SMALL`: tests/fixtures/catalog_small/ — 3 apps whose charts are the golden files under tests/golden/.
- `EMBEDDED`, `EMBEDDED_CHARTS`: the live catalog/ and charts/; only tests/test_embedded_catalog.py reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
MARKET = FIXTURES / "market"
MARKET_CATALOG = MARKET / "catalog"
SMALL = FIXTURES / "catalog_small"
EMBEDDED = REPO / "catalog"
EMBEDDED_CHARTS = REPO / "charts"


def edit_yaml(path: Path, **changes: Any) -> None:
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


def edit_app(catalog: Path, app: str, **changes: Any) -> Path:
    """Round-trip edit of catalog/apps/<app>.yaml (see `edit_yaml`); returns the file."""
    path = catalog / "apps" / f"{app}.yaml"
    edit_yaml(path, **changes)
    return path
