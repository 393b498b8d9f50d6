"""`catalog sync UPSTREAM`: follow the market a catalog was rebased on (docs/sync.md).

source.py finds the upstream charts (a folder, `.tgz` packages, or a git URL cloned under a deadline); plan.py
imports each with the importer's public entry point and merges it into the catalog's app, keeping the
deliberate corrections of catalog/corrections.yaml (reported as conflicts) unless upstream measured the value;
apply.py writes the merged apps, the new ones with their drafts, the removed marks and catalog/sync.yaml, every
text computed before the first write.
"""

from __future__ import annotations

from generator.adapters.git import Git
from generator.catalog import Catalog
from generator.rules.versions_upstream import load_corrections, load_sync
from generator.sync.apply import Write, planned_writes, validate, write_all
from generator.sync.plan import AppPlan, Change, SyncPlan, build_plan, stack_images
from generator.sync.source import open_upstream


def sync(sources: list[str], cat: Catalog, *, git: Git, dry_run: bool = False) -> tuple[SyncPlan, list[Write]]:
    """Plan the sync of `cat` with `sources`; write it unless `dry_run`. Returns the plan and its writes."""
    fixes, previous = load_corrections(cat.root), load_sync(cat.root)
    with open_upstream(sources, git) as upstream:
        plan = build_plan(upstream, cat, fixes, previous)
        writes = planned_writes(plan, cat, previous)
        plan.images = stack_images(plan, cat)
    if not dry_run:
        validate(cat, writes)  # the merged catalog must load before anything is written
        write_all(writes)
    return plan, writes


__all__ = ["AppPlan", "Change", "SyncPlan", "Write", "sync"]
