"""`catalog list`: one row per app."""


import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from generator.core import plural
from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from generator.catalog import Catalog, Resolved
    from generator.fit import Measured
    from generator.schema import App
    from generator.smoke import SmokeRecord


def latest_measured(app: "App", ledger: "list[SmokeRecord]") -> "Measured | None":
    """The newest measured speed of an app: its last passing smoke in the ledger, or its latest catalog benchmark
    when that is newer (or the ledger has no pass). Ledger rows record no context (0: an empty cache)."""
    from generator.fit import Measured

    bench = Measured.of_benchmark(app)
    passed = next((row for row in reversed(ledger) if row.verdict == "pass" and row.tokens_per_s), None)
    if passed is None or passed.tokens_per_s is None:
        return bench
    last = app.last_benchmark
    if last is not None and last.date > passed.when.date():
        return bench
    return Measured(passed.tokens_per_s, passed.acceptance, 0, f"smoke {passed.date}")


def _rows(cat: "Catalog") -> list[dict[str, Any]]:
    from generator.fit import reading
    from generator.fit.roofline import roofline
    from generator.smoke import history

    rows = []
    for r in cat.select(include_removed=True):
        bench = r.app.last_benchmark
        ledger = history(cat.root, r.app.name)
        smoke = ledger[-1] if ledger else None
        read = reading(r, latest_measured(r.app, ledger))
        # the bound needs no measurement: with none, the empty-cache roofline (the loose bound of a speculative app)
        roof = read.roof if read else (roofline(r, 0) if r.app.status != "removed" else None)
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
            # measured speed / the roofline at the measurement's context (generator/fit/roofline.py)
            "speed_per_roof": round(read.fraction, 3) if read else None,
            "roof_tokens_per_s": round(roof.bound_tps, 1) if roof else None,
            "roof_measured_tokens_per_s": read.measured.tokens_per_s if read else None,
            "roof_source": read.measured.source if read else None,
            "roof_loose": roof.loose if roof else None,
            "devices": [r.device.id, *(t.device.id for t in r.targets)],
            **_predicted(r),
        })
    return rows + _draft_rows(cat, {str(row["name"]) for row in rows})


def _predicted(r: "Resolved | None") -> dict[str, Any]:
    """The speed model's two predictions (generator/fit/speed.py); nulls for a removed app, a device without
    bandwidth, an architecture without a family (its band is in `explain`)."""
    from generator.fit import speeds

    found = speeds(r) if r is not None and r.app.status != "removed" else None
    if found is None:
        return {"predicted_tokens_per_s": None, "predicted_full_context_tokens_per_s": None, "predicted_band": None}
    short, full = found.short.tokens_per_s, found.full.tokens_per_s
    return {"predicted_tokens_per_s": None if short is None else round(short, 1),
            "predicted_full_context_tokens_per_s": None if full is None else round(full, 1),
            "predicted_band": found.short.band}


def _device_rows(cat: "Catalog", device_id: str) -> list[dict[str, Any]]:
    """`catalog list --device D`: the apps that target D (their own device or `devices:`), each row as the fit plans
    it there (generator/fit/devices.py): its context and roofline on D, or status `excluded` and why."""
    from generator.core import UsageError
    from generator.fit import device_plan, variant_on

    if device_id not in cat.devices:
        raise UsageError(f"unknown device {device_id!r}; known: {', '.join(sorted(cat.devices)) or 'none'}")
    rows = []
    for row in _rows(cat):
        if device_id not in row.get("devices", ()):
            continue
        r = cat.apps[row["name"]]
        plan = device_plan(r, device_id) if r.app.status != "removed" else None
        if r.device.id != device_id:  # measured speeds are the own device's: none here
            row |= {"tokens_per_s": None, "measured": None, "smoke_verdict": None, "smoke_tokens_per_s": None,
                    "smoke_date": None, "smoke_chart_version": None, "speed_per_roof": None,
                    "roof_measured_tokens_per_s": None, "roof_source": None}
        if plan is not None:
            row |= {"context": plan.context if plan.runs else None,
                    "roof_tokens_per_s": round(plan.roof_empty_tps, 1) if plan.roof_empty_tps else None,
                    "stack": plan.stack, "gpu_mib": plan.gpu_mib if plan.runs else None,
                    "excluded": list(plan.excluded), "gave_up": list(plan.gave_up)}
            if not plan.runs:
                row["status"] = "excluded"
            if r.device.id != device_id:
                row |= _predicted(variant_on(r, device_id) if plan.runs else None)
        row["device"] = device_id
        rows.append(row)
    return rows


def _draft_rows(cat: "Catalog", apps: set[str]) -> list[dict[str, Any]]:
    """The apps `catalog import` left in drafts/apps/: status `draft`, `blocked_by` what keeps them out."""
    from generator.importer import read_drafts

    rows = []
    for draft in read_drafts(cat.root):
        if draft.kind != "app" or draft.id in apps:
            continue
        rows.append({"name": draft.id, "title": draft.title or "", "model": draft.model or "", "stack":
                     draft.stack or "", "context": draft.context, "version": draft.version or "", "status": "draft",
                     "draft": draft.path, "blocked_by": list(draft.blocks), "tokens_per_s": None, "measured": None,
                     "smoke_verdict": None, "smoke_tokens_per_s": None, "smoke_date": None,
                     "smoke_chart_version": None, "speed_per_roof": None, "roof_tokens_per_s": None,
                     "roof_measured_tokens_per_s": None, "roof_source": None, "roof_loose": None,
                     "predicted_tokens_per_s": None, "predicted_full_context_tokens_per_s": None,
                     "predicted_band": None})
    return rows


ListDeviceOpt = Annotated[str | None, typer.Option(
    "--device", help="Only the apps that target this device, each as the fit plans it there (docs/devices.md).")]


@app.command("list")
def list_apps(catalog: CatalogOpt = None, as_json: JsonOpt = False, device: ListDeviceOpt = None) -> None:
    """List the apps: name, title, model, stack, context, version, status, last tokens/s, its fraction of the
    roofline (speed/roof), last smoke. With --device: the apps that target that device, with its context and
    roofline there (status `excluded` where the app's stack cannot run on it)."""
    cat = load_catalog(use_catalog(catalog, command="list", writes=False, quiet=as_json))
    rows = _device_rows(cat, device) if device is not None else _rows(cat)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.console import Console

    console = Console()
    if not console.is_terminal:  # piped or redirected: every column, as wide as it needs (nothing to fit)
        from rich.measure import Measurement

        table = _build([_cells(r) for r in rows], list(COLUMNS), _title(rows))
        wide = Measurement.get(console, console.options.update_width(100_000), table).maximum
        plain = Console(width=max(wide, 20), no_color=True)
        plain.print(table)
        _print_blocks(rows, plain)
        return
    # on a terminal the drafts are the lines under the table (their long draft stack names would crowd out the
    # columns that are never cut); piped and --json, they are rows too
    table, hidden = _table([r for r in rows if r["status"] != "draft"], console)
    console.print(table)
    if hidden:
        console.print(f"too narrow for: {', '.join(hidden)} (--json shows every field)",
                      style="dim", markup=False, highlight=False)
    _print_blocks(rows, console)


def _title(rows: list[dict[str, Any]]) -> str:
    drafts = sum(1 for row in rows if row["status"] == "draft")
    return plural(len(rows) - drafts, "app") + (f", {plural(drafts, 'draft')} (drafts/apps/)" if drafts else "")


def _print_blocks(rows: list[dict[str, Any]], console: "Console") -> None:
    """Under the table: each draft app and what blocks it (`catalog explain NAME` says more)."""
    from generator.core import safe_line

    for row in rows:
        if row["status"] == "draft":
            blocks = "; ".join(row["blocked_by"])
            # one line when piped; folded to the terminal's width on a terminal (a narrow one keeps every word)
            console.print(safe_line(f"draft {row['name']} ({row['draft']}): {blocks}"), markup=False,
                          highlight=False, soft_wrap=not console.is_terminal, overflow="fold")


# Columns in display order; DROP lists the ones that go first when the terminal is narrow (a column that is shown
# is never cut). name, version and status are always shown, in full (issue 42: at 80 columns they were dropped);
# speed/roof (the number a tuner wants) and stack go last.
COLUMNS = ("name", "title", "model", "stack", "context", "version", "status", "t/s", "pred t/s", "speed/roof",
           "smoke")
DROP = ("smoke", "t/s", "context", "title", "model", "pred t/s", "speed/roof", "stack")
RIGHT = ("context", "t/s", "pred t/s", "speed/roof")  # figures, right-aligned
TITLE_MIN = 12  # the one column that wraps; narrower than this it is dropped instead


def _cells(row: dict[str, Any]) -> dict[str, str]:
    from generator.core import markup

    tps = f"{row['tokens_per_s']:.1f}" if row["tokens_per_s"] else "—"
    roof = f"{row['speed_per_roof']:.0%}" if row["speed_per_roof"] is not None else "—"
    cells = {"name": row["name"], "title": row["title"], "model": row["model"], "stack": row["stack"],
             "context": f"{row['context']:,}" if row["context"] is not None else "—", "version": row["version"],
             "status": row["status"], "t/s": tps,
             "pred t/s": f"{row['predicted_tokens_per_s']:.0f}" if row.get("predicted_tokens_per_s") else "—",
             "speed/roof": roof, "smoke": _smoke(row)}
    return {k: markup(v) for k, v in cells.items()}  # catalog text: `[/bold]` and ESC shown, not interpreted


def _build(cells: list[dict[str, str]], columns: list[str], title: str) -> "Table":
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for col in columns:
        wide = max([cell_len(col), *(cell_len(row[col]) for row in cells)])
        title_col = col == "title"
        table.add_column(col, justify="right" if col in RIGHT else "left", no_wrap=not title_col,
                         overflow="fold", width=None if title_col else wide,
                         min_width=min(TITLE_MIN, wide) if title_col else None)
    for row in cells:
        table.add_row(*(row[c] for c in columns))
    return table


def _table(rows: list[dict[str, Any]], console: "Console") -> "tuple[Table, list[str]]":
    """The widest table that fits the console without shrinking a column; the dropped columns' names."""
    from rich.measure import Measurement

    cells = [_cells(r) for r in rows]
    title = _title(rows)

    def fits(columns: list[str]) -> bool:
        table = _build(cells, columns, title)
        return Measurement.get(console, console.options.update_width(10_000), table).minimum <= console.width

    columns = list(COLUMNS)
    dropped: list[str] = []
    for victim in DROP:
        if fits(columns):
            break
        columns.remove(victim)
        dropped.append(victim)
    for victim in reversed(dropped[:-1]):  # a narrower column dropped before a wide one may fit again
        tried = [c for c in COLUMNS if c in columns or c == victim]
        if fits(tried):
            columns = tried
    return _build(cells, columns, title), [c for c in COLUMNS if c not in columns]


def _smoke(row: dict[str, Any]) -> str:
    """Last smoke: verdict and tokens/s (the ledger's latest row)."""
    if not row["smoke_verdict"]:
        return "—"
    tps = f" {row['smoke_tokens_per_s']:.1f}" if row["smoke_tokens_per_s"] else ""
    return f"{row['smoke_verdict']}{tps}"

