"""Carry a chart's other accelerator modes back into the app's `devices:` (issue 42: an imported chart of this
tool's own making round-trips, the `nvidia-gb10` mode too).

A chart for several accelerator modes (docs/devices.md "Charts") holds, for each mode past its own, an entry of
`spec.accelerator` and the mode's engine under values.yaml `modes.<mode>`: image, command, args. Which catalog
device and overrides gave that engine is not written in the chart, so it is found by trying: for each device of
the catalog in that mode, the stacks whose image is the mode's image (or the app's own), the app's speculation or
`off`, and the mode's trailing args as `extra_args`. An entry is kept only when the app with it renders the whole
chart again, byte for byte; else nothing is guessed and the import keeps its note (manifest.py PER_MODE_NOTE).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any


from generator.core import Data, tuples
from generator.catalog import Catalog, Resolved, device_targets
from generator.chart import render_app
from generator.chart import Tree
from generator.core import CatalogError, InputError, Problem
from generator.schema import App
from generator.yamlio import Document, load_untrusted

Resolver = Callable[[Catalog, App], Resolved | None]  # build.py `_resolved`: an App with its references
MAX_TRIES = 48  # renders per chart at most: a few devices x stacks x speculation


def chart_modes(values_text: str | None) -> dict[str, dict[str, Data]]:
    """values.yaml `modes`: each mode's engine (image, command, args), as the chart writes them."""
    if not values_text:
        return {}
    try:  # the one loader of YAML from outside (aliases, duplicate keys and deep nesting refused)
        data = load_untrusted(values_text, "values.yaml")
    except InputError:  # a values.yaml Helm rendered already: an odd one just carries nothing
        return {}
    modes = data.get("modes") if isinstance(data, dict) else None
    return {str(k): v for k, v in modes.items() if isinstance(v, dict)} if isinstance(modes, dict) else {}


def carry(cat: Catalog, app: dict[str, Data], chart: Tree, modes: list[str],
          resolved_for: Resolver) -> list[dict[str, Data]] | None:
    """The `devices:` entries that make `app` render `chart` again (one per mode past the first), or None."""
    engines = chart_modes(chart.get("values.yaml"))
    entries: list[dict[str, Any]] = []
    tries = 0
    for mode in modes[1:]:
        engine = engines.get(mode, {})
        found = None
        for candidate in _candidates(cat, app, mode, engine):
            tries += 1
            if tries > MAX_TRIES:
                return None
            if _renders_mode(cat, app, entries + [candidate], chart, mode, resolved_for):
                found = candidate
                break
            extra = _extra_args(cat, app, entries + [candidate], engine, mode, resolved_for)
            if extra:
                with_extra = {**candidate, "extra_args": extra}
                if _renders_mode(cat, app, entries + [with_extra], chart, mode, resolved_for):
                    found = with_extra
                    break
        if found is None:
            return None
        entries.append(found)
    return entries if _render(cat, app, entries, resolved_for) == chart else None


def renders(cat: Catalog, app: dict[str, Data], entries: list[dict[str, Data]], chart: Tree,
            resolved_for: Resolver) -> bool:
    """Whether `app` with `entries` as its `devices:` renders `chart`, byte for byte (the entries a chart's catalog
    block names, generator/chart/carried.py, need no search)."""
    return _render(cat, app, entries, resolved_for) == chart


def _candidates(cat: Catalog, app: dict[str, Any], mode: str, engine: dict[str, Any]) -> list[dict[str, Any]]:
    image = engine.get("image")
    stacks = [s.id for s in sorted(cat.stacks.values(), key=lambda s: s.id) if s.image == image
              and s.id != app.get("stack")]
    out = []
    for device in sorted(d.id for d in cat.devices.values() if d.accelerator == mode):
        for stack in [None, *stacks]:
            for speculative in ([None, "off"] if app.get("speculative") else [None]):
                entry: dict[str, Any] = {"device": device}
                if stack:
                    entry["stack"] = stack
                if speculative:
                    entry["speculative"] = speculative
                out.append(entry)
    return out


def _resolve(cat: Catalog, app: dict[str, Any], entries: list[dict[str, Any]],
             resolved_for: Resolver) -> Resolved | None:
    try:
        model = App.model_validate(tuples({**app, "devices": entries}))
    except ValueError:
        return None
    base: Resolved | None = resolved_for(cat, model)
    if base is None:
        return None
    problems: list[Problem] = []
    doc = Document(Path(f"{model.name}.yaml"), {})
    try:
        targets = device_targets(cat, model, base.model, base.stack, doc, base.file, problems)
    except CatalogError:
        return None
    return None if problems else replace(base, targets=targets)


def _render(cat: Catalog, app: dict[str, Any], entries: list[dict[str, Any]], resolved_for: Resolver) -> Tree | None:
    r = _resolve(cat, app, entries, resolved_for)
    if r is None:
        return None
    try:
        return render_app(r)
    except (CatalogError, ValueError, KeyError):
        return None


def _renders_mode(cat: Catalog, app: dict[str, Any], entries: list[dict[str, Any]], chart: Tree, mode: str,
                  resolved_for: Resolver) -> bool:
    tree = _render(cat, app, entries, resolved_for)
    return tree is not None and chart_modes(tree.get("values.yaml")).get(mode) == \
        chart_modes(chart.get("values.yaml")).get(mode)


def _extra_args(cat: Catalog, app: dict[str, Any], entries: list[dict[str, Any]], engine: dict[str, Any], mode: str,
                resolved_for: Resolver) -> list[str]:
    """The chart's args for `mode` past those the candidate renders (its `extra_args`), when those are a prefix."""
    bare = [*entries[:-1], {**entries[-1], "extra_args": []}]  # the entry's own args, without the app's extra ones
    tree = _render(cat, app, bare, resolved_for)
    mine = chart_modes(tree.get("values.yaml")).get(mode, {}).get("args") if tree else None
    theirs = engine.get("args")
    if not isinstance(mine, list) or not isinstance(theirs, list) or len(theirs) <= len(mine):
        return []
    return [str(a) for a in theirs[len(mine):]] if theirs[:len(mine)] == mine else []



__all__ = ["carry", "chart_modes", "renders"]
