"""`catalog site --out DIR`: the store page of `catalog serve` as static files."""


import sys
from pathlib import Path
from typing import Annotated

import typer

from generator.core import plural
from generator.cli.app import CatalogOpt, app, display_path, refuse_inside_package


@app.command()
def site(
    out: Annotated[Path, typer.Option("--out", help="Folder to write index.html and plots/ into.")],
    catalog: CatalogOpt = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="The running Market Source (`catalog serve`): chart download links point there.")] = None,
) -> None:
    """Write the store page (every app by model, its last smoke, tokens/s history and memory fit) as static files.

    Files are written only when they change: a second run with the same catalog writes nothing."""
    from generator.cli.serve import public_url, sources_for
    from generator.core import require
    from generator.market import check_site_folder, write_site
    from generator.market import build
    from generator.market import PackageCache

    require("matplotlib", "market")
    refuse_inside_package(out, "site")
    url = public_url(base_url) if base_url else None  # package links are public: no credentials in them
    sources = sources_for(catalog, url, command="site")
    check_site_folder(out, (sources.catalog, sources.charts))  # before the build: a bad --out costs nothing
    built = build(sources, PackageCache(), chart_base=f"{url}/" if url else None)
    written = write_site(built.page, out)
    for problem in built.problems:
        print(f"warning: {problem}", file=sys.stderr)
    print(f"{display_path(out / 'index.html')}: {plural(len(built.page.apps), 'app')}, "
          f"{plural(len(built.page.plots), 'plot')}; "
          f"{len(written)} file(s) written")
