"""`catalog import`: Olares application charts (folders or `.tgz`) -> catalog entries.

source.py reads a chart safely; helmview.py renders it with the real Helm engine and Olares' values;
workload.py finds the engine container, its argv, env and downloads; argv.py maps the argv back to app
fields; build.py assembles the app and records what it could not map; drafts.py drafts the models and
stacks the catalog lacks; write.py plans and writes the files (appyaml.py emits and edits them).
docs/import.md describes the command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from generator.adapters.helm import Helm
from generator.catalog import Catalog
from generator.core.errors import InputError, Problem
from generator.importer.build import Imported, import_chart
from generator.importer.drafts import Pool
from generator.importer.source import read_chart
from generator.importer.write import Plan, apply, plan_writes, recorded_label


@dataclass
class Report:
    results: list[Imported]
    plan: Plan
    dry_run: bool
    problems: list[Problem] = field(default_factory=list)  # every error: a chart's, or the plan's

    @property
    def ok(self) -> bool:
        return not self.problems


def import_paths(paths: list[Path], cat: Catalog, *, update: bool = False, dry_run: bool = False,
                 labels: list[str] | None = None) -> Report:
    """Import every chart; write only when no chart and no planned write has an error (and not a dry run)."""
    pool = Pool(cat)
    results: list[Imported] = []
    problems: list[Problem] = []
    with Helm().capped_renderer() as renderer:  # one capped Helm worker for the run (adapters/helm.py)
        for index, path in enumerate(paths):
            label = labels[index] if labels else str(path)
            try:
                result = import_chart(read_chart(path, label), cat, pool, renderer)
            except InputError as exc:
                result = Imported(label, status="error", problems=list(exc.problems))
                problems += exc.problems
            results.append(result)
    recorded = {labels[i] if labels else str(p): recorded_label(p, cat.root) for i, p in enumerate(paths)}
    plan = plan_writes(results, pool, cat, update, recorded) if not problems else Plan()
    problems += plan.problems
    report = Report(results, plan, dry_run, problems)
    if report.ok and not dry_run:
        apply(plan)
    return report


__all__ = ["Imported", "Report", "import_paths"]
