"""`catalog check`: rules and chart lint for every app (or the named ones, or those a PR changed).

Exit codes: 0 clean (warnings allowed), 1 findings, 2 usage or internal error.
"""


import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import AppsArg, CatalogOpt, JsonOpt, app, default_out, load_catalog, use_catalog

if TYPE_CHECKING:
    from rich.console import Console

    from generator.adapters import Helm
    from generator.catalog import Catalog
    from generator.core import Finding

NoLintOpt = Annotated[bool, typer.Option("--no-lint", help="Skip the chart lint (Helm engine, Kubernetes schemas, "
                                                           "Olares chart rules).")]
BaseOpt = Annotated[str | None, typer.Option(
    "--base", metavar="REF", help="PR mode: check only the apps changed since the merge-base with REF, plus render "
                                  "drift and chart-testing's version increment against REF.")]


NoDriftOpt = Annotated[bool, typer.Option("--no-drift", help="Skip render drift: by default a chart in charts/ that "
                                                             "differs from what `catalog render` writes is an error.")]


@app.command()
def check(apps: AppsArg = None, catalog: CatalogOpt = None, as_json: JsonOpt = False, no_lint: NoLintOpt = False,
          base: BaseOpt = None, no_drift: NoDriftOpt = False) -> None:
    """Check apps: catalog validity, crash rules, memory fit, the rendered chart (lint) and render drift."""
    from rich.console import Console

    from generator.check import check_json, print_check

    annotate = os.environ.get("GITHUB_ACTIONS") == "true"
    catalog = use_catalog(catalog, command="check", writes=False, quiet=as_json)
    cat = _load(catalog, annotate)
    charts = default_out(catalog)
    err = Console(stderr=True)
    with err.status("checking", spinner="dots") if (not as_json and err.is_terminal) else _Quiet() as status:
        def progress(name: str) -> None:
            if status is not None:
                status.update(f"checking {name}")
        if base:
            from generator.adapters import Git
            from generator.check import check_changed

            scope, results = check_changed(cat, charts, base, git=Git(), helm=_helm(no_lint), lint=not no_lint,
                                           on_app=progress)
            if not as_json:
                err.print(f"PR check against {base}: {scope.why}", highlight=False)
        else:
            from generator.check import check_all

            results = check_all(cat, cat.select(apps or []), lint=not no_lint, charts=charts, helm=_helm(no_lint),
                                on_app=progress, drift=not no_drift, every=not apps)
            if not no_drift and not charts.is_dir() and not as_json:
                err.print(f"no {charts.name}/ beside the catalog: render drift not checked (`catalog render` "
                          "writes it)", highlight=False)
    if as_json:
        sys.stdout.write(check_json(results) + "\n")
    else:
        print_check(results, Console())
        _say_oac(err, no_lint)
    if annotate:
        _annotations([f for r in results for f in r.findings])
    raise typer.Exit(1 if any(not r.ok for r in results) else 0)


def _helm(no_lint: bool) -> "Helm | None":
    """The Helm engine the lint uses; none without lint (nothing else of `check` calls it)."""
    if no_lint:
        return None
    from generator.adapters import Helm

    return Helm()


def _say_oac(err: "Console", no_lint: bool) -> None:
    """Say plainly when the platform's own validator (oac) did not judge the charts (generator/lint/oac.py)."""
    if no_lint:
        why: str | None = "the platform's validator (oac) did not run: --no-lint"
    else:
        from generator.lint import why_not_run

        why = why_not_run()
    if why is not None:
        err.print(why, highlight=False)


def _load(catalog: Path | None, annotate: bool) -> "Catalog":
    """Load the catalog; in GitHub Actions, a broken file also becomes an annotation on its line."""
    from generator.core import CatalogError

    try:
        return load_catalog(catalog)
    except CatalogError as exc:
        if annotate:
            from generator.core import Finding

            _annotations([Finding("CATALOG", "error", "", p.message if not p.field else f"{p.field}: {p.message}",
                                  file=p.file, line=p.line) for p in exc.problems])
        raise


def _annotations(findings: "list[Finding]") -> None:
    from generator.check import annotation

    for finding in findings:
        if finding.severity in ("error", "warning"):
            print(annotation(finding), flush=True)


class _Quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
