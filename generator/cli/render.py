"""`catalog render`: write charts/<app>/ for every app (or the named ones); `--check` only diffs.

The manifest format is the catalog's profile (catalog/market.yaml, docs/profiles.md): olares-v3 (0.12.0 / v3) for
Olares >= 1.12.6, olares-v2 (0.10.0 / v2) for Olares <= 1.12.5; `--profile` picks one for this render.

The output folder is the tool's alone (generator/chart/writer.py, docs/security.md): a folder holding
anything `catalog render` did not write is refused with exit 2 and nothing is deleted.
"""


import sys

import typer

from pathlib import Path
from typing import Annotated

from generator.cli.app import AppsArg, CatalogOpt, app, default_out, load_catalog, refuse_inside_package, use_catalog


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@app.command()
def render(
    apps: AppsArg = None,
    catalog: CatalogOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default: charts/ beside the catalog); "
                                                "new, empty, or written by catalog render before.")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Write nothing; exit 1 with a diff when charts are stale.")] = False,
    profile: Annotated[str | None, typer.Option(
        "--profile", help="Manifest format for this render (default: catalog/market.yaml's, else olares-v3): "
                          "olares-v3 = olaresManifest 0.12.0 / apiVersion v3, for Olares 1.12.6 and later; "
                          "olares-v2 = 0.10.0 / v2, for Olares 1.12.5 and earlier.")] = None,
) -> None:
    """Render apps into Olares application charts: olares-v3 (0.12.0/v3, Olares >= 1.12.6) by default, olares-v2
    (0.10.0/v2, Olares <= 1.12.5) with --profile olares-v2 or `profile: olares-v2` in catalog/market.yaml."""
    from generator.chart import render_apps, rendered_apps
    from generator.chart import get_profile
    from generator.chart import diff_tree, manifest_diff, read_tree, stale_folders, write_charts
    from generator.core import safe_line

    if out is not None and not check:
        refuse_inside_package(out, "render")
    if profile is not None:
        get_profile(profile)  # an unknown name is a usage error naming the known ones, before anything is read
    catalog = use_catalog(catalog, command="render", writes=not check, into_catalog=out is None)
    cat = load_catalog(catalog)
    out = out or default_out(catalog)
    chosen = [r for r in cat.select(apps or []) if r.app.status != "removed"]
    charts = render_apps(chosen, profile)
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
