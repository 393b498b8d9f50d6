"""What upstream changed since the last sync, app by app, and the merge into the catalog (docs/sync.md).

Each upstream chart is imported with the importer's public entry point (`import_paths`, a dry run: nothing is
written by it) and compared, field by field, with the catalog's app: a three-way merge against the base, what
upstream looked like at the last sync (catalog/sync.yaml `fields`, per app). A field upstream changed lands where
the catalog still has the base's value; where the catalog changed it (the owner's edit), or where no base is
recorded and the catalog's version is above upstream's, the catalog's value is kept and the field is a conflict
(field, ours, theirs, why kept). A deliberate correction (catalog/corrections.yaml) keeps ours the same way. A
correction yields to a measured ground: a value upstream set on a measurement (catalog/corrections.yaml
`measured`) lands, and the app records the ground in its `measured` entries (docs/fit.md "Measured beats modeled").

An app is `removed` only when upstream had it (the sync record lists it, or upstream's git history held its folder)
and no longer lists it; a deprecated app is left to `catalog prune`'s gate; every other app upstream lacks is the
catalog's own (`local`). A merged app whose rendered chart changes is given a version above upstream's newest (one
content per version: generator/rules/versions_upstream.py; generator/sync/__init__.py settles it after rendering).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import semver

from generator.catalog import Catalog, Resolved
from generator.chart.plan import plan as chart_plan
from generator.chart.render import render
from generator.fit.roofline import roofline
from generator.importer import Imported, Report, import_paths
from generator.schema import App
from generator.rules import chart_digest
from generator.schema import Corrections, MeasuredGround, SyncFile, SyncRecord
from generator.core import InputError, Problem
from generator.sync.source import Upstream, UpstreamChart
from generator.sync.source import where as upstream_at
from generator.sync.source import without_credentials
from generator.yamlio import parse_document

# The fields compared, by facet (the words: image, args, context, env, resources, metadata). `stack`
# carries the image; the flag-like fields are the engine's args.
FACETS: dict[str, tuple[str, ...]] = {
    "image": ("stack",),
    "args": ("model", "quantization", "served_name", "kv_cache_type", "kv_cache_type_v", "speculative", "vision",
             "mmproj", "audio", "chat_template", "slot_save", "gpu_memory_utilization", "extra_args"),
    "context": ("context_length",),
    "env": ("env", "python_packages", "genesis_patches"),
    "resources": ("resources", "gpu_memory_mib", "gpu_room"),
    "metadata": ("title", "description", "full_description", "icon", "owners", "upgrade_description", "developer",
                 "submitter", "website", "source_code", "license"),
}
FACET_OF = {f: facet for facet, fields in FACETS.items() for f in fields}
# Written with the merged fields but not reported: what the import recorded of upstream's chart.
CARRIED = ("unmapped",)
# Fields upstream's chart cannot express (the import never sets them): the catalog's value always stays and is
# never reported as a change. `gpu_room` is the room the fit leaves beside the app (docs/fit.md), a fact of the
# catalog, not of any chart.
UNKNOWABLE = ("gpu_room",)
# Merged, never replaced: upstream's upgrade notes are added to ours (docs/sync.md "Upgrade notes").
NOTES = "upgrade_description"
# Every field the merge may change; apply.py edits only these in an app file (the rest stays byte-identical).
TOUCHED = tuple(k for k in FACET_OF if k not in UNKNOWABLE) + CARRIED + ("version", "measured")

Plain = Any  # JSON-shaped data (the app file's values)


@dataclass(frozen=True)
class Change:
    """One field that differs: `kind` is `lands` (upstream's value is taken), `conflict` (a correction keeps
    ours) or `measured` (upstream's measured value lands over a correction)."""

    field: str  # an app field, `env.NAME` or `args.--flag`
    facet: str
    ours: Plain
    theirs: Plain
    kind: str
    reason: str = ""  # why ours was kept (a conflict), or the measured ground's note
    source: str = ""

    def as_dict(self) -> dict[str, Plain]:
        return {"field": self.field, "facet": self.facet, "ours": self.ours, "theirs": self.theirs,
                "kind": self.kind, "reason": self.reason, "source": self.source}


@dataclass
class AppPlan:
    app: str  # the catalog's name
    upstream_name: str | None
    status: str  # new, bumped, changed, kept, unchanged, removed, dropped, local, skipped, error
    upstream_version: str | None = None
    catalog_version: str | None = None
    new_version: str | None = None  # the version the merged app gets
    changes: list[Change] = field(default_factory=list)
    detail: str = ""  # why skipped / the import's error
    digest: str | None = None
    commit: str | None = None  # upstream's commit of this app's chart (a git source's, or the mirror's SOURCES)
    merged: dict[str, Plain] | None = None  # the app file's data after the merge (bumped, changed)
    measured: list[MeasuredGround] = field(default_factory=list)  # grounds to record on the app
    benchmarks: list[dict[str, Plain]] = field(default_factory=list)  # upstream's measured figures ours lacks
    imported: Imported | None = None
    mergeable: bool = False  # the merged app may be written (upstream's chart imported, or its drafts kept out)
    base: dict[str, Plain] | None = None  # upstream's normalized fields at this sync (the next sync's merge base)

    @property
    def conflicts(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "conflict"]

    def as_dict(self) -> dict[str, Plain]:
        return {"app": self.app, "upstream_name": self.upstream_name, "status": self.status,
                "upstream_version": self.upstream_version, "catalog_version": self.catalog_version,
                "new_version": self.new_version, "detail": self.detail,
                "changes": [c.as_dict() for c in self.changes]}


@dataclass
class SyncPlan:
    upstream: str
    commit: str | None
    apps: list[AppPlan]
    report: Report | None = None  # the import's report (drafts for new apps)
    subdir: str | None = None  # the folder of the repository that holds the charts
    warnings: list[str] = field(default_factory=list)
    record: SyncFile | None = None  # catalog/sync.yaml after the sync
    images: dict[str, str] = field(default_factory=dict)  # stack id -> image (catalog stacks and import drafts)

    def count(self, status: str) -> int:
        return sum(1 for a in self.apps if a.status == status)

    @property
    def conflicts(self) -> int:
        return sum(len(a.conflicts) for a in self.apps)

    def summary(self) -> dict[str, int]:
        keys = ("new", "bumped", "changed", "kept", "held", "unchanged", "removed", "dropped", "local", "skipped",
                "error")
        return {**{k: self.count(k) for k in keys}, "conflicts": self.conflicts}

    def as_dict(self) -> dict[str, Plain]:
        return {"upstream": self.upstream, "commit": self.commit, "summary": self.summary(),
                "warnings": self.warnings, "apps": [a.as_dict() for a in self.apps]}


def plain(value: Any) -> Plain:
    """JSON-shaped data: models dumped, tuples as lists."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.loads(json.dumps(value, default=_encode))


def _encode(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return list(value)


def _defaults() -> dict[str, Plain]:
    return {k: plain(f.get_default(call_default_factory=True)) for k, f in App.model_fields.items()
            if not f.is_required()}


def _groups(argv: list[str]) -> dict[str, list[str]]:
    """Option groups of an argv: `--flag` -> its values (a repeated flag keeps every value, in order)."""
    out: dict[str, list[str]] = {}
    flag = ""
    for token in argv:
        if token.startswith("-") and not _is_number(token):
            flag = token
            out.setdefault(flag, [])
        else:
            out.setdefault(flag, []).append(token)
    return out


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _flatten(groups: dict[str, list[str]], order: list[str]) -> list[str]:
    out: list[str] = []
    for flag in order:
        if flag in groups:
            out += ([flag] if flag else []) + groups[flag]
    return out


def _match(rows: Any, app: str, field_path: str) -> Any:
    return next((r for r in rows if fnmatch.fnmatchcase(app, r.app) and fnmatch.fnmatchcase(field_path, r.field)),
                None)


def _fields(ours: dict[str, Plain], theirs: dict[str, Plain]) -> list[tuple[str, Plain, Plain]]:
    """(field path, ours, theirs) for every compared field that differs; env and extra_args per name."""
    out: list[tuple[str, Plain, Plain]] = []
    for facet_fields in FACETS.values():
        for name in facet_fields:
            if name in UNKNOWABLE:
                continue
            a, b = ours.get(name), theirs.get(name)
            if name == NOTES:
                b = merge_notes(a, b)
            if a == b:
                continue
            if name == "env":
                a, b = a or {}, b or {}
                out += [(f"env.{k}", a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            elif name == "extra_args":
                ga, gb = _groups(list(a or [])), _groups(list(b or []))
                out += [(f"args.{k}", ga.get(k), gb.get(k)) for k in sorted(set(ga) | set(gb))
                        if ga.get(k) != gb.get(k)]
            else:
                out.append((name, a, b))
    return out


def _facet(field_path: str) -> str:
    if field_path.startswith(("env.", "args.")):
        return field_path.split(".", 1)[0]
    return FACET_OF[field_path]


def _same_value(measured: str, value: Plain) -> bool:
    if value is None:
        return False
    try:
        return abs(float(measured.rstrip("m")) - float(str(value).rstrip("m"))) < 1e-9
    except ValueError:
        return measured == str(value)


@dataclass(frozen=True)
class Base:
    """What the merge compares ours with besides upstream: upstream's fields at the last sync (None: not recorded)
    and whether the catalog's version is above upstream's (without a base, ours then wins every field)."""

    fields: dict[str, Plain] | None
    ours_ahead: bool
    ours_version: str | None = None
    theirs_version: str | None = None


def _classify(name: str, ours: dict[str, Plain], theirs: dict[str, Plain], fixes: Corrections,
              plan: AppPlan, base: Base | None = None) -> set[str]:
    """Record each differing field on `plan`; the field paths whose value stays ours (a correction, the owner's
    edit since the base, or the catalog's version above upstream's when no base is recorded)."""
    keep: set[str] = set()
    edited = {p: v for p, v, _ in _fields(ours, {**_defaults(), **base.fields})} \
        if base is not None and base.fields is not None else None
    for path, a, b in _fields(ours, theirs):
        ground = _match(fixes.measured, name, path)
        row = _match(fixes.corrections, name, path)
        if ground is not None and _same_value(ground.value, b):
            plan.changes.append(Change(path, _facet(path), a, b, "measured", ground.note, ground.source))
            plan.measured.append(ground)
        elif row is not None:
            plan.changes.append(Change(path, _facet(path), a, b, "conflict", row.reason, row.source))
            keep.add(path)
        elif edited is not None and path in edited:
            plan.changes.append(Change(path, _facet(path), a, b, "conflict",
                                       "the catalog changed it since the last sync (the owner's edit): ours kept"))
            keep.add(path)
        elif edited is None and base is not None and base.ours_ahead:
            plan.changes.append(Change(path, _facet(path), a, b, "conflict",
                                       f"the catalog's version {base.ours_version} is above upstream's "
                                       f"{base.theirs_version} and no sync recorded upstream's value: ours kept"))
            keep.add(path)
        else:
            plan.changes.append(Change(path, _facet(path), a, b, "lands"))
    return keep


def _merged_env(ours: dict[str, str], theirs: dict[str, str], keep: set[str]) -> dict[str, str]:
    env = {k: v for k, v in theirs.items() if f"env.{k}" not in keep}
    env.update({k: v for k, v in ours.items() if f"env.{k}" in keep})
    return env


def _merged_args(ours: list[str], theirs: list[str], keep: set[str]) -> list[str]:
    ga, gb = _groups(ours), _groups(theirs)
    order = list(gb) + [k for k in ga if k not in gb]
    for flag in order:
        if f"args.{flag}" in keep:
            if flag in ga:
                gb[flag] = ga[flag]
            else:
                gb.pop(flag, None)
    return _flatten(gb, order)


def merge_notes(ours: str | None, theirs: str | None) -> str | None:
    """Upstream's upgrade notes merged with ours: each line of theirs that ours lacks comes first (newest on
    top, upstream's order), then ours whole; our history is never erased."""
    if not theirs:
        return ours
    if not ours:
        return theirs
    have = {line.strip() for line in ours.splitlines() if line.strip()}
    new = [line.rstrip() for line in theirs.splitlines() if line.strip() and line.strip() not in have]
    return "\n".join([*new, ours]) if new else ours


def _merge(name: str, ours: dict[str, Plain], theirs: dict[str, Plain], fixes: Corrections,
           plan: AppPlan, resolved: Resolved | None = None, base: Base | None = None) -> dict[str, Plain]:
    """The app's data with upstream's changes, but for the fields that stay ours (`_classify`)."""
    keep = _classify(name, ours, theirs, fixes, plan, base)
    merged = dict(ours)
    for key in FACET_OF:
        if key == "env":
            merged[key] = _merged_env(ours.get(key) or {}, theirs.get(key) or {}, keep)
        elif key == "extra_args":
            merged[key] = _merged_args(list(ours.get(key) or []), list(theirs.get(key) or []), keep)
        elif key in UNKNOWABLE:
            continue
        elif key == NOTES and key not in keep:
            merged[key] = merge_notes(ours.get(key), theirs.get(key))
        elif key not in keep:
            merged[key] = theirs.get(key)
    for key in CARRIED:
        merged[key] = theirs.get(key)
    plan.benchmarks = _new_benchmarks(ours.get("benchmarks") or [], theirs.get("benchmarks") or [])
    if resolved is not None:
        plan.benchmarks = _under_roof(plan, resolved, plan.benchmarks)
    for bench in plan.benchmarks:
        plan.changes.append(Change("benchmarks", "metadata", None, bench["tokens_per_s"], "lands",
                                   "upstream's measured figure (metadata.bento), added to the app's benchmarks",
                                   str(bench.get("source", ""))))
    return merged


def _under_roof(plan: AppPlan, resolved: Resolved, benches: list[dict[str, Plain]]) -> list[dict[str, Plain]]:
    """The figures at or under the app's bandwidth roofline (generator/fit/roofline.py); one above it cannot be a
    measurement of this chart (a stale or another build's figure): reported, not recorded."""
    kept = []
    for bench in benches:
        if resolved.device.memory_bandwidth_gb_s is None:  # nothing bounds the figure: none becomes a benchmark
            plan.changes.append(Change("benchmarks", "metadata", None, bench["tokens_per_s"], "conflict",
                                       f"the device {resolved.device.name} states no memory bandwidth, so no "
                                       "figure can be checked against its roofline: not recorded (measure it: "
                                       "`catalog smoke`)", str(bench.get("source", ""))))
            continue
        roof = roofline(resolved, int(bench.get("context") or 0), acceptance=bench.get("acceptance"))
        if roof is not None and float(bench["tokens_per_s"]) > roof.bound_tps:
            plan.changes.append(Change("benchmarks", "metadata", None, bench["tokens_per_s"], "conflict",
                                       f"above the roofline bound {roof.bound_tps:.1f} t/s of the catalog's app: "
                                       "not recorded (measure it: `catalog smoke`)", str(bench.get("source", ""))))
        else:
            kept.append(bench)
    return kept


def _new_benchmarks(ours: list[Plain], theirs: list[Plain]) -> list[dict[str, Plain]]:
    """Upstream's benchmarks (the import reads its metadata.bento hero speed) that ours lacks: a figure is the
    same when its speed and acceptance are (the read date differs from run to run; a context recorded by an older
    import is the server's, not the measurement's)."""
    def key(b: Plain) -> tuple[Plain, ...]:
        return (b.get("tokens_per_s"), b.get("acceptance"))
    have = {key(b) for b in ours}
    return [b for b in theirs if key(b) not in have]


def _blocked(plan: AppPlan, result: Imported) -> list[str]:
    """What of upstream's draft (each `missing` entry, named by its leading field: `title: …`, `stack … is a
    draft`) no correction keeps out of the merge (an empty list: the merged app points at no draft)."""
    if result.stack_draft:  # its args were read against a draft stack (no defaults, no speculative mapping):
        return list(result.missing)  # they cannot be laid over the catalog's stack, whatever a correction keeps
    kept = {c.field.split(".", 1)[0] for c in plan.conflicts}
    return [m for m in result.missing if (re.match(r"[a-z_]+", m) or [""])[0] not in kept]


def _our_digest(current: Resolved) -> str:
    """chart_digest of the catalog's rendered chart, as MKT002 computes it (generator/rules/versions_upstream.py)."""
    return chart_digest(render(chart_plan(current)))


def _at_or_below(ours: str, theirs: str | None) -> bool:
    """Whether our version is at or below upstream's (both semver; an unreadable upstream version: False)."""
    if not theirs or not semver.Version.is_valid(theirs):
        return False
    return bool(semver.Version.parse(ours) <= semver.Version.parse(theirs))


def _above(*versions: str | None) -> str:
    """The next patch version above every given version."""
    top = max(semver.Version.parse(v) for v in versions if v)
    return str(top.bump_patch())


def _app_data(resolved: Resolved) -> dict[str, Plain]:
    data: dict[str, Plain] = plain(resolved.app)
    return data


def _clean(value: Plain) -> Plain:
    """`value` with every URL's `user:password@` removed, at any depth."""
    if isinstance(value, str):
        return without_credentials(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def _theirs(result: Imported) -> dict[str, Plain]:
    """The imported app's data, normalized as ours is (absent = null = the default: through the App model where it
    validates, so `speculative: {drafter: null}` and an absent key compare equal), and with no credential in a URL
    (neither merged into the app nor kept in the record's base)."""
    data = _clean(plain(result.app or {}))
    try:
        normal: dict[str, Plain] = plain(App.model_validate(data, strict=False))
    except ValueError:
        normal = {**_defaults(), **plain(data)}
    return normal


def base_fields(theirs: dict[str, Plain]) -> dict[str, Plain]:
    """The compared fields of upstream's app that are not the default: the merge base the record keeps."""
    defaults = _defaults()
    return {k: theirs[k] for k in FACET_OF if k not in UNKNOWABLE and k in theirs and theirs[k] != defaults.get(k)}


def _renamed(cat: Catalog, fixes: Corrections, previous: SyncFile | None) -> dict[str, str]:
    """upstream name -> catalog name: the corrections' renames, then what the last sync recorded."""
    names = dict(fixes.renamed)
    for app, rec in (previous.apps.items() if previous else ()):
        if rec.upstream_name:
            names.setdefault(rec.upstream_name, app)
    return names


def _status(plan: AppPlan, previous: SyncRecord | None, digest: str) -> str:
    # seen before, and merged then: the catalog's version is above upstream's (an app the last sync could not
    # merge, its chart needing drafts, is planned again)
    if previous is not None and previous.chart == digest and previous.version == plan.upstream_version \
            and plan.catalog_version and plan.upstream_version \
            and semver.Version.parse(plan.catalog_version) > semver.Version.parse(plan.upstream_version):
        return "unchanged"
    if not plan.changes:
        return "unchanged"
    last = previous.version if previous else plan.catalog_version
    if last and plan.upstream_version and semver.Version.parse(plan.upstream_version) > semver.Version.parse(last):
        return "bumped"
    return "changed"


def _kept(plan: AppPlan, current: Resolved, detail: str) -> None:
    """Not merged: the catalog's content stays (`held`), published above upstream's newest version (MKT002)."""
    plan.status, plan.merged, plan.changes, plan.measured, plan.benchmarks = "held", None, [], [], []
    plan.detail = detail
    if _at_or_below(current.app.version, plan.upstream_version):
        plan.new_version = _above(plan.upstream_version, current.app.version)


def _base(current: Resolved, record: SyncRecord | None, upstream_version: str | None) -> Base:
    ours = current.app.version
    ahead = bool(upstream_version and semver.Version.is_valid(upstream_version)
                 and semver.Version.parse(ours) > semver.Version.parse(upstream_version))
    fields_ = dict(record.fields) if record is not None and record.fields is not None else None
    return Base(fields_, ahead, ours, upstream_version)


def _plan_chart(plan: AppPlan, result: Imported, current: Resolved | None, fixes: Corrections,
                previous: SyncFile | None) -> None:
    """One upstream chart's plan: skipped, error (the catalog's content kept), new, or merged into the app."""
    plan.catalog_version = current.app.version if current else None
    problems = "; ".join(str(p) for p in result.problems)
    if result.status == "unsupported":
        plan.status, plan.detail = "skipped", result.unsupported or "unsupported engine"
    elif result.status == "error" or result.app is None:
        plan.status, plan.detail = "error", problems or "not imported"
        if current is not None:
            _kept(plan, current, plan.detail)
    elif current is None:
        plan.status = "new"
        plan.detail = "draft: " + "; ".join(result.missing) if result.status == "draft" else ""
        plan.base = base_fields(_theirs(result))
    else:
        record = previous.apps.get(plan.app) if previous else None
        ours, theirs = _app_data(current), _theirs(result)
        plan.merged = _merge(plan.app, ours, theirs, fixes, plan, current, _base(current, record,
                                                                                 plan.upstream_version))
        if result.status == "draft" and _blocked(plan, result):  # drafts no correction keeps out of the merge
            _kept(plan, current, problems or "upstream's chart needs drafts")
            return
        plan.mergeable = True
        plan.base = base_fields(theirs)
        plan.status = _status(plan, record, plan.digest or "")
        if plan.status == "unchanged" and _at_or_below(current.app.version, plan.upstream_version) \
                and _our_digest(current) != plan.digest:
            plan.status = "changed"  # nothing to merge, but our chart is not upstream's at its version (MKT002)
            plan.detail = ("the catalog's chart is not upstream's and its version is not above upstream's: it goes "
                           "above (one content per version)")
        if result.status == "draft":
            plan.detail = "upstream's drafted fields are kept by corrections: " + "; ".join(result.missing)
        if plan.status != "unchanged":
            plan.new_version = _above(plan.upstream_version, current.app.version)
            plan.merged["version"] = plan.new_version


def _unreadable(plan: AppPlan, chart: UpstreamChart, current: Resolved | None) -> None:
    """An upstream chart that could not be read, or whose version is no SemVer: that app's error (the catalog's
    content kept), the rest of upstream merges."""
    plan.catalog_version = current.app.version if current else None
    plan.status = "error"
    if chart.error:
        plan.detail = chart.error
    else:
        plan.detail = (f"{chart.label}: version {chart.version!r} is not SemVer (MAJOR.MINOR.PATCH); the app is "
                       "not merged until upstream gives it one")
        plan.upstream_version = None
    plan.digest = None


def _duplicates(charts: list[UpstreamChart], names: dict[str, str]) -> None:
    """Two upstream charts for one app name (two folders declaring one `metadata.name`): an error naming both."""
    seen: dict[str, list[str]] = {}
    for chart in charts:
        if chart.label in names:
            seen.setdefault(names[chart.label], []).append(chart.label)
    twice = {name: labels for name, labels in seen.items() if len(labels) > 1}
    if twice:
        raise InputError([Problem(labels[0], None, "metadata.name",
                                  f"app {name!r} is declared by {' and '.join(labels)}: one app name, one chart; "
                                  "upstream must rename or remove one of them (nothing was written)")
                          for name, labels in sorted(twice.items())])


def _semver_ok(version: str | None) -> bool:
    return version is None or semver.Version.is_valid(version)


def _gone(name: str, resolved: Resolved, upstream: Upstream, previous: SyncFile | None) -> AppPlan:
    """An app of the catalog upstream does not list: removed when upstream had it (the record lists it, or its
    history held the folder), left to prune's gate when deprecated, else the catalog's own."""
    rec = previous.apps.get(name) if previous else None
    upstream_name = rec.upstream_name if rec and rec.upstream_name else name
    recorded = rec is not None and rec.status == "listed"
    in_history = upstream.ever is not None and upstream_name in upstream.ever
    version = resolved.app.version
    if not (recorded or in_history):
        return AppPlan(name, None, "local", catalog_version=version,
                       detail="the catalog's own app (upstream never had it): kept as it is")
    at = upstream_at(upstream.label, upstream.commit)
    if resolved.app.status == "deprecated":
        return AppPlan(name, rec.upstream_name if rec else None, "dropped",
                       upstream_version=rec.version if rec else None, catalog_version=version,
                       detail=f"upstream removed it at {at}; deprecated here, it leaves through `catalog prune` "
                              "(its smoke gate)")
    why = "the sync record lists it" if recorded else "upstream's history held it"
    return AppPlan(name, rec.upstream_name if rec else None, "removed",
                   upstream_version=rec.version if rec else None, catalog_version=version,
                   detail=f"upstream removed it at {at} ({why}): marked removed")


def _one_by_one(charts: list[UpstreamChart], readable: list[UpstreamChart],
                imported: Callable[[list[UpstreamChart]], Report | None]
                ) -> tuple[list[UpstreamChart], list[UpstreamChart]]:
    """The charts with each one the import refuses as a whole (an InputError, not a result) marked as its error."""
    refused: dict[str, str] = {}
    for chart in readable:
        try:
            imported([chart])
        except InputError as exc:
            refused[chart.label] = "; ".join(str(p) for p in exc.problems)
    marked = [dataclasses.replace(c, error=refused[c.label]) if c.label in refused else c for c in charts]
    return marked, [c for c in readable if c.label not in refused]


def build_plan(upstream: Upstream, cat: Catalog, fixes: Corrections, previous: SyncFile | None) -> SyncPlan:
    """The plan of one sync (nothing written)."""
    renamed = _renamed(cat, fixes, previous)
    charts: list[UpstreamChart] = list(upstream.charts)
    readable = [c for c in charts if c.error is None and _semver_ok(c.version)]

    def imported(chosen: list[UpstreamChart]) -> Report | None:
        return import_paths([c.path for c in chosen], cat, update=True, dry_run=True,
                            labels=[c.label for c in chosen], renamed=renamed, live_drafts=True) if chosen else None

    try:
        report = imported(readable)
    except InputError:  # one chart stopped the whole import: each alone, so only that chart is an error
        charts, readable = _one_by_one(charts, readable, imported)
        report = imported(readable)
    by_label = {r.label: r for r in report.results} if report else {}
    failed = {r.label for r in report.results if r.status == "error"} if report else set()
    if failed:  # one chart's error empties the import's plan: plan the others' writes (drafts, new apps) again
        rest = [c for c in readable if c.label not in failed]
        report = import_paths([c.path for c in rest], cat, update=True, dry_run=True, labels=[c.label for c in rest],
                              renamed=renamed, live_drafts=True) if rest else None
        by_label.update({r.label: r for r in report.results} if report else {})
    names = {c.label: renamed.get(c.name, by_label[c.label].name or c.name) if c.label in by_label
             else renamed.get(c.name, c.name) for c in charts}
    _duplicates(charts, names)
    apps: list[AppPlan] = []
    seen: set[str] = set()
    for chart in charts:
        name = names[chart.label]
        seen.add(name)
        plan = AppPlan(name, chart.name if name != chart.name else None, "new", upstream_version=chart.version,
                       digest=chart.digest, commit=chart.commit or upstream.commit, imported=by_label.get(chart.label))
        if chart.label not in by_label:
            _unreadable(plan, chart, cat.apps.get(name))
            current = cat.apps.get(name)
            if current is not None and plan.upstream_version is not None:
                _kept(plan, current, plan.detail)
        else:
            _plan_chart(plan, by_label[chart.label], cat.apps.get(name), fixes, previous)
        apps.append(plan)
    for name, resolved in sorted(cat.apps.items()):
        if name in seen or resolved.app.status == "removed":
            continue
        apps.append(_gone(name, resolved, upstream, previous))
    return SyncPlan(upstream.label, upstream.commit, sorted(apps, key=lambda a: a.app), report,
                    subdir=upstream.subdir, warnings=list(upstream.warnings))


def parse_image(text: str | None, where: str) -> str | None:
    """The `image:` of a stack draft's text (the import's planned write)."""
    if not text:
        return None
    data = parse_document(text, where).data
    return str(data.get("image")) if isinstance(data, dict) and data.get("image") else None


def stack_images(plan: SyncPlan, cat: Catalog) -> dict[str, str]:
    """stack id -> image, for the catalog's stacks and the import's stack drafts."""
    images = {sid: s.image for sid, s in cat.stacks.items()}
    for write in plan.report.plan.writes if plan.report else ():
        if write.path.parent.name == "stacks" and write.path.parent.parent.name == "drafts":
            image = parse_image(write.text, str(write.path))
            if image:
                images[Path(write.path).stem] = image
    return images
