"""`catalog serve` without the command line: build a snapshot of the market from the catalog folder, then keep
it current from a background thread that polls the files it is built from.

A rebuild happens only when the files change (`source.signature`: path, mtime and size of everything under
the catalog and charts folders), after they have stayed unchanged for one more poll (a `catalog bump` writes
several files), and never on a request: requests keep reading the previous snapshot until the new one is
swapped in whole. A rebuild that fails (a broken releases.yaml, an unreadable chart) keeps the previous
snapshot and reports the error on /health. No extra dependency: a poll of a few hundred files costs
milliseconds, and `watchfiles` would be one more compiled package for the same result.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from generator.core.errors import CatalogError, translate_os_error
from generator.market.api import Holder, Snapshot
from generator.market.history import LedgerReader
from generator.market.page import StorePage, store_page
from generator.market.source import Collected, PackageCache, collect, signature
from generator.publish.market import MarketBuild, build_market, read_icons

LOG = logging.getLogger("catalog.serve")


@dataclass(frozen=True)
class Sources:
    """Where a market is built from."""

    catalog: Path
    charts: Path
    ledger: LedgerReader
    source_url: str | None = None  # the URL users add in Olares (shown on the page)

    def signature(self) -> frozenset[tuple[str, int, int]]:
        return signature(self.catalog, self.charts)


@dataclass(frozen=True)
class Built:
    collected: Collected
    build: MarketBuild
    page: StorePage


def build(sources: Sources, cache: PackageCache, *, chart_base: str | None = "") -> Built:
    """The market and its page as the files are now."""
    collected = collect(sources.catalog, sources.charts, cache)
    market = build_market(collected.releases, read_icons(sources.catalog / "icons"), listed=collected.listed)
    page = store_page(sources.catalog, market, sources.ledger, source_url=sources.source_url, chart_base=chart_base,
                      problems=collected.problems)
    return Built(collected, market, page)


def snapshot(built: Built) -> Snapshot:
    return Snapshot.make(built.build, built.page.html.encode("utf-8"), built.page.plots, built.collected.problems)


class Watcher(threading.Thread):
    """Polls the sources every `interval` seconds and swaps in a new snapshot when they changed."""

    def __init__(self, holder: Holder, sources: Sources, cache: PackageCache, seen: frozenset[tuple[str, int, int]],
                 interval: float = 1.0, on_swap: Callable[[Snapshot], None] = lambda _s: None):
        super().__init__(name="catalog-serve-watcher", daemon=True)
        self.holder, self.sources, self.cache, self.interval = holder, sources, cache, interval
        self.on_swap = on_swap
        self.stopping = threading.Event()
        self.seen = seen  # the signature the current snapshot was built from

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        self.holder.watching = True  # also set by start(), before /health can be asked
        try:
            while not self.stopping.wait(self.interval):
                self.poll()
        finally:
            self.holder.watching = False  # a bug that ends the thread shows on /health as "degraded"

    def poll(self) -> bool:
        """One look at the files; True when a new snapshot was swapped in."""
        now = self.sources.signature()
        if now == self.seen:
            return False
        while not self.stopping.wait(self.interval):  # settle: rebuild once the files stop changing
            again = self.sources.signature()
            if again == now:
                break
            now = again
        if self.stopping.is_set():
            return False
        self.seen = now
        try:
            snap = snapshot(build(self.sources, self.cache))
        except CatalogError as exc:
            self.holder.reload_error = str(exc)
            LOG.error("rebuild failed, still serving generation %d: %s", self.holder.generation, exc)
            return False
        except OSError as exc:
            self.holder.reload_error = str(translate_os_error(exc))
            LOG.error("rebuild failed, still serving generation %d: %s", self.holder.generation, exc)
            return False
        self.holder.swap(snap)
        LOG.info("releases changed: serving hash %s (%d apps, generation %d)", snap.build.hash,
                 len(snap.build.entries), self.holder.generation)
        self.on_swap(snap)
        return True


def start(sources: Sources, *, interval: float = 1.0) -> tuple[Holder, Watcher]:
    """The first snapshot (errors propagate: the server does not start on a broken catalog) and its watcher."""
    cache = PackageCache()
    seen = sources.signature()  # taken first: a change during the first build triggers a rebuild
    holder = Holder(snapshot(build(sources, cache)))
    watcher = Watcher(holder, sources, cache, seen, interval)
    holder.watching = True
    watcher.start()
    return holder, watcher


__all__ = ["Built", "Sources", "Watcher", "build", "snapshot", "start"]
