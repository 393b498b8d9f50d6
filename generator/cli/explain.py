"""`catalog explain APP`: resolved args and env with their origin, Genesis patches, memory breakdown."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog

AppArg = Annotated[str, typer.Argument(help="The app to explain.", show_default=False)]


@app.command()
def explain(name: AppArg, catalog: CatalogOpt = None, as_json: JsonOpt = False) -> None:
    """Explain one app: every argument and env var with its origin, and its memory fit (FIT / TIGHT / FAIL)."""
    from rich.console import Console

    from generator.check.explain import explain_data
    from generator.check.report import explain_json, print_explain

    cat = load_catalog(use_catalog(catalog, command="explain", writes=False, quiet=as_json))
    resolved = cat.select([name], include_removed=True)[0]
    data = explain_data(resolved, cat)
    if as_json:
        sys.stdout.write(explain_json(data) + "\n")
    else:
        print_explain(data, Console())
