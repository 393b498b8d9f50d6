#!/usr/bin/env python3
"""Compare the catalog's re-rendered charts with a hand-written market's charts (docs/fidelity.md).

    python scripts/fidelity.py PATH [--catalog DIR] [--corrections FILE] [--json] [APP ...]

PATH is a checkout of a market (github.com/aamsellem/orales-one-market at 6a34b5bb... for the embedded
catalog): one folder per app (a folder the catalog renames is found through its corrections.yaml
`renamed`). For every app of the catalog that has a folder in PATH (or the named APPs), both
charts are read the same way `catalog import` reads a chart (generator/importer: the real Helm engine with the
values Olares injects, the engine container's argv after `$(VAR)` and launcher-script expansion), then compared
in: image, command (the program), args (flag groups), env, ports, probes, volumes, resources and manifest
metadata. Every difference is printed. A difference is *deliberate* when a row of the `## Deliberate
corrections` table in docs/fidelity.md matches it (app, facet and key, `*` matching anything), *known* when a row
of its `## Known differences to fix` table does (an infidelity acknowledged, printed as such, not a correction);
the script exits 1 when any difference is in neither table, 0 otherwise, 2 on a usage or input problem.

Normalisations (not differences): CPU and memory quantities are compared as numbers (`4` = `4000m`,
`24Gi` = `24576Mi`); a path under /models is compared by its file name (the catalog stores weights in
per-repository folders under `/models`, the maintainer directly in it); flags are
compared by their canonical spelling in the stack's flag table (`-ngl` = `--n-gpu-layers`) and in any order; the
HF_TOKEN env value is never read or printed.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import semver  # noqa: E402

from generator.catalog import Catalog, load_catalog  # noqa: E402
from generator.core.errors import InputError  # noqa: E402
from generator.chart.pipeline import render_apps, rendered_apps  # noqa: E402
from generator.core.errors import CatalogError  # noqa: E402
from generator.flags.tables import FlagTables  # noqa: E402
from generator.importer.argv import Spelling, is_flag, spelling_of  # noqa: E402
from generator.importer.helmview import Rendered, render_chart  # noqa: E402
from generator.importer.programs import basename, family_of  # noqa: E402
from generator.importer.source import read_chart  # noqa: E402
from generator.importer.workload import Launch, pod_spec, read_pod  # noqa: E402
from generator.importer.podenv import Lines  # noqa: E402

FACETS = ("image", "command", "args", "env", "ports", "probes", "volumes", "resources", "manifest")
# A market chart the importer cannot read is one difference of facet `chart` (key `read`), with the reason.
SECRET_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
# Market folders the catalog renames, and why (docs/fidelity.md "Deliberate corrections" lists each rename): the
# catalog's corrections.yaml `renamed`, the map `catalog sync` imports them by (a name over Olares' 30-character app
# name, OLARES003); RENAMED is the fallback for a catalog without one.
RENAMED = {"llamacppqwen36beellamavisionone": "llamacppqwen36beellamavision"}


def renames(catalog_dir: Path) -> dict[str, str]:
    """Market folder -> the catalog's app name: catalog/corrections.yaml `renamed`, else RENAMED."""
    from generator.rules.versions_upstream import load_corrections
    if not (catalog_dir / "corrections.yaml").is_file():
        return dict(RENAMED)
    return {str(k): str(v) for k, v in load_corrections(catalog_dir).renamed.items()} or dict(RENAMED)
ROW = re.compile(r"^\|\s*`?([^|`]+?)`?\s*\|\s*`?([a-z]+|\*)`?\s*\|\s*`?([^|`]+?)`?\s*\|\s*(.+?)\s*\|\s*$")


def _short(value: str | None, limit: int = 160) -> str:
    """A value for the text report: long values (a base64 template) cut, with their length."""
    if value is None or len(value) <= limit:
        return repr(value)
    return repr(value[:limit]) + f"… ({len(value)} characters)"


@dataclass(frozen=True)
class Difference:
    app: str
    facet: str
    key: str
    theirs: str | None  # the market chart's value (None: absent there)
    ours: str | None  # the re-rendered chart's value (None: absent here)
    deliberate: str | None = None  # the reason, from docs/fidelity.md's deliberate corrections
    known: str | None = None  # what is wrong, from docs/fidelity.md's known differences to fix

    def line(self) -> str:
        mark = "deliberate" if self.deliberate else "known     " if self.known else "UNLISTED  "
        text = f"{mark} {self.app} {self.facet} {self.key}: market {_short(self.theirs)} -> ours {_short(self.ours)}"
        note = self.deliberate or self.known
        return text + (f"  ({note})" if note else "")


@dataclass(frozen=True)
class Correction:
    app: str
    facet: str
    key: str
    reason: str
    known: bool = False  # a row of `## Known differences to fix`, not a deliberate correction

    def matches(self, diff: Difference) -> bool:
        return (fnmatch.fnmatchcase(diff.app, self.app) and fnmatch.fnmatchcase(diff.facet, self.facet)
                and fnmatch.fnmatchcase(diff.key, self.key))


def load_corrections(path: Path) -> list[Correction]:
    """Rows `| app | facet | key | reason |` of the tables under `## Deliberate corrections` and `## Known
    differences to fix` (the latter marked known; they are matched first, so a known row beats a broad `*`)."""
    rows: list[Correction] = []
    section = ""
    for text in path.read_text(encoding="utf-8").splitlines():
        if text.startswith("## "):
            section = text.strip().lower()
            continue
        inside = section in ("## deliberate corrections", "## known differences to fix")
        match = ROW.match(text) if inside else None
        if match and (match.group(2) in (*FACETS, "chart") or match.group(2) == "*"):
            app, facet, key, reason = (g.strip() for g in match.groups())
            rows.append(Correction(app, facet, key, reason, known=section.startswith("## known")))
    return sorted(rows, key=lambda c: not c.known)


# --- reading one chart ------------------------------------------------------------------------------------

def _quantity(text: Any) -> str:
    """CPU in millicores, memory in MiB, as text; anything else unchanged."""
    raw = str(text).strip()
    units = {"m": 0.001, "Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 * 1024, "K": 1e3 / 2**20, "M": 1e6 / 2**20,
             "G": 1e9 / 2**20}
    match = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", raw)
    if not match:
        return raw
    number, unit = float(match.group(1)), match.group(2)
    if unit == "m":
        return f"{number:g}m"
    if unit == "":
        return f"{number * 1000:g}m" if number < 1000 else f"{number:g}"
    if unit in units:
        return f"{number * units[unit]:g}Mi"
    return raw


def _path_value(value: str) -> str:
    return "/models/…/" + value.rsplit("/", 1)[-1] if value.startswith("/models/") else value


def _engine(rendered: Rendered) -> Launch | None:
    pod = read_pod(rendered, Lines(rendered))
    for launch in pod.launches:
        for token in launch.argv:
            if family_of(token.text) is not None:
                return launch
    return pod.launches[0] if pod.launches else None


def _program_index(launch: Launch) -> int:
    for i, token in enumerate(launch.argv):
        if family_of(token.text) is not None:
            return i
    return 0


def _arg_groups(words: list[str], spelling: Spelling) -> dict[str, str]:
    groups: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if is_flag(word):
            name, _, inline = word.partition("=")
            key = spelling.canonical(name)
            values = [inline] if inline else []
            following = words[i + 1] if i + 1 < len(words) else None
            if not inline and following is not None and spelling.takes_value(name, following):
                values.append(following)
                i += 1
            value = " ".join(_path_value(v) for v in values)
            groups[key] = value if key not in groups else groups[key] + " | " + value
        else:
            groups[f"(positional {len([k for k in groups if k.startswith('(positional')]) + 1})"] = _path_value(word)
        i += 1
    return groups


def _probe(probe: Any, named: dict[str, str]) -> str:
    if not isinstance(probe, dict):
        return ""
    http = probe.get("httpGet") or {}
    port = named.get(str(http.get("port")), http.get("port"))
    what = f"GET {http.get('path')} :{port}" if http else json.dumps(probe.get("exec") or probe.get(
        "tcpSocket") or {}, sort_keys=True)
    return (f"{what} delay {probe.get('initialDelaySeconds', 0)} period {probe.get('periodSeconds', 10)} "
            f"failures {probe.get('failureThreshold', 3)}")


def facts(rendered: Rendered, spelling_for: Any) -> dict[str, dict[str, str]]:
    """Facet -> key -> value of one chart, normalised for comparison."""
    out: dict[str, dict[str, str]] = {facet: {} for facet in FACETS}
    launch = _engine(rendered)
    named: dict[str, str] = {}  # container port names -> numbers (a probe or Service may name a port)
    if launch is not None:
        for port in launch.container.get("ports") or ():
            if isinstance(port, dict) and port.get("name"):
                named[str(port["name"])] = str(port.get("containerPort"))
        _engine_facts(launch, spelling_for, named, out)
    _service_facts(rendered, named, out)
    _manifest_facts(rendered.manifest, out)
    return out


def _engine_facts(launch: Launch, spelling_for: Any, named: dict[str, str], out: dict[str, dict[str, str]]) -> None:
    at = _program_index(launch)
    words = [t.text for t in launch.argv]
    program = words[at] if words else ""
    out["image"]["image"] = launch.image
    out["command"]["program"] = basename(program)
    rest = words[at + 1:]
    if basename(program) == "vllm" and rest[:1] == ["serve"]:
        out["command"]["program"] = "vllm serve"
        rest = rest[1:]
    out["args"] = _arg_groups(rest, spelling_for(family_of(program) or "llamacpp"))
    for name, entry in launch.env.items():
        if name in launch.used_vars and name not in SECRET_ENV:
            continue  # read by the argv ($(VAR), $VAR): its value is compared in args
        value = entry.value if name not in SECRET_ENV else "(secret)"
        out["env"][name] = "" if value is None else str(value)
    container = launch.container
    for port in container.get("ports") or ():
        if isinstance(port, dict):
            out["ports"][f"container {port.get('containerPort')}"] = str(port.get("protocol", "TCP"))
    for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
        if container.get(kind):
            out["probes"][kind] = _probe(container[kind], named)
    _volume_facts(launch, out)
    resources = container.get("resources") or {}
    for side in ("requests", "limits"):
        for name, value in (resources.get(side) or {}).items():
            out["resources"][f"{side}.{name}"] = _quantity(value)


def _volume_facts(launch: Launch, out: dict[str, dict[str, str]]) -> None:
    pod = pod_spec(launch.workload)
    volumes = {v.get("name"): v for v in pod.get("volumes") or () if isinstance(v, dict)}
    for mount in launch.container.get("volumeMounts") or ():
        if isinstance(mount, dict):
            volume = volumes.get(mount.get("name")) or {}
            out["volumes"][str(mount.get("mountPath"))] = next((k for k in volume if k != "name"), "?")


def _service_facts(rendered: Rendered, named: dict[str, str], out: dict[str, dict[str, str]]) -> None:
    for doc in rendered.docs:
        if doc.kind == "Service":
            for port in (doc.body.get("spec") or {}).get("ports") or ():
                if isinstance(port, dict):
                    target = str(port.get("targetPort"))
                    out["ports"][f"service {doc.name} {port.get('port')}"] = named.get(target, target)


def _manifest_resources(spec: dict[str, Any], out: dict[str, dict[str, str]]) -> None:
    for key in ("requiredCpu", "limitedCpu", "requiredMemory", "limitedMemory", "requiredDisk", "limitedDisk",
                "requiredGpu", "limitedGpu"):
        if key in spec:
            out["resources"][f"manifest.{key}"] = _quantity(spec[key])
    resources = spec.get("resources")
    if isinstance(resources, list):  # v3: spec.resources[].{requiredCpu,...} per mode
        for i, row in enumerate(resources):
            for key, value in (row or {}).items():
                if key != "mode":
                    out["resources"][f"manifest.resources[{i}].{key}"] = _quantity(value)


def _manifest_facts(manifest: dict[str, Any], out: dict[str, dict[str, str]]) -> None:
    meta = manifest.get("metadata") or {}
    spec = manifest.get("spec") or {}
    for key in ("name", "title", "description", "icon", "version", "categories"):
        if key in meta:
            out["manifest"][f"metadata.{key}"] = json.dumps(meta[key], ensure_ascii=False) if isinstance(
                meta[key], list) else str(meta[key])
    for key in ("olaresManifest.version", "apiVersion"):
        if key in manifest:
            out["manifest"][key] = str(manifest[key])
    for entrance in manifest.get("entrances") or ():
        if isinstance(entrance, dict):
            out["manifest"][f"entrance {entrance.get('name')}"] = (
                f"port {entrance.get('port')} title {entrance.get('title')!r} auth {entrance.get('authLevel')}")
    _manifest_resources(spec, out)
    for dep in (manifest.get("options") or {}).get("dependencies") or ():
        if isinstance(dep, dict) and dep.get("name") == "olares":
            out["manifest"]["dependency olares"] = str(dep.get("version"))
    permission = manifest.get("permission") or {}
    out["manifest"]["permission"] = json.dumps(permission, sort_keys=True)


# --- comparing ------------------------------------------------------------------------------------------

def compare(app: str, theirs: dict[str, dict[str, str]], ours: dict[str, dict[str, str]],
            corrections: list[Correction]) -> list[Difference]:
    diffs: list[Difference] = []
    for facet in FACETS:
        left, right = theirs.get(facet, {}), ours.get(facet, {})
        for key in sorted(set(left) | set(right)):
            if left.get(key) != right.get(key):
                diff = Difference(app, facet, key, left.get(key), right.get(key))
                row = next((c for c in corrections if c.matches(diff)), None)
                if row is None:
                    diffs.append(diff)
                elif row.known:
                    diffs.append(Difference(app, facet, key, diff.theirs, diff.ours, known=row.reason))
                else:
                    diffs.append(Difference(app, facet, key, diff.theirs, diff.ours, deliberate=row.reason))
    return diffs


def _spellings(cat: Catalog, app: str) -> Any:
    tables = FlagTables(cat.root)
    resolved = next((r for r in cat.select([app])), None)
    stack = resolved.stack if resolved is not None else None

    def spelling_for(family: str) -> Spelling:
        table = None
        if stack is not None and stack.flag_table and tables.exists(stack.flag_table):
            try:
                table = tables.get(stack.flag_table)
            except CatalogError:
                table = None
        return spelling_of(family, table)

    return spelling_for


def run(market: Path, catalog_dir: Path, corrections_file: Path, names: list[str],
        renamed: dict[str, str] | None = None) -> list[Difference]:
    renamed = renames(catalog_dir) if renamed is None else renamed
    cat = load_catalog(catalog_dir)
    corrections = load_corrections(corrections_file) if corrections_file.is_file() else []
    folder_of = {app: folder for folder, app in renamed.items()}
    wanted = names or sorted(renamed.get(p.name, p.name) for p in market.iterdir()
                             if (p / "OlaresManifest.yaml").is_file() and renamed.get(p.name, p.name) in cat.apps)
    missing = [n for n in wanted
               if not (market / folder_of.get(n, n) / "OlaresManifest.yaml").is_file() or n not in cat.apps]
    if missing:
        raise SystemExit(f"fidelity: not an app of both the market and the catalog: {', '.join(missing)}")
    ours_trees = render_apps([r for r in rendered_apps(cat) if r.app.name in wanted])
    diffs: list[Difference] = []
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        for name in wanted:
            folder = Path(tmp) / name
            for rel, text in ours_trees[name].items():
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder / rel).write_text(text, encoding="utf-8")
            spelling_for = _spellings(cat, name)
            try:
                theirs = facts(render_chart(read_chart(market / folder_of.get(name, name), name)), spelling_for)
            except InputError as error:  # the market's chart does not read: one difference, the others go on
                diffs += compare_unreadable(name, "; ".join(str(p) for p in error.problems), corrections)
                continue
            ours = facts(render_chart(read_chart(folder, f"{name} (re-rendered)")), spelling_for)
            diffs += compare(name, theirs, ours, corrections)
    return diffs


def compare_unreadable(app: str, why: str, corrections: list[Correction]) -> list[Difference]:
    diff = Difference(app, "chart", "read", why, "rendered")
    row = next((c for c in corrections if c.matches(diff)), None)
    if row is None:
        return [diff]
    return [Difference(app, "chart", "read", why, "rendered", **({"known": row.reason} if row.known
                                                                 else {"deliberate": row.reason}))]


def _market_version(folder: Path) -> str | None:
    found = re.search(r"""^  version:\s*['"]?([0-9]+\.[0-9]+\.[0-9]+)""", (folder / "OlaresManifest.yaml")
                      .read_text(encoding="utf-8"), re.MULTILINE)
    return found.group(1) if found else None


def counts(market: Path, catalog_dir: Path, renamed: dict[str, str] | None = None) -> dict[str, Any]:
    """The closing counts of issue 23: market apps present in the catalog (active, or a draft with what blocks it),
    versions at or above upstream's (metadata.version, and Chart.yaml's where it is higher), same version with
    the same content (catalog/sync.yaml's chart digest is upstream's; a version equal to upstream's is ours
    only when the sync merged nothing), and the active apps with a roof figure in `catalog list --json`."""
    renamed = renames(catalog_dir) if renamed is None else renamed
    cat = load_catalog(catalog_dir)
    drafts = {p.stem for p in (catalog_dir / "drafts" / "apps").glob("*.yaml")} if (catalog_dir / "drafts").is_dir() \
        else set()
    out: dict[str, Any] = {"market_apps": 0, "present": 0, "drafts": [], "missing": [], "at_or_above": 0,
                           "below": [], "same_version": []}
    for folder in sorted(p for p in market.iterdir() if (p / "OlaresManifest.yaml").is_file()):
        name = renamed.get(folder.name, folder.name)
        out["market_apps"] += 1
        theirs = [v for v in (_market_version(folder), _chart_version(folder)) if v]
        if name in cat.apps and cat.apps[name].app.status != "removed":
            out["present"] += 1
            ours = semver.Version.parse(cat.apps[name].app.version)
            if all(ours >= semver.Version.parse(v) for v in theirs):
                out["at_or_above"] += 1
            else:
                out["below"].append(f"{name} {ours} < {max(theirs)}")
            if any(ours == semver.Version.parse(v) for v in theirs):
                out["same_version"].append(name)
        elif name in drafts:
            out["drafts"].append(name)
        else:
            out["missing"].append(name)
    return out


def _chart_version(folder: Path) -> str | None:
    found = re.search(r"""^version:\s*['"]?([0-9]+\.[0-9]+\.[0-9]+)""", (folder / "Chart.yaml")
                      .read_text(encoding="utf-8"), re.MULTILINE) if (folder / "Chart.yaml").is_file() else None
    return found.group(1) if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("market", type=Path, help="a checkout of the market (one folder per app)")
    parser.add_argument("apps", nargs="*", help="apps to compare (default: every app in both)")
    parser.add_argument("--catalog", type=Path, default=REPO / "catalog")
    parser.add_argument("--corrections", type=Path, default=REPO / "docs" / "fidelity.md",
                        help="the file whose `## Deliberate corrections` and `## Known differences to fix` tables list "
                             "the accepted and the acknowledged differences")
    parser.add_argument("--renamed", action="append", default=[], metavar="FOLDER=APP",
                        help="a market folder the catalog names otherwise "
                             "(default: the catalog's corrections.yaml `renamed`)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--counts", action="store_true", help="print the apps present / versions / drafts counts")
    args = parser.parse_args(argv)
    pairs = [item.partition("=") for item in args.renamed]
    if any(not folder or not app for folder, _, app in pairs):
        print("fidelity: --renamed takes FOLDER=APP", file=sys.stderr)
        return 2
    renamed = {folder: app for folder, _, app in pairs} if pairs else None
    if not args.market.is_dir():
        print(f"fidelity: {args.market}: not a folder", file=sys.stderr)
        return 2
    if args.counts:
        print(json.dumps(counts(args.market, args.catalog, renamed), indent=2))
        return 0
    try:
        diffs = run(args.market, args.catalog, args.corrections, args.apps, renamed)
    except CatalogError as error:
        print(f"fidelity: {error}", file=sys.stderr)
        return 2
    unlisted = [d for d in diffs if not d.deliberate and not d.known]
    if args.json:
        print(json.dumps([asdict(d) for d in diffs], indent=2, ensure_ascii=False))
    else:
        for diff in diffs:
            print(diff.line())
        known = sum(1 for d in diffs if d.known)
        print(f"{len(diffs)} difference(s): {len(diffs) - known - len(unlisted)} deliberate, {known} known to fix, "
              f"{len(unlisted)} not listed in {args.corrections.name}")
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main())
