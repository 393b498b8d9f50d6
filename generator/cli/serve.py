"""`catalog serve`: be the Olares Market Source of the catalog's released versions (docs/market-source.md)."""


import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from generator.core import plural
from generator.cli.app import CatalogOpt, app, default_out, use_catalog

if TYPE_CHECKING:
    from generator.market import LedgerReader
    from generator.market import Sources


def ledger_reader() -> "LedgerReader":
    """The store page's view of the smoke ledger, read by the smoke stage's own reader (see market/history.py)."""
    from generator.market import SmokePoint
    from generator.smoke import history

    def read(root: Path, app_name: str) -> list[SmokePoint]:
        rows = history(root, app_name)
        return [SmokePoint(r.when, r.chart_version, r.tokens_per_s, r.verdict, r.image) for r in rows]

    return read


def public_url(url: str) -> str:
    """A `--base-url` as it may be shown and published: without userinfo and with secret query values masked (the
    one redactor, core/redact.py `safe_url`). The store page and its package links are public, and Olares adds a
    source by its bare URL: a `user:password@` there would only leak (issue 40 cause 6)."""
    from generator.core import safe_url

    bare = safe_url(url).rstrip("/")
    if bare != url.rstrip("/"):
        print("warning: --base-url holds credentials or a secret query value; they are left out of everything "
              f"shown and written: {bare}", file=sys.stderr)
    return bare


def sources_for(catalog: Path | None, source_url: str | None, *, command: str) -> "Sources":
    """Where the market is built from: the catalog the command uses (cli/discovery.py), charts/ beside it. The
    source URL is the public one (`public_url`)."""
    from generator.market import Sources

    root = use_catalog(catalog, command=command, writes=False)
    return Sources(root, default_out(root), ledger_reader(), public_url(source_url) if source_url else None)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8787,
    catalog: CatalogOpt = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="The URL users add in Olares (default http://HOST:PORT); shown on the store page.")] = None,
    poll: Annotated[float, typer.Option("--poll", min=0.1, help="Seconds between looks at the catalog's files.")] = 1.0,
    access_log: Annotated[bool, typer.Option("--access-log/--no-access-log", help="Log every request.")] = True,
) -> None:
    """Serve the released versions of the catalog as an Olares Market Source, and the store page at /.

    Olares polls GET /api/v1/appstore/hash every 5 minutes, then /appstore/info and POST /applications/info
    when the hash changed, and downloads /api/v1/applications/<app>/chart?fileName=<app>-<version>.tgz.
    Answers are rebuilt when releases.yaml, the charts or the ledger change; the server is not restarted."""
    import importlib.util

    from generator.core import missing_module
    from generator.core import require

    uvicorn = require("uvicorn", "market")
    require("starlette", "market")
    require("httptools", "market")
    # the store page's plots, drawn when first shown: a missing matplotlib stops the start, but it is only looked
    # for here (importing it and numpy is ~0.3 s of the start, bench/RESULTS.md)
    if importlib.util.find_spec("matplotlib") is None:
        raise missing_module("matplotlib", "market")
    from generator.market import make_app, olares_range
    from generator.market import KEEP_ALIVE_S, GuardedHttpToolsProtocol, connection_cap
    from generator.market import start

    url = public_url(base_url or f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}")
    holder, watcher = start(sources_for(catalog, url, command="serve"), interval=poll)
    snap = holder.snapshot
    print(f"serving {plural(len(snap.build.entries), 'app')} ({plural(len(snap.charts), 'chart package')}, "
          f"hash {snap.build.hash}) "
          f"on http://{host}:{port}; in Olares: Market -> Settings -> Add source -> {url}", file=sys.stderr)
    for name, answers in snap.formats.items():
        print(f"  {name} for Olares {olares_range(name)}: {len(answers.build.entries)} apps, hash "
              f"{answers.build.hash}", file=sys.stderr)
    for problem in snap.problems:
        print(f"warning: {problem}", file=sys.stderr)
    GuardedHttpToolsProtocol.cap = connection_cap()
    try:
        # docs/security.md "The market source over HTTP": the limits a reverse proxy would give (market/limits.py)
        uvicorn.run(make_app(holder, on_start=watcher.listening.set), host=host, port=port, log_level="info",
                    access_log=access_log, server_header=False, timeout_graceful_shutdown=5,
                    http=GuardedHttpToolsProtocol, timeout_keep_alive=KEEP_ALIVE_S,
                    backlog=GuardedHttpToolsProtocol.cap)
    finally:
        watcher.stop()
