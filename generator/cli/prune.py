"""`catalog prune --deprecated`: retire deprecated apps whose replacement passed its smoke."""


import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, default_out, load_catalog, use_catalog
from generator.core import UsageError

if TYPE_CHECKING:
    from generator.prune import AppChanges
    from generator.prune import PruneItem


@app.command()
def prune(
    deprecated: Annotated[bool, typer.Option(
        "--deprecated", help="Prune deprecated apps whose replacement passed a smoke at its current version.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and the changes; write nothing.")] = False,
    market: Annotated[Path | None, typer.Option(
        "--market", help="A market repo working tree (beclab/apps layout): prepare the SUSPEND change there.")] = None,
    remove: Annotated[bool, typer.Option(
        "--remove", help="With --market: prepare the REMOVE change instead (irreversible; needs --yes).")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm an irreversible --remove.")] = False,
    as_json: JsonOpt = False,
    catalog: CatalogOpt = None,
) -> None:
    """Remove deprecated apps from the catalog and charts/ once their replacement passed its smoke.

    Exit 0 when every deprecated app was pruned (or there is none), 1 when the gate blocked any.
    """
    from generator.smoke import ledger as smoke_ledger
    from generator.prune import plan, replacements
    from generator.prune import prepare
    from generator.prune.apply import apply
    _check_options(deprecated, market, remove, yes)
    catalog = use_catalog(catalog, command="prune", writes=not dry_run, quiet=as_json)
    cat = load_catalog(catalog)
    items = plan(cat, {name: smoke_ledger.history(cat.root, name) for name in replacements(cat)})
    charts = default_out(catalog)
    changes = prepare(cat, items, charts=charts, market=market, remove=remove,
                      today=dt.datetime.now(dt.UTC).date())
    if not dry_run:
        apply(changes, charts=charts)
    _report(items, changes, dry_run=dry_run, as_json=as_json)
    raise typer.Exit(1 if any(not i.pruned for i in items) else 0)


def _check_options(deprecated: bool, market: Path | None, remove: bool, yes: bool) -> None:
    if not deprecated:
        raise UsageError("say what to prune: --deprecated (deprecated apps whose replacement passed its smoke)")
    if remove and market is None:
        raise UsageError("--remove prepares the REMOVE change in a market tree: give --market DIR")
    if remove and not yes:
        raise UsageError("--remove is irreversible (the folder name can never be used again): add --yes to confirm")
    if market is not None and not market.is_dir():
        raise UsageError(f"--market {market}: not a folder")


def _report(items: "list[PruneItem]", changes: "list[AppChanges]", *, dry_run: bool, as_json: bool) -> None:
    by_app = {c.item.app: c for c in changes}
    if as_json:
        rows = [{"app": i.app, "replaced_by": i.replaced_by, "action": i.action, "reason": i.reason,
                 "unblock": i.unblock, "market": _market_title(by_app.get(i.app)),
                 "changes": by_app[i.app].describe() if i.app in by_app else [],
                 "applied": i.app in by_app and not dry_run}
                for i in items]
        print(json.dumps(rows, indent=2))
        return
    _table(items, by_app, dry_run)


def _market_title(change: "AppChanges | None") -> str | None:
    """The market title the change edits (None without a market change, or an empty title)."""
    market = change.market if change else None
    return (market.title or None) if market else None


def _table(items: "list[PruneItem]", by_app: "dict[str, AppChanges]", dry_run: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not items:
        console.print("no deprecated app in the catalog: nothing to prune")
        return
    table = Table(title=f"prune --deprecated{' (dry run: nothing written)' if dry_run else ''}")
    for col in ("app", "action", "why"):
        table.add_column(col, no_wrap=col != "why", overflow="fold")
    for item in items:
        color = "green" if item.pruned else "yellow"
        table.add_row(item.app, f"[{color}]{item.action}[/]", item.reason)
    console.print(table)
    for item in items:
        if item.unblock is not None:
            console.print(f"{item.app}: would be unblocked by {item.unblock}", markup=False, highlight=False)
    verb = "would " if dry_run else ""
    for name, change in by_app.items():
        for line in change.describe():
            console.print(f"{name}: {verb}{line}", markup=False)
