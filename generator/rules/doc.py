"""docs/rules.md from the one rule registry (generator/core/ruleset.py): chart rules and catalog rules.

`python -m generator.rules.doc --write` writes it; tests/test_rules_doc.py fails when the file and the
registry disagree. Importing this module registers every rule: the chart rules (generator/lint/) and the
catalog rules (generator/rules/).
"""

from __future__ import annotations

import sys
from pathlib import Path

from generator.core import RULES, Rule, Stage
from generator.lint import run as _lint_run  # noqa: F401  (registers the HELM, K8S and OLARES rules)
from generator.rules import all_rules

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "rules.md"
FAMILIES = {
    "HELM": "Helm engine", "K8S": "Kubernetes schemas", "OLARES": "Olares chart rules",
    "HAMI": "HAMi memory limit", "GEN": "Genesis patches", "ENG": "Engine and stack", "FIT": "Memory fit",
    "CON": "Consistency", "STA": "Status", "FLAG": "Flags of the pinned image",
}
HEADER = """# Rules: what `catalog check` reports

Generated from the one rule registry (`generator/core/ruleset.py`) by `python -m generator.rules.doc --write`;
do not edit by hand (`tests/test_rules_doc.py` fails when this file and the registry disagree).

Two stages register rules there, in one id space: the **chart rules** (HELM, K8S, OLARES: the lint of a
rendered chart, `generator/lint/`) and the **catalog rules** (the crash rules on a resolved app and its
planned chart, `generator/rules/`). `catalog check` runs both for every app. A finding names what is
wrong, says what to do, and points at a file and line. Errors make `catalog check` exit 1; warnings do not.
The memory model behind FIT001 is in [fit.md](fit.md).
"""
CHART_INTRO = """## Chart rules

`generator.lint.run.lint_chart(name, tree)` takes one chart as rendered in memory (`{relative path: text}`,
what `catalog render` writes to `charts/<app>/`), writes it to a temporary folder for the Helm engine (the
Helm adapter, `generator/adapters/helm.py`) and returns a list of `Finding`s (rule id, severity, message,
fix, file, line). It never raises on findings.

```python
from generator.lint.run import lint_chart
from generator.chart.pipeline import render_app
findings = lint_chart(r.app.name, render_app(r))                   # points at <app>/<chart file>:line
findings = lint_chart(r.app.name, render_app(r), file=r.file)      # points at the catalog file instead
```

### How the chart is rendered

Like Olares does it: Helm release name = app name, values = the chart's `values.yaml` overlaid with what
Olares injects (the OAC lint placeholders of `beclab/Olares framework/oac/internal/helmrender/values.go`):
`bfl.username`, `admin`, `isAdmin`, `user.zone`, `domain.<entrance>` for every entrance and sharedEntrance,
`userspace.appCache/appData/userData/appCommon`, `os`, `oidc`, `cluster`, `GPU.Type` + `gpu`, `olaresEnv`,
and `workloads.<name>.replicaCount` for every workload named in `workloadReplicas` or `values.yaml`.

| render | replicaCount | namespace | olaresEnv | GPU.Type |
|---|---|---|---|---|
| main | 1 | `<app>-admin` | `{}` (as OAC lint) | `nvidia` (else the first accelerator mode) |
| probe | 0 (app-service's stop value) | `app-namespace` (OAC's) | every manifest env a placeholder (1) | same |
| per extra accelerator mode | 1 | `<app>-admin` | `{}` | that mode |

(1) So that env-guarded templates (the HF token Secret) render too.

Two renders with different replica counts and namespaces are what OLARES007 and OLARES012 compare.
Rendered YAML and the root files are read with PyYAML (YAML 1.1, as Go's yaml reads them).

Kubernetes schemas: the strict 1.30 JSON schemas shipped by `kubernetes-validate`, loaded once per process
(the package's own `validate()` re-reads the 1.3 MB `_definitions.json` on every call) and checked with
`jsonschema`'s `iter_errors`, so every error of a document is reported, not only the first.
`tests/test_lint.py` checks that this agrees with `kubernetes_validate.utils.validate`.

Cost, measured on the build machine (2 cores): about 50 ms per chart once warm on an idle machine (80-100 ms
while other jobs load both cores): Helm lint ~20 ms, renders ~3 ms each, schema validation ~4.5 ms per
document (`kubernetes_validate.utils.validate`: ~50 ms per document, re-reading the definitions each call);
plus ~0.3-0.6 s once per process for imports and schema loading.
"""
CHART_NOTES = """
### Where the chart rules are stricter or narrower than OAC

- OLARES011 rejects `{{`/`}}` anywhere, also inside quoted strings (OAC masks quoted scalars): the
  generator escapes braces in every string it emits (`generator/yamlio/yamlout.py`), so none should remain.
- K8S001 uses the *strict* schemas: an unknown field fails (OAC only dry-runs Helm).
- Only the owner == admin scenario is rendered: v3 apps are admin-only.
- Not checked here (yet): the full manifest field validation of OAC `validate.go` (entrance regexes,
  metadata lengths, icon URLs, envs), the app-data permission cross-check, `options.upload.dest`,
  `allowMultipleInstall`, RBAC and security-context opt-ins.
"""
CATALOG_INTRO = """
## Catalog rules

Every catalog rule reads the app's **resolved** argv and env (stack args and env, typed app fields, Genesis
patches, then `extra_args` / `env`; the last occurrence of a flag wins), so an override is judged exactly as
the engine will see it. A finding names the setting and where it came from, says what to do, and points at
the catalog line (`file:line`).

What the engine needs to build an app's argv at all is not a rule: the catalog resolver checks it (unknown
model, stack or drafter; a speculative method the stack does not offer; a drafter or draft length the stack's
spelling takes; a GGUF `file` for a llama.cpp stack), and every command (`render`, `bump`, `explain`,
`check`) reports it as `file:line: field: message` and exits 1.
"""
INTROS: dict[Stage, str] = {"chart": CHART_INTRO, "catalog": CATALOG_INTRO}
NOTES: dict[Stage, str] = {"chart": CHART_NOTES, "catalog": ""}
COLUMNS = {"chart": "| id | severity | checks | why | source |",
           "catalog": "| id | severity | checks | why (the crash it prevents) | source |"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _family(rule_id: str) -> str:
    prefix = rule_id.rstrip("0123456789")
    return FAMILIES.get(prefix, prefix)


def _registered() -> list[Rule]:
    all_rules()  # imports every catalog rule module
    return RULES.sorted()


def _stage(rules: list[Rule], stage: Stage) -> list[str]:
    lines = [INTROS[stage]]
    current = None
    for r in (r for r in rules if r.stage == stage):
        family = _family(r.id)
        if family != current:
            current = family
            lines += ["", f"### {family}", "", COLUMNS[stage], "|---|---|---|---|---|"]
        lines.append(f"| {r.id} | {r.severity} | {_cell(r.title)} | {_cell(r.why)} | {_cell(r.source)} |")
    if NOTES[stage]:
        lines.append(NOTES[stage].rstrip("\n"))
    return lines


def render() -> str:
    rules = _registered()
    lines = [HEADER]
    for stage in ("chart", "catalog"):
        lines += _stage(rules, stage)
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
