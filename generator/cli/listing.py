"""`catalog list`: one row per app."""

from __future__ import annotations

import json

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog


def _rows(cat) -> list[dict]:
    from generator.smoke.ledger import last

    rows = []
    for r in cat.select(include_removed=True):
        bench = r.app.last_benchmark
        smoke = last(cat.root, r.app.name)
        rows.append({
            "name": r.app.name,
            "title": r.app.title,
            "model": r.model.name,
            "stack": r.stack.id,
            "context": r.app.context_length,
            "version": r.app.version,
            "status": r.app.status,
            "tokens_per_s": bench.tokens_per_s if bench else None,
            "measured": bench.date.isoformat() if bench else None,
            "smoke_verdict": smoke.verdict if smoke else None,
            "smoke_tokens_per_s": smoke.tokens_per_s if smoke else None,
            "smoke_date": smoke.date if smoke else None,
            "smoke_chart_version": smoke.chart_version if smoke else None,
        })
    return rows


@app.command("list")
def list_apps(catalog: CatalogOpt = None, as_json: JsonOpt = False) -> None:
    """List the apps: name, title, model, stack, context, version, status, last tokens/s, last smoke."""
    rows = _rows(load_catalog(use_catalog(catalog, command="list", writes=False, quiet=as_json)))
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.console import Console

    console = Console()
    table, hidden = _table(rows, console)
    console.print(table)
    if hidden:
        console.print(f"too narrow for: {', '.join(hidden)} (--json shows every field)",
                      style="dim", markup=False, highlight=False)


# Columns in display order; DROP lists the ones that go first when the terminal is narrow. name, model and
# stack are always shown in full.
COLUMNS = ("name", "title", "model", "stack", "context", "version", "status", "t/s", "smoke")
DROP = ("smoke", "t/s", "context", "title", "version", "status")
TITLE_MIN = 12  # the one column that wraps; narrower than this it is dropped instead


def _cells(row: dict) -> dict[str, str]:
    from generator.core.terminal import markup

    tps = f"{row['tokens_per_s']:.1f}" if row["tokens_per_s"] else "—"
    cells = {"name": row["name"], "title": row["title"], "model": row["model"], "stack": row["stack"],
             "context": f"{row['context']:,}", "version": row["version"], "status": row["status"], "t/s": tps,
             "smoke": _smoke(row)}
    return {k: markup(v) for k, v in cells.items()}  # catalog text: `[/bold]` and ESC shown, not interpreted


def _build(cells: list[dict[str, str]], columns: list[str], title: str):
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for col in columns:
        wide = max([cell_len(col), *(cell_len(row[col]) for row in cells)])
        title_col = col == "title"
        table.add_column(col, justify="right" if col in ("context", "t/s") else "left", no_wrap=not title_col,
                         overflow="fold", width=None if title_col else wide,
                         min_width=min(TITLE_MIN, wide) if title_col else None)
    for row in cells:
        table.add_row(*(row[c] for c in columns))
    return table


def _table(rows: list[dict], console):
    """The widest table that fits the console without shrinking a column; the dropped columns' names."""
    from rich.measure import Measurement

    cells = [_cells(r) for r in rows]
    title = f"{len(rows)} apps"
    columns = list(COLUMNS)
    for victim in (None, *DROP):
        if victim is not None:
            columns.remove(victim)
        table = _build(cells, columns, title)
        if Measurement.get(console, console.options.update_width(10_000), table).minimum <= console.width:
            break
    return table, [c for c in COLUMNS if c not in columns]


def _smoke(row: dict) -> str:
    """Last smoke: verdict and tokens/s (the ledger's latest row)."""
    if not row["smoke_verdict"]:
        return "—"
    tps = f" {row['smoke_tokens_per_s']:.1f}" if row["smoke_tokens_per_s"] else ""
    return f"{row['smoke_verdict']}{tps}"
