"""The one-way flow shared by commands: catalog -> plan -> rendered trees in memory."""

from __future__ import annotations

from generator.catalog import Catalog, Resolved
from generator.chart.plan import ChartSpec, plan
from generator.chart.render import render
from generator.chart.writer import Tree


def render_app(resolved: Resolved) -> Tree:
    return render(plan(resolved))


def render_apps(selected: list[Resolved]) -> dict[str, Tree]:
    return {r.app.name: render_app(r) for r in selected}


def rendered_apps(cat: Catalog) -> list[Resolved]:
    """Apps that have a chart: removed apps have none."""
    return [r for r in cat.select() if r.app.status != "removed"]


__all__ = ["ChartSpec", "Tree", "plan", "render_app", "render_apps", "rendered_apps"]
