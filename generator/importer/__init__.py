"""`catalog import`: Olares application charts (folders or `.tgz`) -> catalog entries.

Chart reading: source.py reads a chart safely; helmview.py renders it with the real Helm engine and Olares'
values. Launcher reading: workload.py finds the engine container, its argv and downloads (podenv.py its env,
writes.py the files its scripts write, shell.py the launcher script, objects.py typed reads of a rendered object);
launch.py picks the engine family and stack.
Mapping to catalog fields, one chart's facts each: manifest.py (metadata, entrances, options), argvmap.py (the argv,
read back by argv.py through the family's Launcher), envmap.py (env), resources.py (CPU, memory, GPU memory,
device), features.py (chat template, slot save, packages), podmap.py (the rest of the pod); context.py holds the
chart being read, result.py what it gave (`Imported`). build.py drives one chart's import through them. Drafts:
drafts.py drafts the models and stacks the catalog lacks. Writing: write.py plans and writes the files (appyaml.py
emits and edits them); report.py prints the report. docs/import.md describes the command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)

import re
from dataclasses import dataclass, field
from pathlib import Path

from generator.adapters import Helm
from generator.catalog import Catalog
from collections.abc import Mapping
from generator.core import InputError, Problem
from generator.importer.build import import_chart
from generator.importer.context import HAMI_ENV
from generator.importer.result import APP_KEYS, Imported, _where_key
from generator.importer.drafts import Pool
from generator.importer.shared import finish, read_layout
from generator.importer.source import read_chart
from generator.importer.write import Plan, app_conflict, apply, plan_writes, recorded_label


SKIPPED_EXIT = 3  # `catalog import`: some charts were written, others skipped (docs/import.md "Exit codes")

# A launcher that builds its engine when the pod starts (a source checkout compiled in the container) or pulls the
# newest engine from PyPI: the catalog pins an engine as a stack's image and version, so neither is expressible.
_BUILDS = re.compile(r"(?<![\w-])(cmake|make|ninja|nvcc|cargo\s+build|git\s+clone|python[0-9.]*\s+setup\.py|"
                     r"pip[0-9.]*\s+install\s+(-e\s+)?\.(\s|$))")
_PIP_UPGRADE = re.compile(r"(?<![\w-])pip[0-9.]*\s+install\b[^\n]*\s(--upgrade|-U)(\s|$)")


@dataclass
class Report:
    results: list[Imported]
    plan: Plan
    dry_run: bool
    problems: list[Problem] = field(default_factory=list)  # what stopped the whole run: nothing was written
    skipped: list[Problem] = field(default_factory=list)  # each skipped chart's error (the rest was written)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def partial(self) -> bool:
        """Some charts were left out (an unsupported engine or an error of that chart alone)."""
        return any(r.status in ("unsupported", "error") for r in self.results)


def _is_chart(path: Path) -> bool:
    return path.is_file() or (path / "Chart.yaml").exists() or (path / "OlaresManifest.yaml").exists()


def expand_paths(paths: list[Path], labels: list[str]) -> tuple[list[Path], list[str]]:
    """A folder that is not itself a chart but holds charts (folders with a Chart.yaml or OlaresManifest.yaml,
    `.tgz` packages) stands for those charts, in name order: another person's whole store (issue 23)."""
    out_paths: list[Path] = []
    out_labels: list[str] = []
    for path, label in zip(paths, labels, strict=True):
        children: list[Path] = []
        if path.is_dir() and not path.is_symlink() and not _is_chart(path):
            children = sorted(c for c in path.iterdir() if not c.is_symlink() and not c.name.startswith(".")
                              and ((c.is_dir() and _is_chart(c)) or (c.is_file() and c.name.endswith(".tgz"))))
        if not children:
            out_paths.append(path)
            out_labels.append(label)
            continue
        out_paths += children
        out_labels += [f"{label.rstrip('/')}/{c.name}" for c in children]
    return out_paths, out_labels


def _cap_gpu_memory(result: Imported, cat: Catalog) -> None:
    """An imported GPU memory above its device's HAMi cap (a `limitedGpu: 24Gi` on a 24,463 MiB card) becomes
    the cap, the usable most (generator/schema/device.py `hami_cap_mib`); what the chart said goes to unmapped.
    Only a figure of the manifest or `nvidia.com/gpumem` is capped: Olares' limitedGpu is a scheduling size."""
    app = result.app
    mib, device_id = (app.get("gpu_memory_mib"), app.get("device")) if app is not None else (None, None)
    if app is None or not isinstance(mib, int) or not isinstance(device_id, str) or device_id not in cat.devices:
        return
    if result.gpu_memory_from is None or result.gpu_memory_from[0].startswith(HAMI_ENV):
        return  # an explicit HAMi limit is the chart's deliberate setting (the measured 30000m belt, issue 23
        # item 3): kept as written; `catalog check` HAMI004/HAMI006 judge it
    device = cat.devices[device_id]
    cap = device.hami_cap_mib
    if mib <= cap:
        return
    figure, origin = result.gpu_memory_from
    app["gpu_memory_mib"] = cap
    # resources.py `_gpu_memory` compared the chart's other figures with the uncapped value: they now read the cap
    same = f"the catalog requests and limits the same GPU memory ({mib} MiB)"
    result.unmapped = [line.replace(same, same.replace(f"({mib} MiB)", f"({cap} MiB)"))
                       .replace(f"differs from gpu_memory_mib {mib} taken from", f"differs from gpu_memory_mib "
                                f"{cap} (the device's cap) taken from") for line in result.unmapped]
    result.unmapped.append(f"{origin}: {figure} ({mib} MiB) is more than {device.id}'s usable {cap} MiB (the HAMi "
                           f"cap of its {device.memory_mib} MiB card): gpu_memory_mib is the cap")
    result.unmapped.sort(key=_where_key)
    app["unmapped"] = list(result.unmapped)
    result.app = {k: app[k] for k in APP_KEYS if k in app}


def _categories(result: Imported, path: Path, cat: Catalog) -> None:
    """The market's categories of the chart, from its taxonomy beside it (importer/taxonomy.py); a market that
    names categories (catalog/market.yaml `categories: true`) is told where they were not found."""
    from generator.importer.taxonomy import FILE, categories_for

    if result.app is None or result.status not in ("ok", "draft") or result.app.get("categories"):
        return
    found = categories_for(path)
    if found is not None:
        result.app["categories"] = list(found[0])
        result.app = {k: result.app[k] for k in APP_KEYS if k in result.app}
        result.notes.append(f"categories: {', '.join(found[0])} (the market's taxonomy, {found[1]})")
    elif cat.market.categories:
        result.notes.append(f"categories: a chart holds only Olares' category; the market's own (MKT004) come from "
                            f"its taxonomy, and no {FILE} beside the chart names {result.name}: add `categories:`")


def _launcher_reasons(result: Imported) -> list[str]:
    reasons = []
    for pattern, what in ((_BUILDS, "builds the engine when the pod starts"),
                          (_PIP_UPGRADE, "runs `pip install --upgrade` when the pod starts")):
        hits = [(line, text) for line, text in result.launcher if pattern.search(text)]
        if not hits:
            continue
        quoted = "; ".join(f"line {line}: {text[:100]}" for line, text in hits[:3])
        fix = ("a stack needs an image with the engine built in" if pattern is _BUILDS else
               "the engine is whatever PyPI serves that day; pin it in a stack's image")
        reasons.append(f"the launcher {what} ({quoted}): {fix}")
    return reasons


def _mark_launcher(result: Imported) -> None:
    """A launcher that builds or upgrades its engine at start makes the app a draft, named as such."""
    if result.status not in ("ok", "draft"):
        return
    reasons = _launcher_reasons(result)
    if reasons:
        result.missing += reasons
        result.status = "draft"


def _skip(result: Imported, problems: list[Problem]) -> Imported:
    result.status = "error"
    result.problems = problems
    result.app = None
    return result


def import_paths(paths: list[Path], cat: Catalog, *, update: bool = False, dry_run: bool = False,
                 labels: list[str] | None = None, renamed: Mapping[str, str] | None = None,
                 live_drafts: bool = False) -> Report:
    """Import chart by chart: a chart with an error (an unknown engine, a missing value, an app that exists
    without --update) is skipped with its drafts, the others written; when no chart can be written, nothing is
    (the run's problems). A dry run writes nothing. `live_drafts` (catalog sync): a chart that would point a live
    app at drafts is returned as a draft with that problem and its app, never written, its drafts dropped."""
    paths, labels = expand_paths(paths, labels or [str(p) for p in paths])
    pool = Pool(cat)
    results: list[Imported] = []
    skipped: list[Problem] = []
    held: set[int] = set()  # live apps' drafts kept for the caller (live_drafts), never planned
    with Helm().capped_renderer() as renderer:  # one capped Helm worker for the run (adapters/helm.py)
        for path, label in zip(paths, labels, strict=True):
            saved = pool.snapshot()
            try:
                chart, layout = read_layout(read_chart(path, label))  # the shared-app layout (importer/shared.py)
                result = import_chart(chart, cat, pool, renderer, renamed)
            except InputError as exc:
                pool.restore(saved)
                results.append(Imported(label, status="error", problems=list(exc.problems)))
                skipped += exc.problems
                continue
            if result.status == "unsupported":
                pool.restore(saved)  # nothing of a left-out chart is drafted
            _categories(result, path, cat)
            _cap_gpu_memory(result, cat)
            _mark_launcher(result)
            if layout is not None:
                finish(result, layout, chart, cat)
            taken = next((r for r in results if r.name and r.name == result.name
                          and r.status in ("ok", "draft")), None)
            conflict = app_conflict(result, cat.root, update) or (taken and Problem(
                label, None, None, f"app {result.name!r} is also imported from {taken.label}; import one chart "
                                   "per app"))
            if conflict and live_drafts and update and result.status == "draft" and taken is None:
                pool.restore(saved)  # the caller weighs it (sync's corrections); nothing of it is written
                result.problems = [conflict]
                held.add(id(result))
            elif conflict:
                pool.restore(saved)
                result = _skip(result, [conflict])
                skipped.append(conflict)
            results.append(result)
    recorded = dict(zip(labels, (recorded_label(p, cat.root) for p in paths), strict=True))
    written = [r for r in results if id(r) not in held]
    writable = any(r.status in ("ok", "draft") for r in written)
    plan = plan_writes(written, pool, cat, update, recorded) if writable else Plan()
    problems = list(plan.problems) if writable else list(skipped)
    report = Report(results, plan, dry_run, problems, skipped if writable else [])
    if report.ok and not dry_run and writable:
        apply(plan)
    return report


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["APP_KEYS", "FileWrite", "Imported", "MAX_FILE_BYTES", "MAX_TOTAL_BYTES", "Report", "SKIPPED_EXIT",
           "base_name", "gguf_quant", "import_paths", "print_report", "read_back", "read_chart", "read_drafts",
           "report_json", "slug", "update_text"]

if TYPE_CHECKING:
    from .write import FileWrite as FileWrite
    from .source import MAX_FILE_BYTES as MAX_FILE_BYTES
    from .source import MAX_TOTAL_BYTES as MAX_TOTAL_BYTES
    from .drafts import base_name as base_name
    from .drafts import gguf_quant as gguf_quant
    from .report import print_report as print_report
    from .appyaml import read_back as read_back
    from .drafts import read_drafts as read_drafts
    from .report import report_json as report_json
    from .drafts import slug as slug
    from .appyaml import update_text as update_text

_FACE: dict[str, str] = {"FileWrite": "write", "MAX_FILE_BYTES": "source", "MAX_TOTAL_BYTES": "source",
                         "base_name": "drafts", "gguf_quant": "drafts", "print_report": "report",
                         "read_back": "appyaml", "read_drafts": "drafts", "report_json": "report", "slug": "drafts",
                         "update_text": "appyaml"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
