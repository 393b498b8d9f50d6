"""`catalog bump`: raise the version of every app whose rendered chart changed since its recorded release."""


import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from generator.core import plural
from generator.cli.app import AppsArg, CatalogOpt, JsonOpt, app, default_out, use_catalog
from generator.core import UsageError

if TYPE_CHECKING:
    from generator.versions import BumpRun, Outcome


class Level(StrEnum):
    patch = "patch"
    minor = "minor"
    major = "major"


def _table(rows: list[dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("app", "from", "to", "action", "level", "changes"):
        table.add_column(col, no_wrap=col != "changes", overflow="fold")
    for row in rows:
        table.add_row(row["app"], row["from"] or "—", row["to"], row["action"], row["level"] or "",
                      "\n".join(row["changes"]))
    Console().print(table)


def _row(o: "Outcome") -> dict[str, Any]:
    return {"app": o.app, "from": o.before, "to": o.after, "action": o.action, "level": o.level,
            "changes": [c.bullet[2:] for c in o.changes], "message": o.message}


def _check(run: "BumpRun", catalog: Path | None, out: Path | None, base: str | None) -> None:
    from generator.versions import check_message

    problems = [m for m in (check_message(o) for o in run.outcomes) if m]
    if base:
        from generator.adapters import Git
        from generator.versions import version_problems

        charts = out or default_out(catalog)
        problems += version_problems(charts, base, {n: c.tree for n, c in run.currents.items()}, Git())
    from generator.core import safe_line

    for line in problems:
        print(safe_line(line), file=sys.stderr)  # app values reach these lines: one line each, escaped
    if problems:
        print(f"{plural(len(problems), 'app')} need{'s' if len(problems) == 1 else ''} `catalog bump`", file=sys.stderr)
        raise typer.Exit(1)
    above = f", each above {base} where changed" if base else ""
    print(f"versions up to date: {plural(len(run.outcomes), 'app')}{above}")


@app.command()
def bump(
    apps: AppsArg = None,
    level: Annotated[Level | None, typer.Option(
        "--level", help="Force the semver level (default: inferred from the change).")] = None,
    note: Annotated[str | None, typer.Option(
        "--note", help="An extra changelog line (with named apps: bump even without a chart change).")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Write nothing; exit 1 when an app changed without a bump.")] = False,
    base: Annotated[str | None, typer.Option(
        "--base", help="With --check: a changed chart needs a version above the one at this git ref "
                       "(chart-testing's rule).")] = None,
    record: Annotated[bool, typer.Option(
        "--record", help="Record the current content as the current version, without bumping "
                         "(seeding; never for published versions).")] = False,
    catalog: CatalogOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Charts folder to re-render (default: charts/ beside the catalog).")] = None,
    as_json: JsonOpt = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Bump apps that `catalog check` fails too (said on stderr, app by app).")] = False,
) -> None:
    """Raise app versions whose chart content changed; write CHANGELOG.md, upgrade_description, releases.yaml.

    An app that `catalog check` fails (crash rules, memory fit, chart lint) is refused, its findings on stderr,
    unless --force."""
    from generator.cli.gate import check_gate, enforce
    from generator.versions import Outcome, apply, assess_catalog, record_current

    if base and not check:
        raise UsageError("--base works with --check (it compares against the charts at a git ref)")
    if record and (check or level or note):
        raise UsageError("--record takes no --check, --level or --note")
    catalog = use_catalog(catalog, command="bump", writes=not check, quiet=as_json)
    run = assess_catalog(catalog, apps, level=level.value if level else None, note=note)
    if check:
        return _check(run, catalog, out, base)
    moving = [n for n in run.currents] if record else [o.app for o in run.outcomes
                                                         if o.writes_entry or o.action == "new"]
    gated = enforce(check_gate(catalog, moving), command="bump", force=force)  # said on stderr, with the fix
    for name in gated:
        if record:
            run.currents.pop(name, None)
        run.outcomes = [Outcome(o.app, o.before, o.before or o.after, "refused",
                                message="`catalog check` fails (above); fix it, or --force")
                        if o.app == name else o for o in run.outcomes]
    done = record_current(run) if record else apply(run, out or default_out(catalog))
    refused = [o for o in run.outcomes if o.action == "refused"]
    rows = [_row(o) for o in done + refused]
    if as_json:
        print(json.dumps(rows, indent=2))
    elif rows:
        _table(rows, f"{plural(len(done), 'app')} recorded or bumped")
    else:
        print(f"nothing to bump: {plural(len(run.outcomes), 'app')} match their recorded release")
    for o in refused:
        if o.app not in gated:  # a gate refusal was said above, once
            print(f"{o.app}: {o.message}", file=sys.stderr)
    if refused:
        raise typer.Exit(1)
