"""The stages of generator/, earliest first (tests/test_architecture.py holds the import direction by them,
tests/test_walk.py the render pass's hand-offs)."""

from __future__ import annotations

# The flow, earliest first. `catalog` is generator/catalog.py (the aggregate that resolves app -> model, stack,
# device); the rest are packages. Stages on one line are siblings of equal rank only where listed together.
STAGES = [
    "core", "adapters", "yamlio", "schema", "catalog", "engines", "flags", "fit", "chart", "lint", "rules",
    "versions", "check", "preset", "importer", "newapp", "sync", "publish", "market", "smoke", "prune", "cli",
]
RANK = {stage: i for i, stage in enumerate(STAGES)}
