"""`catalog sync UPSTREAM`: follow the market a catalog was rebased on (docs/sync.md).

source.py finds the upstream charts (a folder, `.tgz` packages, or a git URL cloned under a deadline and a byte
budget); plan.py imports each with the importer's public entry point and merges it into the catalog's app, three
ways against what the last sync recorded (the owner's edits and deliberate corrections kept, reported as
conflicts, unless upstream measured the value); the versions are then settled on the rendered charts (no new
version where the chart does not change beyond it); apply.py writes the merged apps, the new ones with their
drafts, the removed marks and catalog/sync.yaml, every text computed before the first write, and no file whose
text would not change.
"""

from __future__ import annotations

from dataclasses import replace

from generator.adapters import Git
from generator.catalog import Catalog
from generator.rules import load_corrections, load_sync
from generator.sync.apply import Write, edit_text, overlaid, planned_writes, validate, write_all
from generator.sync.plan import SyncPlan, _at_or_below, _our_digest, _under_roof, build_plan, plain, stack_images
from generator.sync.source import open_upstream


def check_new_figures(plan: SyncPlan, writes: list[Write], after: Catalog) -> list[Write]:
    """A new app's speed figures (the import reads upstream's metadata.bento hero) pass the guard merged apps pass:
    none on a device that states no bandwidth, none above the roofline bound; each one refused is a conflict on the
    app and is left out of its file."""
    out = []
    by_app = {a.app: a for a in plan.apps if a.status == "new"}
    for w in writes:
        app = by_app.get(w.path.stem) if w.path.parent.name == "apps" else None
        resolved = after.apps.get(app.app) if app is not None else None
        if app is None or resolved is None or not resolved.app.benchmarks:
            out.append(w)
            continue
        benches = [plain(b) for b in resolved.app.benchmarks]
        kept = _under_roof(app, resolved, benches)
        if len(kept) == len(benches):
            out.append(w)
            continue
        target: dict[str, object] = {"benchmarks": [
            b.model_dump(mode="python", exclude_defaults=True)
            for b, p in zip(resolved.app.benchmarks, benches, strict=True) if p in kept]}
        out.append(Write(w.path, edit_text(w.path, w.text, target, ("benchmarks",)), w.what))
    return out


def settle_versions(plan: SyncPlan, cat: Catalog, writes: list[Write]) -> bool:
    """No version without content: a merged app above upstream's version whose rendered chart (at its current
    version) is the chart it has now keeps its version; where the merge kept every field of ours it is `kept`.
    Whether any plan changed (its writes must be planned again)."""
    candidates = [a for a in plan.apps if a.status in ("bumped", "changed") and a.new_version and a.mergeable
                  and a.merged is not None and a.app in cat.apps
                  and not _at_or_below(cat.apps[a.app].app.version, a.upstream_version)]
    if not candidates:
        return False
    changed = False
    with overlaid(cat, writes) as after:
        for a in candidates:
            current, merged = cat.apps[a.app], after.apps.get(a.app)
            if merged is None or a.merged is None:
                continue
            same = replace(merged, app=merged.app.model_copy(update={"version": current.app.version}))
            if _our_digest(same) != _our_digest(current):
                continue
            a.new_version, a.merged["version"], changed = None, current.app.version, True
            if all(c.kind == "conflict" for c in a.changes) and not a.benchmarks:
                a.status = "kept"
                a.detail = "the merge kept every field of ours: the chart does not move, only the record"
            else:
                a.detail = "its rendered chart does not change beyond its version: no new version"
    return changed


def sync(sources: list[str], cat: Catalog, *, git: Git, dry_run: bool = False) -> tuple[SyncPlan, list[Write]]:
    """Plan the sync of `cat` with `sources`; write it unless `dry_run`. Returns the plan and its writes."""
    fixes, previous = load_corrections(cat.root), load_sync(cat.root)
    with open_upstream(sources, git, cat.root) as upstream:
        plan = build_plan(upstream, cat, fixes, previous)
        writes = planned_writes(plan, cat, previous)
        if settle_versions(plan, cat, writes):
            writes = planned_writes(plan, cat, previous)
        if any(a.status == "new" for a in plan.apps):
            with overlaid(cat, writes) as after:
                writes = check_new_figures(plan, writes, after)
        plan.images = stack_images(plan, cat)
    if not dry_run:
        validate(cat, writes)  # the merged catalog must load before anything is written
        write_all(writes)
    return plan, writes


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["settle_versions", "sync"]
