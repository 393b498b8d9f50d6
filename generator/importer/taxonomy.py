"""The market's own categories of an imported chart (issue 42: an imported chart of this tool's making keeps its
categories).

A chart carries only Olares' category (`metadata.categories: [AI]`); a market with its own taxonomy keeps it beside
the charts, one JSON object of chart name -> labels: the maintainer's market in `scripts/market-taxonomy.json`
(github.com/aamsellem/olares-one-market scripts/market-taxonomy.json@59296d35fa0e86b4ee099332ac4937eb9e0f0f1c, read
by scripts/validate-manifests-v3.js@b41af142d2f6a087e1a36d659b15c3664c8f4823 as `marketTaxonomy[chartName]`). The
import looks for it beside the chart folder, in `scripts/` beside it (the maintainer's layout) and in `scripts/`
above a store's `charts/`. Bounded: at most MAX_BYTES, labels as the app schema takes them; anything else is no
taxonomy.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

FILE = "market-taxonomy.json"
PLACES = (FILE, f"scripts/{FILE}", f"../scripts/{FILE}")  # beside the charts, the maintainer's layout, a store's
MAX_BYTES = 1 << 20
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 -]{0,39}$")  # generator/schema/app.py MarketCategory


def categories_for(chart: Path) -> tuple[tuple[str, ...], str] | None:
    """(labels, the file they come from) for the chart folder or package `chart`, when a taxonomy beside it names
    it; None otherwise."""
    name = chart.name.removesuffix(".tgz")
    for place in PLACES:
        found = _read(str((chart.parent / place).resolve()))
        if found is not None and name in found:
            return found[name], str(chart.parent / place)
    if chart.suffix == ".tgz":  # a package `<app>-<version>.tgz`: the app is the name less its version
        base = re.sub(r"-[0-9][^/]*$", "", name)
        for place in PLACES:
            found = _read(str((chart.parent / place).resolve()))
            if found is not None and base in found:
                return found[base], str(chart.parent / place)
    return None


@lru_cache(maxsize=8)
def _read(path: str) -> dict[str, tuple[str, ...]] | None:
    file = Path(path)
    try:
        if not file.is_file() or file.stat().st_size > MAX_BYTES:
            return None
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    out: dict[str, tuple[str, ...]] = {}
    for key, labels in data.items():
        if isinstance(key, str) and isinstance(labels, list) and labels and len(labels) <= 8 and all(
                isinstance(label, str) and LABEL.match(label) for label in labels) and len(set(labels)) == len(labels):
            out[key] = tuple(labels)
    return out


__all__ = ["FILE", "categories_for"]
