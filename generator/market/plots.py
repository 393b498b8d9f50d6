"""The store page's two plots per app, drawn by matplotlib as SVG on the server.

Why matplotlib: a well-kept plotting library whose SVG needs nothing in the browser (no script, no network:
a Vega-Lite spec would need vega-embed's JavaScript vendored from npm at build time), works the same in the
static `catalog site` copy, and writes byte-identical files for the same data once its SVG id salt and date
are fixed (rcParams `svg.hashsalt`, metadata Date None), so a rebuilt site changes only where data changed.
Figures use the object API (no pyplot global state); the server draws them in its one rebuild thread.
"""

from __future__ import annotations

import datetime as dt
import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from generator.core import require
from generator.fit import Fit
from generator.market.history import SmokePoint

if TYPE_CHECKING:
    from matplotlib.figure import Figure

VERDICT_COLOURS = {"pass": "#2e7d32", "regression": "#ef6c00", "fail": "#c62828", "suspect": "#6a1b9a"}
BENCHMARK_COLOUR = "#1565c0"
RC: Any = {"svg.hashsalt": "catalog-store", "svg.fonttype": "none", "font.size": 8.0,
      "font.family": ["DejaVu Sans", "sans-serif"], "axes.spines.top": False, "axes.spines.right": False}


@dataclass(frozen=True)
class BenchmarkPoint:
    """A figure the catalog records for the app (`benchmarks:`), drawn beside the smokes."""

    date: dt.date
    tokens_per_s: float
    label: str


def _figure(width: float, height: float) -> Figure:
    require("matplotlib", "market")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=96)


def _svg(fig: Figure, title: str) -> bytes:
    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(out, format="svg", metadata={"Date": None, "Title": title, "Creator": "catalog (matplotlib)"})
    return out.getvalue().encode("utf-8")


DRAWN_YEARS = (1970, 9000)  # matplotlib dates end at years 1 and 9999; the axis is padded by days on each side


def speed_svg(app: str, smokes: Sequence[SmokePoint], benchmarks: Sequence[BenchmarkPoint]) -> bytes:
    """tokens/s over time: each smoke coloured by its verdict, the recorded benchmarks as open diamonds. Points
    dated outside DRAWN_YEARS (a ledger row of year 1) are left out of the plot, not an error of the page."""
    low, high = DRAWN_YEARS
    return _speed_svg(app, tuple(s for s in smokes if low <= s.when.year <= high),
                      tuple(b for b in benchmarks if low <= b.date.year <= high))


@lru_cache(maxsize=2048)
def _speed_svg(app: str, smokes: tuple[SmokePoint, ...], benchmarks: tuple[BenchmarkPoint, ...]) -> bytes:
    import matplotlib
    import matplotlib.dates as mdates

    with matplotlib.rc_context(RC):
        fig = _figure(4.0, 2.0)
        fig.subplots_adjust(left=0.14, right=0.97, top=0.95, bottom=0.21)
        ax = fig.subplots()
        # x as matplotlib date numbers (days), y as tokens/s; smokes without a figure are not drawn
        measured = [(_day(s.when.replace(tzinfo=None)), s.tokens_per_s, s.verdict) for s in smokes
                    if s.tokens_per_s is not None]
        bench = [(_day(dt.datetime.combine(b.date, dt.time())), b.tokens_per_s) for b in benchmarks]
        ax.xaxis_date()
        if measured:
            ax.plot([x for x, _, _ in measured], [y for _, y, _ in measured], color="#9e9e9e", linewidth=1, zorder=1)
            for verdict, colour in VERDICT_COLOURS.items():
                pts = [(x, y) for x, y, v in measured if v == verdict]
                if pts:
                    ax.scatter([x for x, _ in pts], [y for _, y in pts], s=22, color=colour,
                               label=f"smoke: {verdict}", zorder=3)
        if bench:
            ax.scatter([x for x, _ in bench], [y for _, y in bench], s=34, marker="D", facecolors="none",
                       edgecolors=BENCHMARK_COLOUR, label="recorded benchmark", zorder=2)
        if not measured and not bench:
            ax.text(0.5, 0.5, "no smoke recorded yet", transform=ax.transAxes, ha="center", va="center",
                    color="#757575")
            ax.set_xticks([])
            ax.set_yticks([])
        else:
            xs = [x for x, _, _ in measured] + [x for x, _ in bench]
            pad = max((max(xs) - min(xs)) * 0.08, 3.0)
            ax.set_xlim(min(xs) - pad, max(xs) + pad)
            locator = mdates.AutoDateLocator(minticks=2, maxticks=5)  # type: ignore[no-untyped-call]
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
            top = max([y for _, y, _ in measured] + [y for _, y in bench])
            ax.set_ylim(0, top * 1.25)
            ax.legend(loc="upper left", fontsize=6.5, frameon=False, ncols=2)
            ax.grid(axis="y", color="#eeeeee")
        ax.set_ylabel("tokens/s")
        return _svg(fig, f"tokens/s history of {app}")


def _day(when: dt.datetime) -> float:
    """matplotlib's date number of `when` (days since its epoch, 1970-01-01)."""
    import matplotlib.dates as mdates

    return float(mdates.date2num(when))  # type: ignore[no-untyped-call]


@lru_cache(maxsize=1024)
def fit_svg(fit: Fit) -> bytes:
    """Where the GPU memory goes: one stacked bar per pool (the fit's parts), its capacity as a line."""
    import matplotlib
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    with matplotlib.rc_context(RC):
        pools = list(fit.pools)
        parts = [p for p in fit.parts if p.mib > 0]
        height = max(2.0, 0.55 + 0.15 * len(parts))
        fig = _figure(5.0, height)
        fig.subplots_adjust(left=0.22, right=0.58, top=1 - 0.24 / height, bottom=0.46 / height)
        ax = fig.subplots()
        cmap = matplotlib.colormaps["tab20"]
        components = list(dict.fromkeys(p.component for p in parts))
        colour = {c: cmap(i % 20) for i, c in enumerate(components)}
        labelled: set[str] = set()
        for row, pool in enumerate(pools):
            left = 0.0
            for part in (p for p in parts if p.pool == pool.key):
                label = part.component if part.component not in labelled else None
                labelled.add(part.component)
                ax.barh(row, part.mib, left=left, height=0.6, color=colour[part.component], label=label,
                        edgecolor="white", linewidth=0.5)
                left += part.mib
            ax.vlines(pool.capacity_mib, row - 0.42, row + 0.42, colors="#212121", linewidth=1.5)
            margin = fit.margin(pool.key)
            ax.annotate(f"{margin:+,.0f}", (max(left, pool.capacity_mib), row), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=7,
                        color="#c62828" if margin < 0 else "#212121")
        ax.set_yticks(range(len(pools)), [_short(p.title) for p in pools])
        ax.set_ylim(len(pools) - 0.5, -0.5)
        ax.set_xlabel(f"MiB (cap {fit.cap_mib:,}; line: pool capacity)")
        ax.set_xlim(0, max([p.capacity_mib for p in pools] + [fit.used(p.key) for p in pools]) * 1.2)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        fig.legend(loc="center left", bbox_to_anchor=(0.59, 0.5), fontsize=6.5, frameon=False, handlelength=1.2)
        ax.set_title(f"{fit.verdict} at {fit.context:,} tokens", fontsize=8, loc="left")
        return _svg(fig, f"GPU memory fit of {fit.app}")


def _short(title: str) -> str:
    return textwrap.fill(title, 16)


__all__ = ["BenchmarkPoint", "fit_svg", "speed_svg"]
