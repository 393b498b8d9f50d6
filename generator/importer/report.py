"""Output of `catalog import`: plain text for people, JSON for machines. No logic."""

from __future__ import annotations

import json
from typing import TextIO

from generator.importer import Report

MARK = {"ok": "ok", "draft": "draft", "unsupported": "unsupported", "error": "ERROR"}


def report_json(report: Report) -> str:
    return json.dumps({
        "dry_run": report.dry_run,
        "ok": report.ok,
        "apps": [r.as_dict() for r in report.results],
        "drafts": report.plan.drafts,
        "writes": [w.as_dict() for w in report.plan.writes],
        "problems": [str(p) for p in report.problems],
    }, indent=2, ensure_ascii=False)


def print_report(report: Report, out: TextIO) -> None:
    for r in report.results:
        bits = [f"{MARK.get(r.status, r.status):<11} {r.name or r.label}"]
        if r.engine:
            bits.append(f"{r.engine}")
        if r.stack:
            bits.append(f"stack {r.stack}{' (draft)' if r.stack_draft else ''}")
        if r.model:
            bits.append(f"model {r.model}{' (draft)' if r.model_draft else ''}")
        if r.profile and r.status in ("ok", "draft"):
            bits.append(r.profile)
        out.write("  ".join(bits) + "\n")
        if r.unsupported:
            out.write(f"    unsupported, left out: {r.unsupported}\n")
        out.writelines(f"    error     {problem}\n" for problem in r.problems)
        out.writelines(f"    missing   {what}\n" for what in r.missing)
        out.writelines(f"    unmapped  {what}\n" for what in r.unmapped)
        out.writelines(f"    kept      {what}\n" for what in r.kept)
        out.writelines(f"    note      {what}\n" for what in r.notes)
    out.writelines(f"draft {draft['kind']} {draft['path']}: missing {', '.join(draft['missing']) or 'nothing'}\n" for draft in report.plan.drafts)
    verb = "would write" if report.dry_run or not report.ok else "wrote"
    for write in report.plan.writes:
        if write.text is None:
            out.write(f"unchanged {write.as_dict()['path']}\n")
        else:
            out.write(f"{verb} {write.as_dict()['path']} ({write.action})\n")
    counts = {s: sum(1 for r in report.results if r.status == s) for s in ("ok", "draft", "unsupported", "error")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    if not report.ok:
        out.write(f"{summary}; nothing was written\n")
    elif report.dry_run:
        out.write(f"{summary}; dry run, nothing was written\n")
    else:
        out.write(f"{summary}\n")


__all__ = ["print_report", "report_json"]
