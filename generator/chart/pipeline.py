"""The one-way flow shared by commands: catalog -> plan -> rendered trees in memory."""

from __future__ import annotations

from generator.catalog import Catalog, Resolved
from generator.chart.plan import ChartSpec, plan
from generator.chart.render import render
from generator.chart.writer import Tree


def render_app(resolved: Resolved, profile: str | None = None) -> Tree:
    """The app's chart; `profile` (olares-v2 | olares-v3) overrides the catalog's (docs/profiles.md)."""
    return render(plan(resolved, profile=profile))


def render_apps(selected: list[Resolved], profile: str | None = None) -> dict[str, Tree]:
    return {r.app.name: render_app(r, profile) for r in selected}


def rendered_apps(cat: Catalog) -> list[Resolved]:
    """Apps that have a chart: removed apps have none."""
    return [r for r in cat.select() if r.app.status != "removed"]


__all__ = ["ChartSpec", "Tree", "plan", "render_app", "render_apps", "rendered_apps"]
