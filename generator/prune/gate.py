"""Which deprecated apps may leave the market: a pure plan from the catalog and the smoke ledger.

The gate (docs/domain.md#crash-rules: "prune them only once the replacement passed its smoke inference"): a
deprecated app with `replaced_by` is pruned only when its replacement is active and the latest smoke recorded
for the replacement's CURRENT chart — its version AND its content hash (generator/versions/state.py) — is a
`pass` whose observed identity matched the chart (the server said which model it loaded, and it is the
chart's). A `suspect` (a figure above the app's roofline), `regression` or `fail` blocks; an `error` row
(nothing measured: connection refused, timeout before the first token) is ignored, so a mistyped port
blocks nothing. Anything else blocks the app, with the reason and what would unblock it. Nothing here
touches a file (apply.py does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from collections.abc import Callable, Mapping, Sequence

from generator.catalog import Catalog, Resolved
from generator.smoke import SmokeRecord

Action = Literal["prune", "blocked"]
IDENTITY_NEEDED = "model"  # the identity field a pass must have matched to count


@dataclass(frozen=True)
class PruneItem:
    app: str
    replaced_by: str | None
    action: Action
    reason: str  # why it is blocked, or the evidence that lets it go
    evidence: SmokeRecord | None = None
    unblock: str | None = None  # what would unblock it (None once pruned)

    @property
    def pruned(self) -> bool:
        return self.action == "prune"


def deprecated(catalog: Catalog) -> list[str]:
    return sorted(n for n, r in catalog.apps.items() if r.app.status == "deprecated")


def replacements(catalog: Catalog) -> list[str]:
    """The apps whose ledgers the plan needs."""
    return sorted({r for n in deprecated(catalog) if (r := catalog.apps[n].app.replaced_by)})


def plan(catalog: Catalog, ledgers: Mapping[str, Sequence[SmokeRecord]],
         content_of: Callable[[Resolved], str] | None = None) -> list[PruneItem]:
    """One item per deprecated app, in name order. `content_of`: the content hash of an app's chart as the
    catalog renders it now (default: render it, generator/smoke/identity.py:chart_content)."""
    if content_of is None:
        from generator.smoke import chart_content

        content_of = chart_content
    contents: dict[str, str] = {}

    def content(name: str) -> str:
        if name not in contents:
            contents[name] = content_of(catalog.apps[name])
        return contents[name]

    return [_item(catalog, name, ledgers, content) for name in deprecated(catalog)]


def _item(catalog: Catalog, name: str, ledgers: Mapping[str, Sequence[SmokeRecord]],
          content: Callable[[str], str]) -> PruneItem:
    target = catalog.apps[name].app.replaced_by
    if target is None:
        return PruneItem(name, None, "blocked", "no `replaced_by`: name the app that replaces it first",
                         unblock="set `replaced_by` in its app file")
    replacement = catalog.apps[target].app
    if replacement.status != "active":
        return PruneItem(name, target, "blocked", f"its replacement {target} is {replacement.status}, not active",
                         unblock=f"make {target} active, or name another replacement")
    version, hashed = replacement.version, content(target)
    rows = ledgers.get(target, ())
    unblock = (f"a passing `catalog smoke {target}` at {version} (content {hashed}) whose served identity "
               f"matches the chart; last smoke: {_last(rows)}")
    measured = [r for r in rows if r.verdict != "error" and r.chart_version == version]
    if not measured:
        return PruneItem(name, target, "blocked", f"{target} has no smoke for its current chart version "
                         f"{version}; run `catalog smoke {target} --endpoint URL`", unblock=unblock)
    last = measured[-1]
    what = f"the latest smoke of {target} {version} ({last.date})"
    if last.verdict != "pass":
        why = f": {last.reasons[0]}" if last.reasons else ""
        return PruneItem(name, target, "blocked", f"{what} is a {last.verdict}{why}", last, unblock)
    if last.chart_content is None:
        return PruneItem(name, target, "blocked", f"{what} does not record its chart's content hash (a ledger row "
                         "from before identity checks); smoke it again", last, unblock)
    if last.chart_content != hashed:
        return PruneItem(name, target, "blocked", f"{what} smoked chart content {last.chart_content}, but {target} "
                         f"{version} now renders {hashed}: the chart changed since; smoke it again", last, unblock)
    if IDENTITY_NEEDED not in last.identity_matched:
        return PruneItem(name, target, "blocked", f"{what} passed, but the server did not confirm it serves the "
                         "chart's model (no model path or `root` matched)", last, unblock)
    figure = f", {last.tokens_per_s:.1f} t/s" if last.tokens_per_s else ""
    return PruneItem(name, target, "prune", f"{target} {version} passed its smoke on {last.date}{figure}", last)


def _last(rows: Sequence[SmokeRecord]) -> str:
    """The latest row of any kind, in a few words ("none" when there is none)."""
    if not rows:
        return "none"
    row = rows[-1]
    figure = f", {row.tokens_per_s:.1f} t/s" if row.tokens_per_s else ""
    return f"{row.verdict} at {row.chart_version} on {row.date}{figure}"
