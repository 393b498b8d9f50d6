"""Render drift: a committed chart must be exactly what `catalog render` writes (DRIFT001), and a chart folder whose
app is gone must go too (DRIFT002). `catalog check` runs it on every app it checks (`--no-drift` skips it), the PR
check on the apps a pull request changed, and `publish` refuses to ship over a drifted chart: a hand edit to
charts/ is either lost at the next render or shipped unreviewed."""

from __future__ import annotations

from pathlib import Path

from generator.catalog import Resolved, display_path
from generator.chart import Tree, diff_tree, read_tree
from generator.core import Finding

FIX = "run `catalog render` and commit charts/; edit the app in catalog/apps/, never the rendered chart"


def changed_files(name: str, on_disk: Tree, fresh: Tree) -> list[str]:
    """The chart's files (relative to its folder) that differ between `on_disk` and `fresh`."""
    return sorted({line[6:].split("/", 1)[1].rstrip("\n") for line in diff_tree(name, on_disk, fresh)
                   if line.startswith(("--- a/", "+++ b/")) and "/" in line[6:]})


def drift(r: Resolved, tree: Tree, charts_dir: Path) -> list[Finding]:
    """DRIFT001 when charts/<app>/ differs from `tree` (the fresh render), naming each file that differs."""
    on_disk = read_tree(charts_dir / r.app.name)
    if on_disk == tree:
        return []
    where = f"{display_path(charts_dir)}/{r.app.name}"
    if not on_disk:
        return [Finding("DRIFT001", "error", r.app.name, f"{where}/ is missing: the app has no rendered chart", FIX,
                        file=r.file, line=1)]
    changed = changed_files(r.app.name, on_disk, tree)
    shown = ", ".join(f"{where}/{f}" for f in changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6
                                                              else "")
    return [Finding("DRIFT001", "error", r.app.name,
                    f"{shown or where + '/'} differ{'s' if len(changed) == 1 else ''} from what `catalog render` "
                    "writes (a hand edit, or a render not committed)", FIX,
                    file=f"{where}/{changed[0]}" if changed else r.file, line=1)]


def deleted(name: str, charts_dir: Path) -> list[Finding]:
    """DRIFT002 when charts/<name>/ is left although catalog/apps/<name>.yaml is gone."""
    if not (charts_dir / name).exists():
        return []
    return [Finding("DRIFT002", "error", name, f"catalog/apps/{name}.yaml is gone but {display_path(charts_dir)}/"
                    f"{name}/ is not", "run `catalog render` (it removes stale chart folders) or "
                    "`catalog prune --deprecated` to retire an app", file=display_path(charts_dir / name))]


__all__ = ["FIX", "changed_files", "deleted", "drift"]
