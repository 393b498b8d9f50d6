"""`catalog check --base REF`: judge a pull request the way GitBot and chart-testing would, and more.

The apps changed since the merge-base of REF and HEAD (every app when templates, stacks, models,
devices, Genesis, flag tables or the generator changed) get: catalog validation, the crash rules,
render drift (the committed chart must equal a fresh render), chart-testing's version increment
against REF, Helm lint, strict Kubernetes schemas and the Olares chart rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

from generator.catalog import Catalog, Resolved, display_path
from generator.check.run import AppResult, by_subject, check_app
from generator.core import Finding
from generator.adapters import Git
from generator.adapters import Helm
from generator.versions import GitCharts, chart_version
from generator.chart import render_app
from generator.versions import content_hash, parse_version
from generator.chart import Tree
from generator.check.drift import deleted, drift

# Catalog folders whose change can move every chart.
SHARED_CATALOG = ("stacks", "models", "devices", "genesis", "flags")
# Tool folders (when the catalog lives in the tool's own repository).
SHARED_TOOL = ("templates/", "generator/", "pyproject.toml")


@dataclass(frozen=True)
class Scope:
    apps: tuple[str, ...]
    everything: bool
    why: str
    base: str  # merge-base commit


def changed_paths(gc: GitCharts, base: str) -> list[str]:
    """Files that differ between `base` and the working tree, plus untracked files (repo-relative)."""
    tracked = gc.git.text(gc.repo, "diff", "--name-only", "-z", base, "--")
    untracked = gc.git.text(gc.repo, "ls-files", "--others", "--exclude-standard", "-z")
    return sorted({p for p in (tracked + untracked).split("\0") if p})


def _rel(path: Path, repo: Path) -> str:
    rel = path.resolve().relative_to(repo.resolve()).as_posix()
    return "" if rel == "." else rel + "/"


def scope(cat: Catalog, gc: GitCharts, charts_dir: Path, ref: str) -> Scope:
    base = gc.merge_base(gc.commit(ref))
    catalog_prefix, charts_prefix = _rel(cat.root, gc.repo), _rel(charts_dir, gc.repo)
    tool_prefix = _rel(Path(__file__).resolve().parents[2], gc.repo) if _inside(gc.repo) else None
    apps: set[str] = set()
    for path in changed_paths(gc, base):
        if path.startswith(f"{catalog_prefix}apps/") and path.endswith(".yaml"):
            apps.add(Path(path).stem)
        elif charts_prefix and path.startswith(charts_prefix):
            name = path[len(charts_prefix):].split("/", 1)[0]
            if not name.startswith("."):  # render's own list of its folders (.catalog-render), not a chart
                apps.add(name)
        elif _shared(path, catalog_prefix, tool_prefix):
            return Scope(tuple(sorted(cat.apps)), True, f"{path} changed: every app is checked", base)
    return Scope(tuple(sorted(apps)), False, f"{len(apps)} app(s) changed since {base[:12]}", base)


def _shared(path: str, catalog_prefix: str, tool_prefix: str | None) -> bool:
    """Whether `path` is a file every app depends on (a shared catalog folder, or the tool's own code)."""
    if any(path.startswith(f"{catalog_prefix}{folder}/") for folder in SHARED_CATALOG):
        return True
    return tool_prefix is not None and any(path.startswith(tool_prefix + p) for p in SHARED_TOOL)


def _inside(repo: Path) -> bool:
    try:
        Path(__file__).resolve().relative_to(repo.resolve())
        return True
    except ValueError:
        return False


def version_increment(r: Resolved, tree: Tree, gc: GitCharts, ref: str, base: str) -> list[Finding]:
    """chart-testing's rule: a changed chart needs a version strictly greater than at REF; new charts pass."""
    at_ref = gc.tree(gc.commit(ref), r.app.name)
    old = chart_version(at_ref)
    if old is None or content_hash(gc.tree(base, r.app.name)) == content_hash(tree):
        return []
    new = chart_version(tree) or r.app.version
    if parse_version(new) > parse_version(old):
        return []
    return [Finding("VER001", "error", r.app.name,
                    f"chart changed since {base[:12]} but version {new} is not greater than {old} at {ref}",
                    f"run `catalog bump {r.app.name}` (Olares refuses an update whose version did not go up)",
                    file=r.file, line=r.line("version"))]


def check_changed(cat: Catalog, charts_dir: Path, ref: str, *, git: Git, helm: Helm | None = None, lint: bool = True,
                  on_app: Callable[[str], None] | None = None) -> tuple[Scope, list[AppResult]]:
    gc = GitCharts.locate(charts_dir, git)
    sc = scope(cat, gc, charts_dir, ref)
    results = []
    for name in sc.apps:
        r = cat.apps.get(name)
        if r is None:  # the app file was deleted: its chart folder must go too
            results.append(_deleted(name, charts_dir))
            continue
        if on_app:
            on_app(name)
        result = check_app(r, cat, lint=lint, charts_dir=display_path(charts_dir), helm=helm)
        if r.app.status != "removed":
            tree = render_app(r)
            result.findings += drift(r, tree, charts_dir) + version_increment(r, tree, gc, ref, sc.base)
        results.append(result)
    return sc, by_subject(results, cat)


def _deleted(name: str, charts_dir: Path) -> AppResult:
    result = AppResult(name, "deleted")
    result.findings += deleted(name, charts_dir)
    return result


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def annotation(f: Finding) -> str:
    """A GitHub Actions workflow command that puts the finding on the file and line in the PR."""
    level = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
    title = f"{f.rule} {f.app}".strip()
    props = [f"title={_escape(title, prop=True)}"]
    if f.file:
        props.insert(0, f"file={_escape(f.file, prop=True)}")
        if f.line:
            props.insert(1, f"line={f.line}")
    message = f.message + (f". Fix: {f.fix}" if f.fix else "")
    return f"::{level} {','.join(props)}::{_escape(message)}"
