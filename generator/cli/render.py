"""`catalog render`: write charts/<app>/ for every app (or the named ones); `--check` only diffs.

The output folder is the tool's alone (generator/chart/writer.py, docs/security.md): a folder holding
anything `catalog render` did not write is refused with exit 2 and nothing is deleted.
"""

from __future__ import annotations

import sys

import typer

from pathlib import Path
from typing import Annotated, Optional

from generator.cli.app import AppsArg, CatalogOpt, app, default_out, load_catalog, refuse_inside_package, use_catalog


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@app.command()
def render(
    apps: AppsArg = None,
    catalog: CatalogOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Output folder (default: charts/ beside the catalog); "
                                                "new, empty, or written by catalog render before.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 with a diff when charts are stale.")] = False,
) -> None:
    """Render apps into Olares v3 application charts."""
    from generator.chart.pipeline import render_apps, rendered_apps
    from generator.chart.writer import diff_tree, manifest_diff, read_tree, stale_folders, write_charts
    from generator.core.text import safe_line

    if out is not None and not check:
        refuse_inside_package(out, "render")
    catalog = use_catalog(catalog, command="render", writes=not check, into_catalog=out is None)
    cat = load_catalog(catalog)
    out = out or default_out(catalog)
    chosen = [r for r in cat.select(apps or []) if r.app.status != "removed"]
    charts = render_apps(chosen)
    every = not apps
    if check:
        lines: list[str] = []
        for name, tree in charts.items():
            lines += diff_tree(name, read_tree(out / name), tree)
        names = {r.app.name for r in rendered_apps(cat)}
        stale = stale_folders(out, names) if every else []
        for name in stale:
            lines += diff_tree(safe_line(name), read_tree(out / name), {})
        if every and (lines or out.is_dir()):
            lines += manifest_diff(out, names)  # the list of owned folders, committed beside the charts
        if lines:
            sys.stdout.writelines(lines)
            print("stale: charts differ from a fresh render; run `catalog render`", file=sys.stderr)
            raise typer.Exit(1)
        print(f"up to date: {len(charts)} chart(s) in {safe_line(out)}")
        return
    removed = write_charts(out, charts, prune_others=every, on_wait=_say)
    for name in removed:
        print(f"removed stale {safe_line(out / name)}")
    print(f"rendered {len(charts)} chart(s) into {safe_line(out)}")
