"""Versions that move with content: compare each app's rendered chart with its recorded release,
raise the version, and write the app file, the chart, CHANGELOG.md and releases.yaml.

Order of writes (each file atomic): app files, charts, CHANGELOG.md, releases.yaml. A run that stops
half-way is completed by running it again: an app whose file already carries a version above its
recorded release is recorded with that version, and entries that exist are not written twice.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from generator.catalog import Catalog, Resolved, load_catalog
from generator.versions.changelog import changelog_path, write_entries
from generator.versions.appfile import write_app_file
from generator.core import UsageError
from generator.core import safe_line
from generator.versions.releases import Release, Releases, load_releases
from generator.chart import ChartSpec
from generator.chart.plan import plan
from generator.versions.diff import Change, diff_states, level_of, quiet_flags
from generator.versions.formats import variants
from generator.chart.render import render
from generator.versions.state import ReleaseState, content_hash, next_version, parse_version, release_state
from generator.chart import Tree, ensure_writable, write_charts
from generator.core import writable

UNCHANGED_NOTE = Change("", "Re-released without a chart change", "patch")


@dataclass
class Current:
    """What the catalog renders now for one app."""

    resolved: Resolved
    spec: ChartSpec
    tree: Tree
    content: str
    state: ReleaseState
    formats: tuple[tuple[str, str], ...] = ()  # (profile, content) of the variants (versions/formats.py)

    @property
    def name(self) -> str:
        return self.resolved.app.name

    @property
    def version(self) -> str:
        return self.resolved.app.version


@dataclass
class Outcome:
    app: str
    before: str | None  # the newest recorded release
    after: str  # the version the app has (or gets)
    action: str  # unchanged | new | bump | record | refused
    level: str | None = None
    changes: list[Change] = field(default_factory=list)
    message: str = ""

    @property
    def writes_entry(self) -> bool:
        return self.action in ("bump", "record")


def today() -> str:
    """UTC date of the run; SOURCE_DATE_EPOCH (reproducible builds) overrides it."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch else dt.datetime.now(dt.UTC)
    return now.date().isoformat()


def current(r: Resolved) -> Current:
    spec = plan(r)
    tree = render(spec)
    made, _refused = variants(r)
    formats = tuple(sorted((name, v.content) for name, v in made.items()))
    return Current(r, spec, tree, content_hash(tree), release_state(r, spec, tree), formats)


def _formats_moved(cur: Current, rec: Release) -> list[str]:
    """Profiles whose recorded variant has other content now (one not recorded yet is no change: apply fills it)."""
    return [name for name, content in cur.formats if rec.format_content(name) not in (None, content)]


def _changes(cur: Current, rec: Release) -> list[Change]:
    formats = [Change("Changed", f"the {name} chart", "patch") for name in _formats_moved(cur, rec)]
    if rec.state is None:
        return ([] if cur.content == rec.content else [Change("Changed", "chart content", "patch")]) + formats
    return diff_states(rec.state, cur.state, quiet_flags(cur.spec.engine.args)) or formats


def _changed(cur: Current, rec: Release) -> bool:
    status_moved = rec.state is not None and rec.state.status != cur.state.status
    return cur.content != rec.content or status_moved or bool(_formats_moved(cur, rec))


def _with_formats(rec: Release, cur: Current) -> Release | None:
    """`rec` with the variants it does not record yet (same version, same content), or None when nothing is new."""
    known = dict(rec.formats)
    new = {name: content for name, content in cur.formats if name not in known}
    if not new or cur.content != rec.content:
        return None
    return Release(rec.version, rec.content, rec.date, rec.state, tuple(sorted({**known, **new}.items())))


def _filled(run: BumpRun) -> list[tuple[str, Release]]:
    """Unchanged versions with the variants they do not record yet (a new profile, a record older than formats)."""
    filled: list[tuple[str, Release]] = []
    for o in run.outcomes:
        latest = run.releases.latest(o.app)
        rel = _with_formats(latest, run.currents[o.app]) if o.action == "unchanged" and latest else None
        if rel is not None:
            filled.append((o.app, rel))
    return filled


def assess(cur: Current, rec: Release | None, *, level: str | None = None, force: bool = False,
           note: str | None = None) -> Outcome:
    """What `catalog bump` does for one app (pure: reads nothing, writes nothing)."""
    version = cur.version
    if rec is None:
        return Outcome(cur.name, None, version, "new", message="first record; no changelog entry")
    if parse_version(version) < parse_version(rec.version):
        return Outcome(cur.name, rec.version, version, "refused", message=(
            f"version {version} is below the released {rec.version}; versions never go down: "
            f"set `version: {rec.version}` in {cur.resolved.file} and run `catalog bump {cur.name}`"))
    changes = _changes(cur, rec) if _changed(cur, rec) else []
    extra = [Change("", note, "patch")] if note else []
    if version != rec.version:  # raised by hand: record it with its entry
        return Outcome(cur.name, rec.version, version, "record", None, (changes or [UNCHANGED_NOTE]) + extra)
    if not changes and not force:
        return Outcome(cur.name, rec.version, version, "unchanged")
    chosen = level or level_of(changes)
    return Outcome(cur.name, rec.version, next_version(version, chosen), "bump", chosen,
                   (changes or ([] if extra else [UNCHANGED_NOTE])) + extra)


def upgrade_note(outcome: Outcome) -> str:
    """The line prepended to the app's upgrade_description: `2.5.7: removed ...; context ...`."""
    text = safe_line("; ".join(c.phrase for c in outcome.changes))  # one line of the app file's `>-` block
    return f"{outcome.after}: {text}" + ("" if text.endswith(".") else ".")


def check_message(outcome: Outcome) -> str | None:
    """Why `catalog bump --check` fails for this app, or None."""
    name = outcome.app
    if outcome.action == "refused":
        return f"{name}: {outcome.message}"
    if outcome.action == "new":
        return f"{name} {outcome.after}: not recorded in releases.yaml; run `catalog bump {name}` to record it"
    if outcome.action == "record":
        return (f"{name}: version {outcome.after} is not recorded (last release {outcome.before}); "
                f"run `catalog bump {name}` to record it and write its changelog entry")
    if outcome.action == "bump":
        what = "; ".join(c.phrase for c in outcome.changes)
        return f"{name} {outcome.before}: content changed without a version bump ({what}); run `catalog bump {name}`"
    return None


@dataclass
class BumpRun:
    catalog: Catalog
    releases: Releases
    currents: dict[str, Current]
    outcomes: list[Outcome]


def assess_catalog(catalog_root: Path | None, names: list[str] | None = None, *, level: str | None = None,
                   note: str | None = None) -> BumpRun:
    """Assess every app with a chart (or the named ones); explicitly named apps bump on --level/--note."""
    cat = load_catalog(catalog_root)
    releases = load_releases(cat.root)
    chosen = [r for r in cat.select(names or []) if r.app.status != "removed"]
    force = bool(names) and (level is not None or note is not None)
    currents = {r.app.name: current(r) for r in chosen}
    outcomes = [assess(c, releases.latest(n), level=level, force=force, note=note) for n, c in currents.items()]
    return BumpRun(cat, releases, currents, outcomes)


def apply(run: BumpRun, out: Path, date: str | None = None) -> list[Outcome]:
    """Write what `assess` decided; returns the outcomes that changed something."""
    date = date or today()
    moving = [o for o in run.outcomes if o.writes_entry]
    recorded = [o for o in run.outcomes if o.writes_entry or o.action == "new"]
    filled = _filled(run)
    # every target checked before the first write: a link or a foreign charts folder refuses the whole run
    targets = [run.catalog.file_of(o.app) for o in moving]
    if moving:
        targets.append(changelog_path(run.catalog.root))
        ensure_writable(out)
    if recorded or filled:
        targets.append(run.releases.path)
    for path in targets:
        writable(path)
    for o in moving:
        write_app_file(run.catalog.file_of(o.app), version=o.after, note=upgrade_note(o))
    if moving:
        fresh = load_catalog(run.catalog.root)
        for o in moving:
            cur = current(fresh.apps[o.app])
            if cur.content != run.currents[o.app].content:
                raise RuntimeError(f"{o.app}: editing the version changed the chart content; report this bug")
            run.currents[o.app] = cur
        write_entries(changelog_path(run.catalog.root),
                      [(o.app, o.after, date, [c.bullet for c in o.changes]) for o in moving])
    for o in recorded:
        cur = run.currents[o.app]
        run.releases.record(o.app, Release(o.after, cur.content, date, cur.state, cur.formats))
    for name, rel in filled:
        run.releases.record(name, rel)
    if recorded or filled:
        run.releases.save()
    if moving:  # the charts last, in one exchange: any failure before leaves them untouched, and the CLI puts the
        # files written above back as they were (core/fileio.py `journal`); the writer restores its own on failure
        write_charts(out, {o.app: run.currents[o.app].tree for o in moving}, prune_others=False)
    return recorded


def record_current(run: BumpRun, date: str | None = None) -> list[Outcome]:
    """`--record`: take the current content as the current version (for versions never published)."""
    date = date or today()
    done = []
    for name, cur in run.currents.items():
        latest = run.releases.latest(name)
        if latest and parse_version(cur.version) < parse_version(latest.version):
            raise UsageError(f"{name}: version {cur.version} is below the recorded {latest.version}; "
                             "versions never go down")
        run.releases.record(name, Release(cur.version, cur.content, date, cur.state, cur.formats))
        done.append(Outcome(name, latest.version if latest else None, cur.version, "recorded"))
    run.releases.save()
    return done


def bump_for_suspend(catalog_root: Path, app: str, reason: str, out: Path | None = None) -> Outcome:
    """For `catalog prune`: a suspended app gets a new version (docs/domain.md: a SUSPEND bumps).

    Call it after setting `status: deprecated` in the app file; the status change and `reason` are
    written to CHANGELOG.md and the app's upgrade_description, and the chart is re-rendered.
    """
    run = assess_catalog(catalog_root, [app], level="patch", note=f"Suspended: {reason}")
    outcome = run.outcomes[0]
    if outcome.action == "refused":
        raise UsageError(f"{app}: {outcome.message}")
    apply(run, out or run.catalog.root.resolve().parent / "charts")
    return outcome
