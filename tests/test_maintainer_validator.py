"""Opt-in: the maintainer's own market validator over every chart of the embedded catalog (issue 36 item 4).

His `scripts/validate-manifests-v3.js` (github.com/aamsellem/olares-one-market@b41af142d2f6a087e1a36d659b15c3664c8f4823)
is not part of this repository. Set CATALOG_V3_VALIDATOR to a copy of it (with `js-yaml` resolvable from it, or
NODE_PATH naming a node_modules folder that has it) and `node` on PATH; the test lays the committed charts/ out as
his market root (OLARES_MARKET_ROOT, with the scripts/market-taxonomy.json it requires, written from each app's
`categories`) and runs it. Without CATALOG_V3_VALIDATOR the test is skipped (docs/devices.md "Charts").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.catalog import load_catalog

from support.catalogs import REPO

VALIDATOR = os.environ.get("CATALOG_V3_VALIDATOR")


@pytest.mark.skipif(not VALIDATOR, reason="CATALOG_V3_VALIDATOR is not set (a copy of the maintainer's "
                                          "scripts/validate-manifests-v3.js)")
def test_the_maintainers_validator_passes_every_chart_of_the_embedded_catalog(tmp_path: Path):
    assert VALIDATOR is not None and Path(VALIDATOR).is_file(), f"CATALOG_V3_VALIDATOR={VALIDATOR} is not a file"
    catalog = load_catalog(REPO / "catalog")
    root = tmp_path / "market"
    (root / "scripts").mkdir(parents=True)
    taxonomy = {}
    for r in catalog.select():
        folder = REPO / "charts" / r.app.name
        if r.app.status == "removed" or not (folder / "Chart.yaml").is_file():
            continue
        shutil.copytree(folder, root / r.app.name)
        taxonomy[r.app.name] = list(r.app.categories or ("LLM Chat",))
    (root / "scripts" / "market-taxonomy.json").write_text(json.dumps(taxonomy), encoding="utf-8")
    done = subprocess.run(["node", VALIDATOR], env={**os.environ, "OLARES_MARKET_ROOT": str(root)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Validated {len(taxonomy)} Olares v3 charts." in done.stdout
