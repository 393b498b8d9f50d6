"""`catalog publish`: put recorded app versions into a market repo, an OCI registry or a Helm repo folder."""


import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import AppsArg, CatalogOpt, JsonOpt, app, use_catalog
from generator.core import UsageError

if TYPE_CHECKING:
    from generator.publish import Item, Result, Target


def _summary(results: "list[Result]", as_json: bool) -> None:
    from generator.core.redact import redact

    # A target URL may carry credentials (oci://user:pass@host/...): every cell passes the one redactor.
    rows = [{"app": r.app, "version": r.version, "target": redact(r.target), "action": r.action,
             "detail": redact(r.detail)} for r in results]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    from generator.core import markup as escape

    table = Table(title=f"publish: {sum(r.ok for r in results)}/{len(results)} ok")
    for col in ("app", "version", "target", "action", "detail"):
        table.add_column(col, no_wrap=col in ("app", "version", "action"), overflow="fold")
    styles = {"published": "green", "skipped": "dim", "would publish": "cyan", "refused": "red", "failed": "red"}
    for r in rows:
        style = styles.get(r["action"], "none")
        table.add_row(escape(r["app"]), escape(r["version"]), escape(r["target"]), f"[{style}]{r['action']}[/]",
                      escape(r["detail"]))
    Console(width=max(Console().width, 120)).print(table)


def _run_with_progress(target: "Target", items: "list[Item]", dry_run: bool, catalog: Path) -> "list[Result]":
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from generator.core.redact import redact
    from generator.core import markup
    from generator.publish import run
    from generator.rules import load_sync

    def escape(text: str) -> str:
        return markup(redact(text))

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(escape(f"publishing to {target.label}"), total=len(items))

        def step(result: "Result") -> None:
            progress.update(task, advance=1, description=escape(f"{result.app} {result.version}: {result.action}"))

        return run(target, items, dry_run=dry_run, step=step, upstream=load_sync(catalog))


@app.command()
def publish(
    to: Annotated[str, typer.Option(
        "--to", help="git:PATH_OR_URL or git:PATH_OR_URL#BRANCH (default main), oci://HOST/PATH, dir:PATH, "
                     "or market:DIR.")],
    apps: AppsArg = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Decide and report; change nothing.")] = False,
    plain_http: Annotated[bool, typer.Option("--plain-http", help="OCI: the registry speaks plain HTTP.")] = False,
    registry_config: Annotated[Path | None, typer.Option(
        "--registry-config", help="OCI: docker-config-style credentials file.")] = None,
    github_api: Annotated[str | None, typer.Option(
        "--github-api", help="git: GitHub REST API base URL (GitHub Enterprise, tests).")] = None,
    pr_repo: Annotated[str | None, typer.Option(
        "--pr-repo", help="git: OWNER/REPO to open pull requests against (a fork's upstream).")] = None,
    draft: Annotated[bool, typer.Option(
        "--draft/--ready", help="git: open pull requests as drafts (GitBot checks on ready).")] = True,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=1.0, help="Total deadline in seconds of each network call: registry, git fetch/push, "
                                   "GitHub API.")] = 120.0,
    remove: Annotated[bool, typer.Option("--remove", help="git: send the REMOVE pull request of apps marked removed "
                                                          "(irreversible: the name can never be used again).")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm --remove.")] = False,
    catalog: CatalogOpt = None,
    as_json: JsonOpt = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Publish apps that `catalog check` fails too (said on stderr, app by app).")] = False,
) -> None:
    """Publish the recorded version of each app; already published content is skipped, other content refused.

    An app that `catalog check` fails (crash rules, memory fit, chart lint) is refused, its findings on stderr,
    unless --force. Apps marked `removed` are left alone unless `--remove --yes`: `catalog prune` prepares the
    reversible SUSPEND, and a REMOVE pull request deletes the market folder for good."""
    from generator.cli.gate import check_gate, enforce
    from generator.publish import Result
    from generator.adapters import Git
    from generator.adapters import DEFAULT_API, GitHubApi
    from generator.adapters import Helm
    from generator.publish import Tools, make_target
    from generator.publish import items_for
    from generator.publish import github_token

    tools = Tools(git=Git(network_timeout_s=timeout), helm=Helm(),
                  github=GitHubApi(api=github_api or DEFAULT_API, token=github_token(), timeout_s=timeout),
                  timeout_s=timeout)
    target = make_target(to, tools, plain_http=plain_http, registry_config=registry_config, pr_repo=pr_repo,
                         draft=draft)
    if remove and not yes:
        raise UsageError("--remove sends irreversible REMOVE pull requests (the app name can never be used again); "
                         "add --yes to confirm")
    catalog = use_catalog(catalog, command="publish", writes=not dry_run, into_catalog=False, quiet=as_json)
    items, refused = items_for(catalog, apps, target.label, with_removed=remove and to.startswith("git:"))
    gated = enforce(check_gate(catalog, [i.app for i in items if i.status != "removed"], drift=True),
                    command="publish", force=force)
    refused += [Result(i.app, i.version, target.label, "refused", "`catalog check` fails (see stderr); fix it, or "
                       "--force") for i in items if i.app in gated]
    items = [i for i in items if i.app not in gated]
    results = refused + (_run_with_progress(target, items, dry_run, catalog) if items else [])
    _summary(results, as_json)
    bad = [r for r in results if not r.ok]
    if bad:
        print(f"{len(bad)} of {len(results)} not published; see the table", file=sys.stderr)
        raise typer.Exit(1)
