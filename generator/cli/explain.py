"""`catalog explain APP`: resolved args and env with their origin, Genesis patches, memory breakdown."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core.errors import UsageError

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
    from generator.cli.listing import latest_measured
    from generator.smoke.ledger import history

    resolved = cat.select([name], include_removed=True)[0]
    data = explain_data(resolved, cat, latest_measured(resolved.app, history(cat.root, resolved.app.name)))
    if as_json:
        sys.stdout.write(explain_json(data) + "\n")
    else:
        print_explain(data, Console())
