"""Output of `catalog import`: plain text for people, JSON for machines. No logic.

Everything here comes from a stranger's chart (member names, env values, arguments, messages quoting them), so
every string leaves through the one redactor (generator/core/redact.py: `?token=hf_...`, `HF_TOKEN=...`, a
bearer header) and the one escaper (generator/core/text.py `safe_line`: an ESC sequence or a newline that would
start a `::error` workflow command in a CI log is shown as `\\x1b`, `\\n`). The JSON keeps its strings' text
(redacted) and writes every control, bidi and separator character as a `\\uXXXX` escape.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, TextIO

from generator.core import MASK, secret_name
from generator.core.redact import redact
from generator.core import safe_line
from generator.importer import Report

MARK = {"ok": "ok", "draft": "draft", "unsupported": "unsupported", "error": "ERROR"}
# what json.dumps(ensure_ascii=False) leaves raw that a terminal or a log viewer acts on (C0 is escaped already)
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def _clean(value: Any) -> Any:
    """Plain data with every string redacted, the value of a secret-named key (an env `HF_TOKEN`) masked, and a
    date as its ISO text."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): MASK if secret_name(str(k)) and isinstance(v, str) and v else _clean(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, dt.date):  # a benchmark's or calibration row's date, as the app file writes it
        return value.isoformat()
    return value


def _line(text: object) -> str:
    return safe_line(redact(str(text)))


def report_json(report: Report) -> str:
    text = json.dumps(_clean({
        "dry_run": report.dry_run,
        "ok": report.ok,
        "apps": [r.as_dict() for r in report.results],
        "drafts": report.plan.drafts,
        "writes": [w.as_dict() for w in report.plan.writes],
        "problems": [str(p) for p in report.problems],
        "skipped": [str(p) for p in report.skipped],
        "partial": report.partial,
    }), indent=2, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _result_lines(r: Any) -> list[str]:
    bits = [f"{MARK.get(r.status, r.status):<11} {r.name or r.label}"]
    bits += [b for b in (r.engine, r.stack and f"stack {r.stack}{' (draft)' if r.stack_draft else ''}",
                         r.model and f"model {r.model}{' (draft)' if r.model_draft else ''}",
                         r.profile if r.profile and r.status in ("ok", "draft") else "") if b]
    lines = ["  ".join(bits)]
    if r.unsupported:
        lines.append(f"    unsupported, left out: {r.unsupported}")
    for kind, items in (("error", r.problems), ("missing", r.missing), ("unmapped", r.unmapped),
                        ("kept", r.kept), ("note", r.notes)):
        lines += [f"    {kind:<9} {what}" for what in items]
    return lines


def print_report(report: Report, out: TextIO) -> None:
    lines = [line for r in report.results for line in _result_lines(r)]
    lines += [f"draft {d['kind']} {d['path']}: missing {', '.join(d['missing']) or 'nothing'}"
              for d in report.plan.drafts]
    verb = "would write" if report.dry_run or not report.ok else "wrote"
    lines += [f"unchanged {w.as_dict()['path']}" if w.text is None else f"{verb} {w.as_dict()['path']} ({w.action})"
              for w in report.plan.writes]
    counts = {s: sum(1 for r in report.results if r.status == s) for s in ("ok", "draft", "unsupported", "error")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    left_out = counts["unsupported"] + counts["error"]
    if not report.ok:
        summary += "; nothing was written"
    elif report.dry_run:
        summary += "; dry run, nothing was written"
    elif left_out:
        summary += f"; {left_out} skipped, the rest written (exit 3)"
    lines.append(summary)
    out.writelines(_line(line) + "\n" for line in lines)


__all__ = ["print_report", "report_json"]
