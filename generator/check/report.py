"""Output of `catalog check` and `catalog explain`: rich tables for people, JSON for machines. No logic."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from generator.check.run import AppResult

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def check_json(results: list[AppResult]) -> str:
    errors = sum(r.count("error") for r in results)
    warnings = sum(r.count("warning") for r in results)
    return json.dumps({"apps": [r.as_dict() for r in results], "errors": errors, "warnings": warnings}, indent=2)


def _counts(result: AppResult) -> str:
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for word, n in (("error", result.count("error")),
                                                                   ("warning", result.count("warning"))) if n]
    return ", ".join(parts)


def print_check(results: list[AppResult], console: Console) -> None:
    for result in results:
        mark = "[green]✔[/]" if result.ok else "[bold red]✖[/]"
        status = "" if result.status == "active" else f" [dim]({result.status})[/]"
        counts = _counts(result)
        console.print(f"{mark} [bold]{result.app}[/]{status}" + (f"  {counts}" if counts else ""), highlight=False)
        for f in result.findings:
            where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
            console.print(f"    [{STYLE.get(f.severity, '')}]{f.severity:<7}[/] [bold]{f.rule}[/] {escape(f.message)}",
                          highlight=False, soft_wrap=True)
            if f.fix:
                console.print(f"            fix: {escape(f.fix)}", highlight=False, soft_wrap=True)
            if where:
                console.print(f"            at  {escape(where)}", style="dim", highlight=False, soft_wrap=True)
    failed = sum(1 for r in results if not r.ok)
    errors, warnings = sum(r.count("error") for r in results), sum(r.count("warning") for r in results)
    verdict = "[bold red]FAILED[/]" if failed else "[green]ok[/]"
    console.print(f"\n{verdict}: {len(results)} app(s) checked, {len(results) - failed} passed, {failed} failed; "
                  f"{errors} error(s), {warnings} warning(s)", highlight=False)


# ---- explain ------------------------------------------------------------------------------------------

def explain_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, default=str)


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    for col in columns:
        table.add_column(col, overflow="fold", justify="right" if col == "MiB" else "left")
    return table


def print_explain(data: dict[str, Any], console: Console) -> None:
    console.print(f"[bold]{data['app']}[/] — {escape(data['title'])}  [dim]{data['stack']} · {data['image']}[/]",
                  highlight=False)
    if data["command"]:
        console.print(f"command: {escape(' '.join(data['command']))}", highlight=False)
    args = _table("Arguments (last occurrence of a flag wins)", "argument", "origin", "note")
    for arg in data["args"]:
        args.add_row(escape(" ".join(arg["tokens"])), arg["origin"], escape("; ".join(arg["notes"])))
    console.print(args)
    env = _table("Environment", "name", "value", "origin")
    for var in data["env"]:
        env.add_row(var["name"], escape(var["value"]), var["origin"])
    for var in data["overridden_env"]:
        env.add_row(f"[strike dim]{var['name']}[/]", f"[strike dim]{escape(var['value'])}[/]",
                    f"[dim]{var['origin']} (overridden by {var['by']})[/]")
    console.print(env)
    if data["genesis"]:
        patches = _table("Genesis patches", "patch", "state", "why", "purpose")
        for p in data["genesis"]:
            patches.add_row(p["id"], "[green]on[/]" if p["on"] else "off", escape(p["why"]), escape(p["purpose"]))
        console.print(patches)
    _print_fit(data["fit"], console)


def _print_fit(fit: dict[str, Any], console: Console) -> None:
    style = {"FIT": "green", "TIGHT": "yellow", "FAIL": "bold red"}[fit["verdict"]]
    table = _table(f"Memory — [{style}]{escape(fit['summary'])}[/]", "component", "MiB", "basis", "note")
    for pool in fit["pools"]:
        table.add_row(f"[bold]{escape(pool['title'])}[/]", f"[bold]{pool['capacity_mib']:,.0f}[/]", "",
                      escape(pool["note"]))
        for part in (p for p in fit["parts"] if p["pool"] == pool["key"]):
            table.add_row(f"  {escape(part['component'])}", f"{part['mib']:,.0f}", part.get("basis", ""),
                          escape(part["note"]))
        margin = fit["margins"][pool["key"]]
        mstyle = "red" if margin < 0 else ""
        table.add_row("  = margin", f"[{mstyle}]{margin:,.0f}[/]" if mstyle else f"{margin:,.0f}", "", "",
                      end_section=True)
    console.print(table)
    for line in fit["facts"]:
        console.print(escape(line), highlight=False)
    for line in fit["calibrated"]:
        console.print(f"calibrated: {escape(line)}", highlight=False)
    for line in fit["assumptions"]:
        console.print(f"[dim]assumption: {escape(line)}[/]", highlight=False)


__all__ = ["check_json", "explain_json", "print_check", "print_explain"]
