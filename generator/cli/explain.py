"""`catalog explain APP`: resolved args and env with their origin, Genesis patches, memory breakdown; a draft app
(drafts/apps/, written by `catalog import`) is shown as a draft with what blocks it, exit 1."""


import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core import UsageError

if TYPE_CHECKING:
    from generator.catalog import Catalog

def _explain_draft(cat: "Catalog", name: str, as_json: bool) -> None:
    """An app the import left in drafts/apps/: shown as a draft with what blocks it and the drafts it needs
    (exit 1: a draft is not an app of the catalog yet). Returns when there is no such draft."""
    from generator.core import safe_line
    from generator.importer import read_drafts

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
                     "app on that device (context, KV, memory, roofline, predicted speed, or why it is excluded); "
                     "with APP, a device id or a device file (FILE.yaml) the catalog does not have.")]


def _app_on_device(cat: "Catalog", name: str, device: str, as_json: bool) -> None:
    """`explain APP --device D`: the fit's plan where the app targets D, and the predicted speed on D always (a device
    the app does not target, or a device file: the app's own argv and weights on that card)."""
    from pathlib import Path

    from rich.console import Console

    from generator.catalog import load_device_file
    from generator.check import app_on_device, speed_data
    from generator.check import print_devices, print_speeds
    from generator.fit import variant_on
    from generator.fit import on_device, speeds

    resolved = cat.select([name], include_removed=True)[0]
    targets = {resolved.device.id, *(t.device.id for t in resolved.targets)}
    if device in cat.devices and device in targets:
        one = app_on_device(resolved, device)
        there = variant_on(resolved, device) if one.runs else None
        # excluded there: the speed of its own argv on that card, as for a device it does not target
        found = speeds(there if there is not None else on_device(resolved, cat.devices[device]))
        if as_json:
            sys.stdout.write(json.dumps({**one.to_data(), **speed_data(found)}, indent=2) + "\n")
        else:
            print_devices((one,), Console())
            print_speeds(found, Console())
        return
    if device in cat.devices:
        card = cat.devices[device]
    elif device.endswith((".yaml", ".yml")):
        card = load_device_file(Path(device))
    else:
        raise UsageError(f"unknown device {device!r}; known: {', '.join(sorted(cat.devices)) or 'none'}, or a "
                         "device file (FILE.yaml)")
    if card.memory_bandwidth_gb_s is None:
        raise UsageError(f"device {card.id!r} states no memory_bandwidth_gb_s: the speed model needs the card's "
                         "memory bandwidth in GB/s (its specification's figure); add it to the device file")
    note = (f"{name} does not target device {card.id!r} (it targets: {', '.join(sorted(targets))}): the predicted "
            "speed is its own argv and weights on that card; no memory fit there (add the device to the app's "
            "`devices:` for one)")
    found = speeds(on_device(resolved, card))
    if as_json:
        sys.stdout.write(json.dumps({"app": name, "device": card.id, "name": card.name, "targets": False,
                                     "note": note, **speed_data(found)}, indent=2) + "\n")
    else:
        console = Console()
        console.print(note, markup=False, highlight=False)
        print_speeds(found, console)


@app.command()
def explain(name: AppArg = None, catalog: CatalogOpt = None, as_json: JsonOpt = False,
            device: DeviceOpt = None) -> None:
    """Explain one app: every argument and env var with its origin, and its memory fit (FIT / TIGHT / FAIL).
    With --device alone: the GPU memory of every active app of that device and which of them fit on one card together;
    with APP and --device: what the fit gives the app on that device (docs/devices.md)."""
    from rich.console import Console

    from generator.check import card_plan, explain_data
    from generator.check import card_json, explain_json, print_card, print_explain

    if name is None and device is None:
        raise UsageError("give an APP to explain, or --device DEVICE, or both")
    cat = load_catalog(use_catalog(catalog, command="explain", writes=False, quiet=as_json))
    if name is not None and device is not None:
        _app_on_device(cat, name, device, as_json)
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
    from generator.smoke import history

    resolved = cat.select([name], include_removed=True)[0]
    data = explain_data(resolved, cat, latest_measured(resolved.app, history(cat.root, resolved.app.name)))
    if as_json:
        sys.stdout.write(explain_json(data) + "\n")
    else:
        print_explain(data, Console())
