"""What to publish: each app's fresh render, checked against the version recorded in releases.yaml."""

from __future__ import annotations

import re
from pathlib import Path

from generator.versions import current, today
from generator.versions import Variant, variants
from generator.versions import Release
from generator.catalog import Resolved, load_catalog
from generator.versions import Releases, load_releases
from generator.publish.core import Item, Result

_NEXT_NOTE = re.compile(r"\s(?=\d+\.\d+\.\d+: )")


def version_note(upgrade_description: str | None, version: str) -> str:
    """The `X.Y.Z: ...` part of an upgrade description for `version` ("" when there is none)."""
    for part in _NEXT_NOTE.split((upgrade_description or "").strip()):
        if part.startswith(f"{version}: "):
            return part.strip()
    return ""


def _item(r: Resolved, releases: Releases, label: str) -> Item | Result:
    app = r.app
    note = version_note(app.upgrade_description, app.version)
    if app.status == "removed":
        return Item(app.name, app.version, app.status, {}, None, today(), note)
    cur = current(r)
    recorded = releases.get(app.name, app.version)
    if recorded is None:
        return Result(app.name, app.version, label, "refused",
                      f"version {app.version} is not recorded in releases.yaml; run `catalog bump {app.name}`")
    if recorded.content != cur.content:
        return Result(app.name, app.version, label, "refused",
                      f"content changed since {app.version} was recorded ({recorded.content} -> {cur.content}); "
                      f"run `catalog bump {app.name}`")
    served, notes = _variants(r, recorded)
    return Item(app.name, app.version, app.status, cur.tree, cur.content, recorded.date, note, served, notes)


def _variants(r: Resolved, recorded: Release) -> tuple[tuple[Variant, ...], tuple[str, ...]]:
    """The variants whose content releases.yaml records for this version; why each other one is left out."""
    made, refused = variants(r)
    served: list[Variant] = []
    notes = [f"{name}: cannot be written in this format ({why})" for name, why in sorted(refused.items())]
    for name, variant in sorted(made.items()):
        want = recorded.format_content(name)
        if want == variant.content:
            served.append(variant)
        elif want is None:
            notes.append(f"{name} {variant.version}: not recorded in releases.yaml; run `catalog bump {r.app.name}`")
        else:
            notes.append(f"{name} {variant.version}: content changed since it was recorded; run "
                         f"`catalog bump {r.app.name}`")
    return tuple(served), tuple(notes)


def items_for(catalog_root: Path | None, names: list[str] | None, label: str, *,
              with_removed: bool) -> tuple[list[Item], list[Result]]:
    """The apps to publish (every app, or the named ones) and the refusals found before any target is touched."""
    cat = load_catalog(catalog_root)
    releases = load_releases(cat.root)
    chosen = cat.select(names or [], include_removed=with_removed)
    if not with_removed:
        chosen = [r for r in chosen if r.app.status != "removed"]
    items: list[Item] = []
    refused: list[Result] = []
    for r in chosen:
        made = _item(r, releases, label)
        if isinstance(made, Item):
            items.append(made)
        else:
            refused.append(made)
    return items, refused
