"""Which deprecated apps may leave the market: a pure plan from the catalog and the smoke ledger.

The gate (docs/domain.md#crash-rules: "prune them only once the replacement passed its smoke inference"): a
deprecated app with `replaced_by` is pruned only when its replacement is active and the latest smoke
recorded for the replacement's CURRENT chart version is a pass. Anything else blocks the app, with
the reason and the command that would unblock it. Nothing here touches a file (prune_apply.py does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from collections.abc import Mapping, Sequence

from generator.catalog import Catalog
from generator.smoke.ledger import SmokeRecord

Action = Literal["prune", "blocked"]


@dataclass(frozen=True)
class PruneItem:
    app: str
    replaced_by: str | None
    action: Action
    reason: str  # why it is blocked, or the evidence that lets it go
    evidence: SmokeRecord | None = None

    @property
    def pruned(self) -> bool:
        return self.action == "prune"


def deprecated(catalog: Catalog) -> list[str]:
    return sorted(n for n, r in catalog.apps.items() if r.app.status == "deprecated")


def replacements(catalog: Catalog) -> list[str]:
    """The apps whose ledgers the plan needs."""
    return sorted({r for n in deprecated(catalog) if (r := catalog.apps[n].app.replaced_by)})


def plan(catalog: Catalog, ledgers: Mapping[str, Sequence[SmokeRecord]]) -> list[PruneItem]:
    """One item per deprecated app, in name order."""
    return [_item(catalog, name, ledgers) for name in deprecated(catalog)]


def _item(catalog: Catalog, name: str, ledgers: Mapping[str, Sequence[SmokeRecord]]) -> PruneItem:
    target = catalog.apps[name].app.replaced_by
    if target is None:
        return PruneItem(name, None, "blocked", "no `replaced_by`: name the app that replaces it first")
    replacement = catalog.apps[target].app
    if replacement.status != "active":
        return PruneItem(name, target, "blocked", f"its replacement {target} is {replacement.status}, not active")
    current = [r for r in ledgers.get(target, ()) if r.chart_version == replacement.version]
    if not current:
        return PruneItem(name, target, "blocked", f"{target} has no smoke for its current chart version "
                         f"{replacement.version}; run `catalog smoke {target} --endpoint URL`")
    last = current[-1]
    if last.verdict != "pass":
        why = f": {last.reasons[0]}" if last.reasons else ""
        return PruneItem(name, target, "blocked", f"the latest smoke of {target} {replacement.version} "
                         f"({last.date}) is a {last.verdict}{why}", last)
    figure = f", {last.tokens_per_s:.1f} t/s" if last.tokens_per_s else ""
    return PruneItem(name, target, "prune", f"{target} {replacement.version} passed its smoke on {last.date}{figure}",
                     last)
