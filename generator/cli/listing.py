"""`catalog list`: one row per app."""

from __future__ import annotations

import json

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog


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
    rows = _rows(load_catalog(catalog))
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    from generator.core.terminal import markup

    table = Table(title=f"{len(rows)} apps")
    for col in ("name", "title", "model", "stack", "context", "version", "status", "t/s", "smoke"):
        table.add_column(col, justify="right" if col in ("context", "t/s") else "left",
                         no_wrap=col in ("name", "version", "status", "context", "t/s", "smoke"))
    for row in rows:
        tps = f"{row['tokens_per_s']:.1f}" if row["tokens_per_s"] else "—"
        cells = (row["name"], row["title"], row["model"], row["stack"], f"{row['context']:,}",
                 row["version"], row["status"], tps, _smoke(row))
        table.add_row(*(markup(cell) for cell in cells))  # catalog text: `[/bold]` shown, not interpreted
    Console().print(table)


def _smoke(row: dict) -> str:
    """Last smoke: verdict and tokens/s (the ledger's latest row)."""
    if not row["smoke_verdict"]:
        return "—"
    tps = f" {row['smoke_tokens_per_s']:.1f}" if row["smoke_tokens_per_s"] else ""
    return f"{row['smoke_verdict']}{tps}"
