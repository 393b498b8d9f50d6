"""Output of `catalog check` and `catalog explain`: rich tables for people, JSON for machines. No logic.

Every value placed in a rich string comes from a catalog file or a tool's message, so it passes
`escape` (generator/core/terminal.py: rich markup shown as text, control characters and ESC sequences
made visible) before it reaches the terminal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from generator.core import markup as escape
from generator.core import safe_line

if TYPE_CHECKING:  # `catalog check` prints through none of these: the explain half imports them on use
    from rich.console import Console
    from rich.table import Table

    from generator.check.explain import CardPlan, Explanation
    from generator.check.run import AppResult
    from generator.fit import DevicePlan
    from generator.fit import Fit
    from generator.fit import Speeds

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
        status = "" if result.status == "active" else f" [dim]({escape(result.status)})[/]"
        counts = _counts(result)
        console.print(f"{mark} [bold]{escape(result.app)}[/]{status}" + (f"  {counts}" if counts else ""),
                      highlight=False)
        for f in result.findings:
            where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
            style = STYLE.get(f.severity, "")
            console.print(f"    [{style}]{f.severity:<7}[/] [bold]{escape(f.rule)}[/] {escape(safe_line(f.message))}",
                          highlight=False, soft_wrap=True)
            if f.fix:
                console.print(f"            fix: {escape(safe_line(f.fix))}", highlight=False, soft_wrap=True)
            if where:
                console.print(f"            at  {escape(safe_line(where))}", style="dim", highlight=False,
                              soft_wrap=True)
    failed = sum(1 for r in results if not r.ok)
    errors, warnings = sum(r.count("error") for r in results), sum(r.count("warning") for r in results)
    verdict = "[bold red]FAILED[/]" if failed else "[green]ok[/]"
    console.print(f"\n{verdict}: {len(results)} app(s) checked, {len(results) - failed} passed, {failed} failed; "
                  f"{errors} error(s), {warnings} warning(s)", highlight=False)


# ---- explain ------------------------------------------------------------------------------------------

def explain_json(data: Explanation) -> str:
    return json.dumps(data.to_data(), indent=2, default=str)


def _table(title: str, *columns: str) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    for col in columns:
        table.add_column(col, overflow="fold", justify="right" if col == "MiB" else "left")
    return table


def print_explain(data: Explanation, console: Console) -> None:
    console.print(f"[bold]{data.app}[/] — {escape(data.title)}  [dim]{data.stack} · {data.image}[/]",
                  highlight=False)
    if data.command:
        console.print(f"command: {escape(' '.join(data.command))}", highlight=False)
    args = _table("Arguments (last occurrence of a flag wins)", "argument", "origin", "note")
    for arg in data.args:
        args.add_row(escape(" ".join(arg.tokens)), arg.origin, escape("; ".join(arg.notes)))
    console.print(args)
    env = _table("Environment", "name", "value", "origin")
    for var in data.env:
        env.add_row(var.name, escape(var.value), var.origin)
    for var in data.overridden_env:
        env.add_row(f"[strike dim]{var.name}[/]", f"[strike dim]{escape(var.value)}[/]",
                    f"[dim]{var.origin} (overridden by {var.by})[/]")
    console.print(env)
    if data.genesis:
        patches = _table("Genesis patches", "patch", "state", "why", "purpose")
        for p in data.genesis:
            patches.add_row(p.id, "[green]on[/]" if p.on else "off", escape(p.why), escape(p.purpose))
        console.print(patches)
    if data.gpu is not None:
        gpu = _table("GPU memory: three values (docs/devices.md \"Three numbers\")", "value", "MiB", "origin")
        for label, value in data.gpu.rows():
            gpu.add_row(label, f"{value.mib:,}", escape(value.origin))
        console.print(gpu)
    _print_fit(data.fit, console)
    _print_roofline(data, console)
    print_speeds(data.speeds, console)
    if data.devices:
        print_devices(data.devices, console)
    if data.shared:
        console.print("[bold]Shared form settings[/] (docs/forms.md)", highlight=False)
        for line in data.shared:
            console.print(f"  {escape(line)}", highlight=False)


def _tps(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def print_devices(plans: tuple[DevicePlan, ...], console: Console) -> None:
    """One row per device the app targets: its context, KV, memory envelope and roofline, or why it is excluded."""
    table = _table("Devices (docs/devices.md)", "device", "mode", "stack", "context", "KV", "MiB", "fit",
                   "roof t/s empty/full", "gave up / excluded")
    for d in plans:
        name = f"{escape(d.name)}{' (own)' if d.primary else ''}"
        if not d.runs:
            table.add_row(name, d.accelerator, d.stack, "—", "—", "—", "[red]excluded[/]", "—",
                          escape("; ".join(d.excluded)))
            continue
        context = f"{d.context:,}" + (" (fit)" if d.context_chosen else "")
        table.add_row(name, d.accelerator, d.stack, context, escape(d.kv), f"{d.gpu_mib:,}", d.verdict,
                      f"{_tps(d.roof_empty_tps)}/{_tps(d.roof_full_tps)}", escape("; ".join(d.gave_up)))
    console.print(table)


def device_json(data: DevicePlan) -> str:
    return json.dumps(data.to_data(), indent=2)


def print_speeds(found: Speeds | None, console: Console) -> None:
    """The speed model's two predictions (generator/fit/speed.py), each with its band and how it was found."""
    if found is None:
        console.print("[dim]predicted speed: the device states no memory_bandwidth_gb_s[/]", highlight=False)
        return
    for label, p in (("short context", found.short), ("full context", found.full)):
        console.print(f"[bold]predicted ({label})[/]: {escape(p.line)}", highlight=False)


def _print_roofline(data: Explanation, console: Console) -> None:
    """The decode-speed bound: the bytes a step reads, the bandwidth, the bound and the measured fraction of it."""
    roof = data.roofline
    if roof is None:
        console.print("[dim]roofline: the device states no memory_bandwidth_gb_s[/]", highlight=False)
        return
    table = _table(f"Roofline — {roof.bound_tps:,.1f} t/s at most on {escape(roof.device)} "
                   f"({roof.bandwidth_gb_s:,.0f} GB/s)", "bytes read a step", "GB", "note")
    for component, gb, note in roof.parts():
        table.add_row(escape(component), f"{gb:,.2f}", escape(note))
    table.add_row("= total", f"{roof.bytes_per_token / 1e9:,.2f}", "", end_section=True)
    console.print(table)
    console.print(escape(roof.explain()), highlight=False)
    full = data.roofline_full
    if full is not None and full.context != roof.context:
        console.print(f"at the whole {full.context:,}-token context: {full.bound_tps:,.1f} t/s at most",
                      highlight=False)
    if data.reading is not None:
        console.print(f"[bold]speed/roof[/]: {escape(data.reading.line())}", highlight=False)
    else:
        console.print("[dim]speed/roof: no benchmark or passing smoke to compare[/]", highlight=False)


def _print_fit(fit: Fit, console: Console) -> None:
    from generator.fit import basis_of

    style = {"FIT": "green", "TIGHT": "yellow", "FAIL": "bold red"}[fit.verdict]
    table = _table(f"Memory — [{style}]{escape(fit.summary())}[/]", "component", "MiB", "basis", "note")
    for pool in fit.pools:
        table.add_row(f"[bold]{escape(pool.title)}[/]", f"[bold]{pool.capacity_mib:,.0f}[/]", "", escape(pool.note))
        for part in (p for p in fit.parts if p.pool == pool.key):
            table.add_row(f"  {escape(part.component)}", f"{part.mib:,.0f}", basis_of(part.component, part.note),
                          escape(part.note))
        margin = round(fit.margin(pool.key), 1)  # as in the JSON's `margins`
        mstyle = "red" if margin < 0 else ""
        table.add_row("  = margin", f"[{mstyle}]{margin:,.0f}[/]" if mstyle else f"{margin:,.0f}", "", "",
                      end_section=True)
    console.print(table)
    for line in fit.facts:
        console.print(escape(line), highlight=False)
    for line in fit.calibrated:
        console.print(f"calibrated: {escape(line)}", highlight=False)
    for line in fit.assumptions:
        console.print(f"[dim]assumption: {escape(line)}[/]", highlight=False)


__all__ = ["check_json", "device_json", "explain_json", "print_check", "print_devices", "print_explain"]


# ---- explain --device ---------------------------------------------------------------------------------

def card_json(data: CardPlan) -> str:
    return json.dumps(data.to_data(), indent=2)


def print_card(data: CardPlan, console: Console) -> None:
    table = _table(f"{escape(data.name)}: {data.memory_mib:,} MiB — active apps and their GPU memory",
                   "app", "MiB", "set by", "fit", "leaves room", "runs alongside")
    for a in sorted(data.apps, key=lambda x: (-x.gpu_mib, x.app)):
        room = f"{a.room_mib:,} MiB for {escape(a.room_for)}" if a.room_mib else ""
        table.add_row(a.app, f"{a.gpu_mib:,}", "fit" if a.sized else "app", a.verdict, room,
                      ", ".join(data.alongside(a.app)) or "alone")
    console.print(table)
    shared = [g for g in data.groups if len(g) > 1]
    if not shared and len(data.apps) == 1:
        console.print("One app on this card: nothing to share it with.", highlight=False)
    elif not shared and data.apps:
        console.print("No two of these apps fit on the card together (caps plus the room they leave).", highlight=False)
    for group in shared:
        used = sum(a.gpu_mib + a.room_mib for a in data.apps if a.app in group)
        console.print(f"together: {', '.join(group)} ({used:,} of {data.memory_mib:,} MiB with their rooms)",
                      highlight=False)
    if data.more:
        console.print(f"... and {data.more} more groups (--json lists the first ones)", highlight=False)
