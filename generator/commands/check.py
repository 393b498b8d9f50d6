"""`catalog check`: rules and chart lint for every app (or the named ones); exit 1 on any error."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..cli_app import AppsArg, CatalogOpt, JsonOpt, app, default_out, load_catalog

NoLintOpt = Annotated[bool, typer.Option("--no-lint", help="Skip the chart lint (Helm engine, Kubernetes schemas, "
                                                           "Olares chart rules).")]


@app.command()
def check(apps: AppsArg = None, catalog: CatalogOpt = None, as_json: JsonOpt = False, no_lint: NoLintOpt = False) -> None:
    """Check apps: catalog validity, crash rules, memory fit, and the rendered chart (lint)."""
    from rich.console import Console

    from ..checking import check_all
    from ..report import check_json, print_check

    cat = load_catalog(catalog)
    chosen = cat.select(apps or [])
    err = Console(stderr=True)
    with err.status("checking", spinner="dots") if (not as_json and err.is_terminal) else _Quiet() as status:
        def progress(name: str) -> None:
            if status is not None:
                status.update(f"checking {name}")
        results = check_all(cat, chosen, lint=not no_lint, charts=default_out(catalog), on_app=progress)
    if as_json:
        sys.stdout.write(check_json(results) + "\n")
    else:
        print_check(results, Console())
    raise typer.Exit(1 if any(not r.ok for r in results) else 0)


class _Quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
