"""`catalog import PATH...`: Olares application charts (folders or .tgz) -> catalog entries.

A folder that is not a chart but holds charts (another person's store) imports each chart in it. Charts are
imported one by one: a chart that cannot be (not an Olares chart, an unknown engine, a missing value, an unsafe
package, an app that exists without --update) or runs an engine the catalog does not model is reported and
skipped, with its drafts; the others are written, each app with its drafts whole.

Exit codes (docs/import.md): 0 every chart imported (or nothing to do); 3 something was skipped, the rest
written; 1 no chart could be imported, or a write would fail: nothing is written.
"""


import sys
from pathlib import Path
from typing import Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog

PathsArg = Annotated[list[Path], typer.Argument(help="Chart folders or .tgz packages.", show_default=False)]


@app.command("import")
def import_(
    paths: PathsArg,
    catalog: CatalogOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would be written; write nothing.")] = False,
    update: Annotated[bool, typer.Option("--update", help="Change the fields of existing apps that differ from the "
                                                          "chart (comments and order kept).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import Olares charts as catalog apps; drafts the models and stacks the catalog lacks (docs/import.md)."""
    from generator.core import InputError
    from generator.importer import SKIPPED_EXIT, import_paths
    from generator.importer import print_report, report_json

    cat = load_catalog(use_catalog(catalog, command="import", writes=not dry_run, quiet=as_json))
    report = import_paths(list(paths), cat, update=update, dry_run=dry_run, labels=[str(p) for p in paths])
    if as_json:
        sys.stdout.write(report_json(report) + "\n")
    else:
        print_report(report, sys.stdout)
    if not report.ok:
        raise InputError(report.problems)
    if report.partial:
        raise typer.Exit(SKIPPED_EXIT)
