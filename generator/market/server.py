"""`catalog serve` without the command line: build a snapshot of the market from the catalog folder, then keep
it current from a background thread that polls the files it is built from.

A rebuild happens only when the files change (`source.signature`: path, mtime and size of everything under
the catalog and charts folders), after they have stayed unchanged for one more poll (a `catalog bump` writes
several files), and never on a request: requests keep reading the previous snapshot until the new one is
swapped in whole. A rebuild that fails (a broken releases.yaml, an unreadable chart) keeps the previous
snapshot and reports the error on /health. No extra dependency: a poll of a few hundred files costs
milliseconds, and `watchfiles` would be one more compiled package for the same result.

The thread keeps the last good state whatever a rebuild meets: the catalog folder or releases.yaml gone (a
branch switch, an rsync deploy half-way) is not an empty market but "still serving generation N" on /health,
and a rebuild that fails on data nobody planned for (REBUILD_ERRORS) is logged with its traceback and shown
on /health the same way; the thread goes on polling.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml.error import YAMLError

from generator.catalog import Catalog, load_catalog
from generator.core import CatalogError, InputError, Problem, translate_os_error
from generator.core import Once
from generator.market.api import Holder, Snapshot
from generator.market.history import LedgerReader
from generator.market.page import StorePage, store_page
from generator.market.source import Collected, PackageCache, collect, signature
from generator.publish import MarketBuild, build_markets, read_icons
from generator.versions import releases_path
from generator.yamlio import chartdata

# What a rebuild may raise on input it did not plan for, besides the error tree: a bug's classes, named so that
# none of them ends the watcher (tests/test_errors.py forbids a bare `except Exception` outside the CLI). The
# traceback goes to the log and the message to /health; the previous snapshot keeps being served.
REBUILD_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, TypeError, LookupError, ArithmeticError, AttributeError, RuntimeError, AssertionError,
    MemoryError, YAMLError, UnicodeError)
POLL_ERRORS: tuple[type[BaseException], ...] = (CatalogError, OSError, *REBUILD_ERRORS)

LOG = logging.getLogger("catalog.serve")
LISTEN_WAIT_S = 60.0  # the longest the watcher waits for the server to listen before it makes the rest anyway


@dataclass(frozen=True)
class Sources:
    """Where a market is built from."""

    catalog: Path
    charts: Path
    ledger: LedgerReader
    source_url: str | None = None  # the URL users add in Olares (shown on the page)

    def signature(self) -> frozenset[tuple[str, int, int]]:
        return signature(self.catalog, self.charts)


    def missing(self) -> str | None:
        """What the market is built from and is not there now (None: everything is)."""
        if not self.catalog.is_dir():
            return f"the catalog folder {self.catalog} is missing"
        if not releases_path(self.catalog).is_file():
            return f"{releases_path(self.catalog)} is missing"
        return None


@dataclass(frozen=True)
class Built:
    collected: Collected
    builds: dict[str, MarketBuild]  # by profile, the newest format first
    store: Once[StorePage]  # the store page, made on first read (the fit of every app: seconds for 1,000 apps)
    problems: tuple[str, ...]  # collected's and the icons'

    @property
    def build(self) -> MarketBuild:
        return next(iter(self.builds.values()))

    @property
    def page(self) -> StorePage:
        return self.store()

    def page_files(self) -> tuple[bytes, Mapping[str, bytes]]:
        page = self.store()
        return page.html.encode("utf-8"), page.plots


def build(sources: Sources, cache: PackageCache, *, chart_base: str | None = "", history: bool = True,
          formats: bool = True) -> Built:
    """The market and its page as the files are now. A missing catalog folder or releases.yaml is an InputError
    (not an empty market: the server keeps what it serves, `catalog site` writes nothing). `history=False`: the
    older versions of the charts folder's git history are left for the next build; `formats=False`: so are the
    other formats' charts, and the catalog is not loaded for them (source.py `collect`)."""
    gone = sources.missing()
    if gone is not None:
        raise InputError([Problem(str(sources.catalog), None, None, f"{gone}; restore it (git checkout, the end "
                                  "of a deploy) and the market is rebuilt from it")])
    catalog: Catalog | None = None
    unreadable: tuple[str, ...] = ()
    if formats:
        try:
            catalog = load_catalog(sources.catalog)
        except CatalogError as exc:
            unreadable = (f"the catalog cannot be read, so no other-format chart is served: {exc}",)
    with chartdata.disk_cache(sources.charts):  # the charts' parsed files by their text: a second start reads JSON
        collected = collect(sources.catalog, sources.charts, cache, catalog, history=history, formats=formats)
        icons = read_icons(sources.catalog / "icons")
        builds = build_markets(collected.releases, icons.icons, listed=collected.listed)
    problems = collected.problems + icons.problems + unreadable
    shown = {name: b for name, b in builds.items() if name not in collected.waiting}  # not an empty format
    page = Once(lambda: store_page(sources.catalog, shown, sources.ledger, source_url=sources.source_url,
                                   chart_base=chart_base, problems=problems, catalog=catalog))
    return Built(collected, builds, page, problems)


def snapshot(built: Built) -> Snapshot:
    """The server's answers; the store page is made when first asked for (the watcher makes it for every
    rebuild it swaps in, off the request path)."""
    return Snapshot.make(built.builds, built.page_files, built.problems, built.collected.unexpressed,
                         built.collected.recorded, built.collected.pending, built.collected.waiting)


class Watcher(threading.Thread):
    """Polls the sources every `interval` seconds and swaps in a new snapshot when they changed."""

    def __init__(self, holder: Holder, sources: Sources, cache: PackageCache, seen: frozenset[tuple[str, int, int]],
                 interval: float = 1.0, on_swap: Callable[[Snapshot], None] = lambda _s: None):
        super().__init__(name="catalog-serve-watcher", daemon=True)
        self.holder, self.sources, self.cache, self.interval = holder, sources, cache, interval
        self.on_swap = on_swap
        self.stopping = threading.Event()
        self.seen = seen  # the signature the current snapshot was built from
        # set once the server listens (its lifespan's start): the rest of the first market is made after that, not
        # while the server starts (the two would share the interpreter); set from the start where no server waits
        self.listening = threading.Event()
        self.listening.set()

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        self.holder.watching = True  # also set by start(), before /health can be asked
        try:
            # the first snapshot left the git history and the other formats for now: made after one poll, once the
            # server listens
            first = self.holder.snapshot
            self.listening.wait(LISTEN_WAIT_S)
            if (first.pending or first.waiting) and not self.stopping.wait(self.interval):
                self.rebuild()
            while not self.stopping.wait(self.interval):
                try:
                    self.poll()
                except POLL_ERRORS as exc:  # the signature walk itself failed
                    LOG.exception("poll failed")
                    self._failed(f"cannot read the sources ({type(exc).__name__}: {exc})")
        finally:
            self.holder.watching = False  # a bug that ends the thread shows on /health as "degraded"

    def _failed(self, why: str) -> bool:
        self.holder.reload_error = f"{why}; still serving generation {self.holder.generation}"
        LOG.error("rebuild failed, still serving generation %d: %s", self.holder.generation, why)
        return False

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
        return self.rebuild()

    def rebuild(self) -> bool:
        """A whole new snapshot from the sources, swapped in; on failure the previous one stays (said on /health)."""
        try:
            snap = snapshot(build(self.sources, self.cache))
        except CatalogError as exc:
            return self._failed(str(exc))
        except OSError as exc:
            return self._failed(str(translate_os_error(exc)))
        except REBUILD_ERRORS as exc:  # a bug met on input: keep serving, say so, keep polling
            LOG.exception("rebuild failed on unexpected input")
            return self._failed(f"internal error while rebuilding ({type(exc).__name__}: {exc}); report this bug")
        self.holder.swap(snap)
        try:
            snap.store()  # the new store page, made here rather than by the first person who opens it
        except REBUILD_ERRORS:  # the market is served; the page's own failure shows when it is opened
            LOG.exception("the store page failed on unexpected input")
        LOG.info("releases changed: serving hash %s (%d apps, generation %d)", snap.build.hash,
                 len(snap.build.entries), self.holder.generation)
        self.on_swap(snap)
        return True


def start(sources: Sources, *, interval: float = 1.0) -> tuple[Holder, Watcher]:
    """The first snapshot (errors propagate: the server does not start on a broken catalog) and its watcher.
    The first snapshot serves the charts folder's versions in their own format, without reading the git history
    for older ones or rendering the other formats' charts, so the server answers within seconds; the watcher makes
    the rest at once and swaps in the whole market (/health says `starting` until then, and a device of a format
    not made yet is answered 503 with Retry-After, never an empty market)."""
    cache = PackageCache()
    seen = sources.signature()  # taken first: a change during the first build triggers a rebuild
    holder = Holder(snapshot(build(sources, cache, history=False, formats=False)))
    watcher = Watcher(holder, sources, cache, seen, interval)
    watcher.listening.clear()  # the caller sets it when its server listens (make_app's `on_start`)
    holder.watching = True
    watcher.start()
    return holder, watcher


__all__ = ["Built", "Sources", "Watcher", "build", "snapshot", "start"]
