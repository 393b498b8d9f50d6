"""`catalog sync UPSTREAM... [--dry-run] [--json]`: follow the upstream market (docs/sync.md).

Exit codes: 0 synced (or nothing to do); 1 an upstream chart could not be imported or a file is wrong (nothing
is written); 2 usage, git or the file system failed.
"""


import json
import sys
from typing import Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog

SourcesArg = Annotated[list[str], typer.Argument(help="The upstream: a folder of charts, a git URL, or .tgz "
                                                      "packages.", show_default=False)]


def _short(value: object, limit: int = 48) -> str:
    from generator.core.redact import redact
    from generator.core import safe_line

    text = redact(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return safe_line(text if len(text) <= limit else text[: limit - 1] + "…")


@app.command("sync")
def sync_(
    sources: SourcesArg,
    catalog: CatalogOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan; write nothing.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds a git clone may take in all.")] = 300.0,
    as_json: JsonOpt = False,
) -> None:
    """Merge what upstream changed into the catalog, three ways: the catalog's own apps and edits win (shown as
    conflicts), an app is removed only if upstream had it, no version moves unless its chart does."""
    from generator.adapters import Git
    from generator.core import safe_url
    from generator.core.redact import redact
    from generator.core import safe_line
    from generator.sync import sync

    cat = load_catalog(use_catalog(catalog, command="sync", writes=not dry_run, quiet=as_json))
    plan, writes = sync(list(sources), cat, git=Git(network_timeout_s=timeout, redact=redact), dry_run=dry_run)
    for warning in plan.warnings:
        sys.stderr.write(f"warning: {safe_line(redact(warning))}\n")
    if as_json:  # every value through the one redactor: upstream's values may carry a credential
        sys.stdout.write(redact(json.dumps({**plan.as_dict(), "dry_run": dry_run,
                                            "writes": [{"path": str(w.path), "what": w.what} for w in writes]},
                                           indent=2, ensure_ascii=False)) + "\n")
        return
    out = sys.stdout
    out.write(f"upstream: {safe_line(safe_url(plan.upstream))}" + (f" @ {plan.commit}" if plan.commit else "")
              + "\n")
    out.write(f"{'app':<32} {'status':<10} {'upstream':<9} {'catalog':<9} {'new':<9} changes\n")
    for a in plan.apps:
        facets = sorted({c.facet for c in a.changes})
        conflicts = f" ({len(a.conflicts)} conflict(s))" if a.conflicts else ""
        out.write(f"{safe_line(a.app):<32} {a.status:<10} {a.upstream_version or '-':<9} "
                  f"{a.catalog_version or '-':<9} {a.new_version or '-':<9} {', '.join(facets) or '-'}{conflicts}\n")
        for c in a.changes:
            if c.kind != "lands":
                out.write(f"    {c.kind}: {safe_line(c.field)}: ours {_short(c.ours)}, upstream {_short(c.theirs)}"
                          f" — {_short(c.reason, 120)}\n")
        if a.status in ("skipped", "error", "kept", "held", "removed", "dropped") and a.detail:
            out.write(f"    {_short(a.detail, 160)}\n")
    summary = plan.summary()
    out.write(", ".join(f"{n} {k}" for k, n in summary.items()) + "\n")
    if dry_run:
        out.write(f"dry run: {len(writes)} file(s) would be written\n")
    else:
        out.write(f"wrote {len(writes)} file(s)\n")
