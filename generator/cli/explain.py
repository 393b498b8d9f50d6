"""`catalog explain APP`: resolved args and env with their origin, Genesis patches, memory breakdown; a draft app
(drafts/apps/, written by `catalog import`) is shown as a draft with what blocks it, exit 1."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core.errors import UsageError

if TYPE_CHECKING:
    from generator.catalog import Catalog

def _explain_draft(cat: Catalog, name: str, as_json: bool) -> None:
    """An app the import left in drafts/apps/: shown as a draft with what blocks it and the drafts it needs
    (exit 1: a draft is not an app of the catalog yet). Returns when there is no such draft."""
    from generator.core.text import safe_line
    from generator.importer.drafts import read_drafts

    drafts = read_drafts(cat.root)
    draft = next((d for d in drafts if d.kind == "app" and d.id == name), None)
    if draft is None:
        return
    needs = [d for d in drafts if (d.kind == "model" and d.id == draft.model)
             or (d.kind == "stack" and d.id == draft.stack)]
    if as_json:
        sys.stdout.write(json.dumps({**draft.to_data(), "needs": [d.to_data() for d in needs]}, indent=2) + "\n")
        raise typer.Exit(1)
    lines = [f"{name} is a draft ({draft.path}), not an app of the catalog yet: `catalog import` wrote it; "
             "complete it and move it to apps/, then `catalog check`.",
             f"  model {draft.model or '?'}  stack {draft.stack or '?'}  version {draft.version or '?'}"]
    lines += [f"  blocked by {block}" for block in draft.blocks]
    for need in needs:
        lines.append(f"  needs draft {need.kind} {need.id} ({need.path}):")
        lines += [f"    {block}" for block in need.blocks]
    sys.stdout.writelines(safe_line(line) + "\n" for line in lines)
    raise typer.Exit(1)


AppArg = Annotated[str | None, typer.Argument(help="The app to explain.", show_default=False)]
DeviceOpt = Annotated[str | None, typer.Option(
    "--device", help="Show which active apps of this device can run together on one card (no APP).")]


@app.command()
def explain(name: AppArg = None, catalog: CatalogOpt = None, as_json: JsonOpt = False,
            device: DeviceOpt = None) -> None:
    """Explain one app: every argument and env var with its origin, and its memory fit (FIT / TIGHT / FAIL).
    With --device: the GPU memory of every active app of that device and which of them fit on one card together."""
    from rich.console import Console

    from generator.check.explain import card_plan, explain_data
    from generator.check.report import card_json, explain_json, print_card, print_explain

    if (name is None) == (device is None):
        raise UsageError("give an APP to explain, or --device DEVICE (not both)")
    cat = load_catalog(use_catalog(catalog, command="explain", writes=False, quiet=as_json))
    if device is not None:
        plan = card_plan(cat, device)
        if as_json:
            sys.stdout.write(card_json(plan) + "\n")
        else:
            print_card(plan, Console())
        return
    assert name is not None
    if name not in cat.apps:
        _explain_draft(cat, name, as_json)
    from generator.cli.listing import latest_measured
    from generator.smoke.ledger import history

    resolved = cat.select([name], include_removed=True)[0]
    data = explain_data(resolved, cat, latest_measured(resolved.app, history(cat.root, resolved.app.name)))
    if as_json:
        sys.stdout.write(explain_json(data) + "\n")
    else:
        print_explain(data, Console())
