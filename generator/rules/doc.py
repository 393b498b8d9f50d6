"""docs/rules.md from the rule registry: `python -m generator.rules.doc --write` (tests/test_rules_doc.py
fails when the file and the registry disagree)."""

from __future__ import annotations

import sys
from pathlib import Path

from generator.rules import all_rules

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "rules.md"
FAMILIES = {
    "HAMI": "HAMi memory limit", "GEN": "Genesis patches", "ENG": "Engine and stack", "FIT": "Memory fit",
    "CON": "Consistency", "STA": "Status", "FLAG": "Flags of the pinned image",
}
HEADER = """# `catalog check` rules

Generated from the rule registry by `python -m generator.rules.doc --write`; do not edit by hand
(`tests/test_rules_doc.py` fails when this file and the registry disagree). Chart lint rules (HELM, K8S,
OLARES) are in [chart-rules.md](chart-rules.md); the memory model behind FIT001 is in [fit.md](fit.md).

Every rule reads the app's **resolved** argv and env (stack args and env, typed app fields, Genesis patches,
then `extra_args` / `env`; the last occurrence of a flag wins), so an override is judged exactly as the
engine will see it. A finding names the setting and where it came from, says what to do, and points at
the catalog line (`file:line`). Errors make `catalog check` exit 1; warnings do not.

What the engine needs to build an app's argv at all is not a rule: the catalog resolver checks it (unknown
model, stack or drafter; a speculative method the stack does not offer; a drafter or draft length the stack's
spelling takes; a GGUF `file` for a llama.cpp stack), and every command (`render`, `bump`, `explain`,
`check`) reports it as `file:line: field: message` and exits 1.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _family(rule_id: str) -> str:
    prefix = rule_id.rstrip("0123456789")
    return FAMILIES.get(prefix, prefix)


def render() -> str:
    lines = [HEADER]
    current = None
    for r in all_rules():
        family = _family(r.id)
        if family != current:
            current = family
            lines += ["", f"## {family}", "", "| id | severity | checks | why (the crash it prevents) | source |",
                      "|---|---|---|---|---|"]
        lines.append(f"| {r.id} | {r.severity} | {_cell(r.title)} | {_cell(r.why)} | {_cell(r.source)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--write" in argv:
        DOC.write_text(text, encoding="utf-8")
        print(f"wrote {DOC}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
