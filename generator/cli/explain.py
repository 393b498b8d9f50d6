"""`catalog explain APP`: resolved args and env with their origin, Genesis patches, memory breakdown; a draft app
(drafts/apps/, written by `catalog import`) is shown as a draft with what blocks it, exit 1."""


import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core.errors import UsageError

if TYPE_CHECKING:
    from generator.catalog import Catalog

def _explain_draft(cat: "Catalog", name: str, as_json: bool) -> None:
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
    "--device", help="Without APP: which active apps of this device can run together on one card. With APP: the "
                     "app on that device (context, KV, memory, roofline, or why it is excluded).")]


@app.command()
def explain(name: AppArg = None, catalog: CatalogOpt = None, as_json: JsonOpt = False,
            device: DeviceOpt = None) -> None:
    """Explain one app: every argument and env var with its origin, and its memory fit (FIT / TIGHT / FAIL).
    With --device alone: the GPU memory of every active app of that device and which of them fit on one card together;
    with APP and --device: what the fit gives the app on that device (docs/devices.md)."""
    from rich.console import Console

    from generator.check.explain import app_on_device, card_plan, explain_data
    from generator.check.report import card_json, device_json, explain_json, print_card, print_devices, print_explain

    if name is None and device is None:
        raise UsageError("give an APP to explain, or --device DEVICE, or both")
    cat = load_catalog(use_catalog(catalog, command="explain", writes=False, quiet=as_json))
    if name is not None and device is not None:
        if device not in cat.devices:
            raise UsageError(f"unknown device {device!r}; known: {', '.join(sorted(cat.devices)) or 'none'}")
        one = app_on_device(cat.select([name], include_removed=True)[0], device)
        if as_json:
            sys.stdout.write(device_json(one) + "\n")
        else:
            print_devices((one,), Console())
        return
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
