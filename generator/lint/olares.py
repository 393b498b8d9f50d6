"""Olares chart rules (OAC lint, GitBot, app-service, HAMi), each a small check over a ChartView.

Sources are beclab/Olares `framework/oac` (chart.go Lint pipeline) as summarised in
docs/domain.md#hami-§4 and §6; each rule names its own.

Rules per manifest profile (docs/profiles.md): the chart's own `olaresManifest.version` / `apiVersion` say
which one it is. A 0.12.0 / v3 manifest keeps its reservations in `spec.accelerator` entries and lists
`workloadReplicas`; a 0.10.0 / v2 manifest has flat `spec.requiredCpu ... requiredGpu/limitedGpu` fields (CPU in
whole cores), no workloadReplicas, and may hold Helm template directives (its market build script strips them).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any
from collections.abc import Iterator

from generator.lint.helm import Doc, yaml_loader
from generator.lint.quantity import is_auto, parse_quantity, to_mib
from generator.lint.registry import Issue, chart_rule
from generator.lint.view import ChartView, containers, pod_spec, workloads

MANIFEST = "OlaresManifest.yaml"
NAME = re.compile(r"^[a-z][a-z0-9]{0,29}$")
RESERVED = ("user", "system", "space", "default", "os", "kubesphere", "kube", "kubekey", "kubernetes", "gpu",
            "tapr", "bfl", "bytetrade", "project", "pod")
PLAIN_SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
GPU_INJECT = "applications.app.bytetrade.io/gpu-inject"
GPUMEM = "nvidia.com/gpumem"
USER_SYSTEM_NS = "user-system-"


V2, V3 = "olares-v2", "olares-v3"
V3_FLOOR = (1, 12, 6)  # the first Olares that reads 0.12.0 / v3 manifests (accelerator entries, appCommon)
# v2 manifest keys of the GPU reservation, by the v3 accelerator key they stand for
V2_KEYS = {"requiredGPUMemory": "requiredGpu", "limitedGPUMemory": "limitedGpu"}
FLAT_KEYS = ("requiredCpu", "limitedCpu", "requiredMemory", "limitedMemory", "requiredDisk", "limitedDisk",
             "requiredGpu", "limitedGpu")


def profile_of(view: ChartView) -> str:
    """olares-v2 for a 0.10.0 / apiVersion v2 manifest (or one without apiVersion), else olares-v3."""
    version = str(view.manifest.get("olaresManifest.version", ""))
    api = str(view.manifest.get("apiVersion", ""))
    return V2 if api == "v2" or (not api and version.startswith("0.10")) else V3


def _spec(view: ChartView) -> dict[str, Any]:
    spec = view.manifest.get("spec")
    return spec if isinstance(spec, dict) else {}


def _envelopes(view: ChartView) -> list[dict[str, Any]]:
    """The resource envelopes by accelerator mode, keyed as v3 accelerator entries: a v2 manifest's flat spec
    fields read as one entry (mode nvidia when it reserves GPU memory)."""
    if profile_of(view) == V3:
        return view.accelerators()
    spec = _spec(view)
    if not any(k in spec for k in FLAT_KEYS):
        return []
    entry = {k: spec[k] for k in FLAT_KEYS[:6] if k in spec}
    entry.update({v3: spec[v2] for v3, v2 in V2_KEYS.items() if v2 in spec})
    entry["mode"] = "nvidia" if any(k in spec for k in V2_KEYS.values()) else "cpu"
    return [entry]


def _key(view: ChartView, v3_key: str) -> str:
    """How this chart's manifest spells a v3 accelerator key."""
    return V2_KEYS.get(v3_key, v3_key) if profile_of(view) == V2 else v3_key


def _meta(view: ChartView) -> dict[str, Any]:
    meta = view.manifest.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _at(view: ChartView, rel: str, needle: str) -> int | None:
    """1-based line of the first line of `rel` that contains `needle`."""
    for number, text in enumerate(view.tree.get(rel, "").splitlines(), start=1):
        if needle in text:
            return number
    return None


# --- files, names, versions ---------------------------------------------------------------------------

@chart_rule("OLARES001", "Chart.yaml, values.yaml, templates/ and OlaresManifest.yaml exist and parse",
            "OAC refuses a folder without them (CheckLayout) before any other check runs",
            "beclab/Olares framework/oac/internal/chartfolder/folder.go CheckLayout; docs/domain.md#hami")
def required_files(view: ChartView) -> Iterator[Issue]:
    for rel, problem in view.parse_errors.items():
        yield Issue(f"{rel}: {problem}", "add the file" if problem == "missing" else "emit the file as a YAML mapping",
                    rel)
    if not any(rel.startswith("templates/") for rel in view.tree):
        yield Issue("templates/ is missing or empty", "render the Helm templates into templates/", "templates/")


@chart_rule("OLARES002", "folder name == Chart.yaml name == metadata.name",
            "OAC's same-version check and GitBot refuse a chart whose three names differ",
            "oac chartfolder.CheckConsistency (NameMustSame1); docs/domain.md#hami A step 8")
def same_name(view: ChartView) -> Iterator[Issue]:
    chart_name, meta_name = view.chart.get("name"), _meta(view).get("name")
    if "Chart.yaml" in view.parse_errors or MANIFEST in view.parse_errors:
        return
    if chart_name != view.name or meta_name != view.name:
        yield Issue(f"names differ: folder {view.name!r}, Chart.yaml name {chart_name!r}, metadata.name {meta_name!r}",
                    "use the app name for all three", MANIFEST, _at(view, MANIFEST, "name:"))


@chart_rule("OLARES003", "app name is ^[a-z][a-z0-9]{0,29}$ and not reserved",
            "Olares builds namespaces and domains from it; GitBot refuses reserved folder names",
            "oac chartfolder isValidFolderName/isReservedWord; docs/domain.md#hami")
def app_name(view: ChartView) -> Iterator[Issue]:
    for name in dict.fromkeys([view.name, _meta(view).get("name")]):
        if name is None:
            continue
        if not isinstance(name, str) or not NAME.match(name):
            yield Issue(f"app name {name!r} must be 1-30 lowercase letters or digits, starting with a letter",
                        "rename the app (no hyphens, dots or capitals)", MANIFEST)
        elif name.lower() in RESERVED:
            yield Issue(f"app name {name!r} is reserved by Olares", "choose another name", MANIFEST)


@chart_rule("OLARES004", "Chart.yaml version == metadata.version, a plain X.Y.Z",
            "OAC's same-version check; PR titles and Market ingest accept only X.Y.Z",
            "oac chartfolder.CheckConsistency (VersionMustSame1); GitBot title regex; docs/domain.md#hami B")
def same_version(view: ChartView) -> Iterator[Issue]:
    if "Chart.yaml" in view.parse_errors or MANIFEST in view.parse_errors:
        return
    chart_v, meta_v = view.chart.get("version"), _meta(view).get("version")
    for where, value in (("Chart.yaml", chart_v), (MANIFEST, meta_v)):
        if not isinstance(value, str) or not PLAIN_SEMVER.match(value):
            yield Issue(f"{where} version {value!r} is not a plain X.Y.Z version", "write X.Y.Z, quoted if needed",
                        where, _at(view, where, "version:"))
    if chart_v != meta_v:
        yield Issue(f"Chart.yaml version {chart_v!r} != metadata.version {meta_v!r}", "bump both together",
                    MANIFEST, _at(view, MANIFEST, "version:"))


@chart_rule("OLARES011", "olares-v3: no Helm template syntax ({{ or }}) in OlaresManifest.yaml",
            "a 0.12.0 manifest is read verbatim, never rendered; lint rejects template delimiters",
            "oac internal/manifest/template_syntax.go checkNoTemplateSyntax; docs/domain.md#hami")
def no_template_syntax(view: ChartView) -> Iterator[Issue]:
    if profile_of(view) == V2:
        return  # a 0.10.0 manifest may hold directives (the maintainer's build script strips them)
    for number, text in enumerate(view.tree.get(MANIFEST, "").splitlines(), start=1):
        if "{{" in text or "}}" in text:
            yield Issue(f"line {number} holds Helm template syntax",
                        "write the final value; the manifest is not rendered",
                        MANIFEST, number)


@chart_rule("OLARES016", "options.dependencies lists the olares system dependency",
            "app-service matches it against the running OS; lint rejects a chart without it",
            "docs/domain.md#hami (olares-cli skill), §3 C")
def olares_dependency(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors:
        return
    options = view.manifest.get("options") or {}
    deps = options.get("dependencies") if isinstance(options, dict) else None
    found = [d for d in deps or () if isinstance(d, dict) and d.get("name") == "olares" and d.get("type") == "system"]
    if not found or not all(isinstance(d.get("version"), str) and d["version"].strip() for d in found):
        floor = "'>=1.12.3-0'" if profile_of(view) == V2 else "'>=1.12.6-0'"
        yield Issue("options.dependencies has no {name: olares, type: system, version: ...} entry",
                    f"add {{name: olares, type: system, version: {floor}}}", MANIFEST, _at(view, MANIFEST, "options:"))


def _floor(text: str) -> tuple[int, int, int] | None:
    """The lowest Olares version a `>=X.Y.Z[-pre]` constraint admits; None when it is not of that form."""
    match = re.match(r"^\s*>=\s*v?(\d+)\.(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def _olares_floor(view: ChartView) -> tuple[int, int, int] | None:
    options = view.manifest.get("options") or {}
    for dep in (options.get("dependencies") or ()) if isinstance(options, dict) else ():
        if isinstance(dep, dict) and dep.get("name") == "olares" and isinstance(dep.get("version"), str):
            return _floor(dep["version"])
    return None


@chart_rule("OLARES017", "olaresManifest.version and apiVersion form one profile (0.10.0 + v2, 0.12.0 + v3), and a "
            "v3 manifest requires Olares >= 1.12.6",
            "Olares before 1.12.6 cannot install a v3 manifest (accelerator entries, appCommon); a mixed pair is read "
            "by neither format",
            "docs/profiles.md; Olares manifest reference 0.10.0-0.12.0 changelog; "
            "github.com/aamsellem/orales-one-market CLAUDE.md ('must match official beclab/apps format, NOT 0.11.0')")
def one_profile(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors:
        return
    version = str(view.manifest.get("olaresManifest.version", ""))
    api = str(view.manifest.get("apiVersion", ""))
    pairs = {"v2": "0.10.0", "v3": "0.12.0"}
    if api in pairs and version != pairs[api]:
        yield Issue(f"olaresManifest.version {version!r} with apiVersion {api!r}: not one profile",
                    f"write olaresManifest.version {pairs[api]!r} for apiVersion {api} (docs/profiles.md)", MANIFEST,
                    _at(view, MANIFEST, "olaresManifest.version"))
    floor = _olares_floor(view)
    if profile_of(view) == V3 and floor is not None and floor < V3_FLOOR:
        shown = ".".join(map(str, floor))
        yield Issue(f"a v3 manifest admits Olares {shown}, which cannot install it", "require olares '>=1.12.6-0', or "
                    "render the olares-v2 profile for older Olares", MANIFEST, _at(view, MANIFEST, "version: '>="))


@chart_rule("OLARES018", "the manifest's requiredCpu and limitedCpu (olares-v2: flat spec fields; olares-v3: each "
            "accelerator entry) are whole cores",
            "the maintainer's market writes CPU in integer cores, not millicores, in both formats",
            "github.com/aamsellem/orales-one-market CLAUDE.md 'CPU values in integer cores (e.g., 4), NOT millicores'; "
            "github.com/aamsellem/olares-one-market CLAUDE.md@b41af142d2f6a087e1a36d659b15c3664c8f4823 (same line)")
def whole_cores(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors:
        return
    v2 = profile_of(view) == V2
    places = [("spec", _spec(view))] if v2 else [(f"spec.accelerator[{i}]", e)
                                                 for i, e in enumerate(view.accelerators())]
    for where, node in places:
        for key in ("requiredCpu", "limitedCpu"):
            value = node.get(key)
            if value is None:
                continue
            cores = _quantity(value)
            if cores is None or cores != int(cores) or str(value).strip().endswith("m"):
                yield Issue(f"{where}.{key} {value!r} is not a whole number of cores",
                            f"write {key} as an integer, e.g. '4'", MANIFEST, _at(view, MANIFEST, f"{key}:"))


# --- workloads ----------------------------------------------------------------------------------------

@chart_rule("OLARES005", "a Deployment or StatefulSet is named exactly metadata.name",
            "app-service tracks the app through that workload; OAC always runs this check",
            "oac internal/resources/limits.go CheckDeploymentName; docs/domain.md#hami A step 4")
def workload_named_app(view: ChartView) -> Iterator[Issue]:
    if view.main is None or MANIFEST in view.parse_errors:
        return
    if view.manifest.get("olaresManifest.type", "app") != "app":
        return
    if not any(w.name == view.name for w in workloads(view.main)):
        yield Issue(f"no Deployment or StatefulSet named {view.name!r}", "name the main workload {{ .Release.Name }}",
                    "templates/")


@chart_rule("OLARES006", "olares-v3: workloadReplicas keys == the rendered Deployment/StatefulSet names",
            "app-service scales exactly those workloads; a missing or unknown entry breaks install and stop",
            "oac internal/resources/workloads.go CheckWorkloadReplicas; docs/domain.md#hami")
def workload_replicas_keys(view: ChartView) -> Iterator[Issue]:
    if view.main is None or MANIFEST in view.parse_errors or profile_of(view) == V2:
        return  # a 0.10.0 manifest has no workloadReplicas
    declared = view.manifest.get("workloadReplicas")
    declared = declared if isinstance(declared, dict) else {}
    rendered = {w.name for w in workloads(view.main)}
    for name in sorted(rendered - set(declared)):
        yield Issue(f"workloadReplicas has no entry for workload {name!r}", f"add `{name}: 1` to workloadReplicas",
                    MANIFEST, _at(view, MANIFEST, "workloadReplicas:"))
    for name in sorted(set(declared) - rendered):
        yield Issue(f"workloadReplicas entry {name!r} matches no rendered Deployment/StatefulSet",
                    "remove it or render that workload", MANIFEST, _at(view, MANIFEST, "workloadReplicas:"))


@chart_rule("OLARES007", "spec.replicas follows .Values.workloads.<name>.replicaCount",
            "Olares starts, stops and two-phase-installs an app by re-rendering with another replicaCount",
            "oac internal/resources/workloads.go CheckWorkloadReplicasRendered (two renders compared)")
def replicas_follow_values(view: ChartView) -> Iterator[Issue]:
    for render in view.renders:
        for w in workloads(render.docs):
            spec = w.body.get("spec") or {}
            got = spec.get("replicas") if isinstance(spec, dict) else None
            effective = 1 if got is None else got
            if effective != render.replicas:
                shown = "unset (Kubernetes defaults it to 1)" if got is None else repr(got)
                yield Issue(f"{w.label}: spec.replicas rendered as {shown} while workloads.{w.name}.replicaCount "
                            f"was {render.replicas}", f"replicas: {{{{ .Values.workloads.{w.name}.replicaCount }}}} "
                            "(no `default`)", w.source)


@chart_rule("OLARES008", "a Deployment with a hostPath volume uses strategy Recreate (StatefulSet: OnDelete)",
            "a rolling update starts the new pod before the old one stops, possibly on a node without the path",
            "oac internal/resources/hostpath.go CheckHostPath; docs/domain.md#hami A step 6")
def hostpath_recreate(view: ChartView) -> Iterator[Issue]:
    for w in workloads(view.main or []):
        spec = w.body.get("spec") or {}
        key, ok = ("strategy", "Recreate") if w.kind == "Deployment" else ("updateStrategy", "OnDelete")
        strategy = (spec.get(key) or {}).get("type") if isinstance(spec.get(key), dict) else None
        host = [v.get("name") for v in pod_spec(w).get("volumes") or () if isinstance(v, dict) and v.get("hostPath")]
        if host and strategy != ok:
            yield Issue(f"{w.label} mounts hostPath volume(s) {', '.join(map(str, host))} with {key}.type "
                        f"{strategy or 'RollingUpdate (default)'}", f"set {key}.type: {ok}", w.source)


@chart_rule("OLARES012", "rendered resources pin no literal namespace",
            "Olares installs each app into its own namespace; a fixed one escapes its quota and policies",
            "oac internal/resources/namespace.go CheckResourceNamespace; docs/domain.md#hami A step 7")
def no_literal_namespace(view: ChartView) -> Iterator[Issue]:
    seen: set[tuple[str, str]] = set()
    for render in view.renders:
        for doc in render.docs:
            ns = doc.namespace
            if ns is None or ns == render.namespace or ns.startswith(USER_SYSTEM_NS) or (doc.label, ns) in seen:
                continue
            seen.add((doc.label, ns))
            yield Issue(f"{doc.label} sets metadata.namespace {ns!r}", "drop it or use {{ .Release.Namespace }}",
                        doc.source)


# --- entrances ----------------------------------------------------------------------------------------

def _service_ports(view: ChartView) -> dict[str, set[Any]]:
    """Service name -> its `ports[].port` values, as the YAML gives them (a hand-written chart may hold anything)."""
    out: dict[str, set[Any]] = {}
    for doc in view.main or []:
        if doc.kind == "Service":
            spec = doc.body.get("spec") or {}
            ports = spec.get("ports") if isinstance(spec, dict) else None
            out.setdefault(doc.name, set()).update(p.get("port") for p in ports or () if isinstance(p, dict))
    return out


@chart_rule("OLARES013", "each entrance host names a rendered Service and its port is a port of that Service",
            "the Olares gateway routes the entrance domain to host:port; a wrong one gives a dead app tile",
            "beclab/api Entrance; oac validate.go (host must name a Service); docs/domain.md#hami")
def entrances_reach_services(view: ChartView) -> Iterator[Issue]:
    if view.main is None:
        return
    services = _service_ports(view)
    for key in ("entrances", "sharedEntrances"):
        for index, entrance in enumerate(view.manifest.get(key) or ()):
            if not isinstance(entrance, dict):
                continue
            host, port = entrance.get("host"), entrance.get("port")
            if host not in services:
                yield Issue(f"{key}[{index}].host {host!r} is not a rendered Service (have: "
                            f"{', '.join(sorted(services)) or 'none'})", "point host at the app's Service", MANIFEST,
                            _at(view, MANIFEST, f"host: {host}"))
            elif not (key == "sharedEntrances" and port == 0) and port not in services[host]:
                yield Issue(f"{key}[{index}].port {port!r} is not a port of Service {host!r} "
                            f"({', '.join(map(str, sorted(services[host]))) or 'no ports'})",
                            "use the Service port", MANIFEST, _at(view, MANIFEST, f"port: {port}"))


# --- resources ----------------------------------------------------------------------------------------

def _quantity(value: Any) -> Decimal | None:
    try:
        return None if value is None else parse_quantity(value)
    except ValueError:
        return None


def _resources(c: dict[str, Any]) -> dict[str, Any]:
    """A container's `resources` mapping; empty when it has none (or not a mapping)."""
    res = c.get("resources")
    return res if isinstance(res, dict) else {}


def _container_issues(w: Doc, c: dict[str, Any]) -> Iterator[str]:
    res = _resources(c)
    for kind in ("cpu", "memory"):
        req = _quantity((res.get("requests") or {}).get(kind))
        lim = _quantity((res.get("limits") or {}).get(kind))
        if not req:
            yield f"{w.label} container {c.get('name')!r} sets no valid requests.{kind}"
        if not lim:
            yield f"{w.label} container {c.get('name')!r} sets no valid limits.{kind}"
        if req and lim and req > lim:
            yield f"{w.label} container {c.get('name')!r}: requests.{kind} exceeds limits.{kind}"


@chart_rule("OLARES009", "every main container sets cpu and memory requests and limits, request <= limit",
            "Olares admits an app by summing them against its manifest envelope; unset values escape the sum",
            "oac internal/resources/limits.go CheckResourceLimits; docs/domain.md#hami A step 5")
def container_resources(view: ChartView) -> Iterator[Issue]:
    seen: set[str] = set()
    for docs in view.modes.values():
        for w in workloads(docs):
            for c in containers(w):
                for message in _container_issues(w, c):
                    if message not in seen:
                        seen.add(message)
                        yield Issue(message, "set requests and limits for cpu and memory", w.source)


ENVELOPE = (("cpu", "requests", "requiredCpu"), ("cpu", "limits", "limitedCpu"),
            ("memory", "requests", "requiredMemory"), ("memory", "limits", "limitedMemory"))
PAIRS = (("requiredCpu", "limitedCpu"), ("requiredMemory", "limitedMemory"), ("requiredDisk", "limitedDisk"),
         ("requiredGPUMemory", "limitedGPUMemory"))


def _sum(docs: list[Doc], kind: str, part: str) -> Decimal:
    total = Decimal(0)
    for w in workloads(docs):
        for c in containers(w):
            res = _resources(c)
            total += _quantity((res.get(part) or {}).get(kind)) or 0
    return total


def _envelope_order(mode: str, entry: dict[str, Any]) -> Iterator[str]:
    for low, high in PAIRS:
        a, b = entry.get(low), entry.get(high)
        if a is None and b is None or is_auto(a) or is_auto(b):
            continue
        qa, qb = _quantity(a), _quantity(b)
        if qa is None or qb is None:
            yield f"accelerator {mode}: {low} {a!r} / {high} {b!r} must both be Kubernetes quantities"
        elif qa > qb:
            yield f"accelerator {mode}: {low} {a} exceeds {high} {b}"


@chart_rule("OLARES010", "per accelerator mode (olares-v2: the flat spec fields): required <= limited, and the "
            "containers' summed requests/limits fit requiredCpu/requiredMemory/limitedCpu/limitedMemory",
            "Olares reserves the envelope, not the pods; pods asking for more are refused or evicted",
            "oac internal/resources/limits.go CheckResourceLimits, chart.go checkResourceLimits (one render per mode)")
def envelope(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors:
        return
    v2 = profile_of(view) == V2
    if not _envelopes(view):
        yield (Issue("spec has no requiredCpu/requiredMemory/... fields: a 0.10.0 manifest needs its resource envelope",
                     "add spec.requiredCpu, limitedCpu, requiredMemory, limitedMemory, requiredDisk, limitedDisk",
                     MANIFEST, _at(view, MANIFEST, "spec:")) if v2 else
               Issue("spec.accelerator is empty: a 0.12.0 manifest needs a resource envelope",
                     "add an accelerator entry per supported mode", MANIFEST, _at(view, MANIFEST, "spec:")))
    for entry in _envelopes(view):
        mode = str(entry.get("mode"))
        line = _at(view, MANIFEST, "requiredCpu:" if v2 else f"mode: {mode}")
        for message in _envelope_order(mode, entry):
            if v2:
                message = message.replace("GPUMemory", "Gpu").replace(f"accelerator {mode}: ", "spec: ")
            yield Issue(message, "raise the limited value", MANIFEST, line)
        docs = view.modes.get(mode)
        if docs is None:
            continue
        for kind, part, key in ENVELOPE:
            total, cap = _sum(docs, kind, part), entry.get(key)
            if is_auto(cap):
                continue
            limit = _quantity(cap)
            if limit is None or total > limit:
                yield Issue(f"accelerator {mode}: containers' {part}.{kind} sum to {total.normalize():f} "
                            f"{'cores' if kind == 'cpu' else 'bytes'}, more than {key} {cap!r}",
                            f"raise {key} or lower the containers' {part}", MANIFEST, line)


# --- GPU ----------------------------------------------------------------------------------------------

def _nvidia(view: ChartView) -> dict[str, Any] | None:
    return next((e for e in _envelopes(view) if e.get("mode") == "nvidia"), None)


def _gpumem_containers(docs: list[Doc]) -> Iterator[tuple[Doc, dict[str, Any]]]:
    for w in workloads(docs):
        for c in containers(w):
            res = _resources(c)
            if any(GPUMEM in (res.get(part) or {}) for part in ("requests", "limits")):
                yield w, c


def _bare_mib(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _required_mib(view: ChartView, entry: dict[str, Any]) -> Iterator[Issue | int]:
    req_key = _key(view, "requiredGPUMemory")
    line = _at(view, MANIFEST, f"{req_key}:")
    for key in ("requiredGPUMemory", "limitedGPUMemory"):
        if entry.get(key) is None:
            yield Issue(f"accelerator nvidia has no {_key(view, key)}", f"declare {_key(view, key)} (e.g. 24300Mi)",
                        MANIFEST, line)
    required = entry.get("requiredGPUMemory")
    if required is None or is_auto(required):
        return
    mib = _quantity(required)
    if mib is None or (mib / 2**20) != int(mib / 2**20):
        yield Issue(f"{req_key} {required!r} is not a whole number of MiB", "write it in Mi", MANIFEST, line)
        return
    yield int(to_mib(required))


def _gpumem_issues(w: Doc, c: dict[str, Any], want: int | None, key: str = "requiredGPUMemory") -> Iterator[str]:
    res = c.get("resources") or {}
    for part in ("requests", "limits"):
        raw = (res.get(part) or {}).get(GPUMEM)
        value = _bare_mib(raw)
        if value is None:
            yield f"{w.label} container {c.get('name')!r}: {part}.{GPUMEM} {raw!r} is not a bare integer of MiB"
        elif want is not None and value != want:
            yield f"{w.label} container {c.get('name')!r}: {part}.{GPUMEM} {value} != {key} {want} MiB"


@chart_rule("OLARES014", "nvidia mode: requiredGPUMemory/limitedGPUMemory (olares-v2: requiredGpu/limitedGpu) "
            "declared; the GPU container's nvidia.com/gpumem is a bare MiB integer equal to it, in requests and limits",
            "HAMi reads gpumem as an integer of MiB (24Gi reads as 25769803776 MiB); a pod without gpumem gets "
            "CUDA_DEVICE_MEMORY_LIMIT_0=0m and crashes on the CUDA driver path",
            "docs/domain.md#hami (HAMi resource names, gpu-limit webhook); docs/domain.md#crash-rules crash 1")
def gpu_memory(view: ChartView) -> Iterator[Issue]:
    entry = _nvidia(view)
    if entry is None:
        return
    want: int | None = None
    for item in _required_mib(view, entry):
        if isinstance(item, Issue):
            yield item
        else:
            want = item
    docs = view.modes.get("nvidia")
    if docs is None:
        return
    found = list(_gpumem_containers(docs))
    if not found:
        yield Issue(f"no container requests {GPUMEM} in nvidia mode", f"give the engine container {GPUMEM}: <MiB>",
                    "templates/")
    for w, c in found:
        for message in _gpumem_issues(w, c, want, _key(view, "requiredGPUMemory")):
            yield Issue(message, f"emit {GPUMEM}: {want if want is not None else '<MiB>'} in requests and limits",
                        w.source)


@chart_rule("OLARES015", "the gpu-inject annotation names the container that requests the GPU",
            "Olares' webhook adds the GPU runtime and limits only to the containers the annotation names",
            "app-service gpu-limit webhook (gpuLimitMutate); docs/domain.md#hami")
def gpu_inject(view: ChartView) -> Iterator[Issue]:
    docs = view.modes.get("nvidia") if _nvidia(view) is not None else None
    by_workload: dict[str, tuple[Any, list[str]]] = {}
    for w, c in _gpumem_containers(docs or []):
        by_workload.setdefault(w.label, (w, []))[1].append(str(c.get("name")))
    for w, gpu_names in by_workload.values():
        raw = ((w.body.get("metadata") or {}).get("annotations") or {}).get(GPU_INJECT)
        named = [n.strip() for n in str(raw or "").split(",") if n.strip()]
        all_names = {str(c.get("name")) for c in containers(w)}
        if raw is None or named in ([], ["false"]):
            yield Issue(f"{w.label} requests the GPU but has no {GPU_INJECT} annotation",
                        f"annotate it with {GPU_INJECT}: \"{gpu_names[0]}\"", w.source)
        elif named != ["true"]:
            for name in [n for n in gpu_names if n not in named] + [n for n in named if n not in all_names]:
                yield Issue(f"{w.label}: {GPU_INJECT} {raw!r} and container {name!r} disagree",
                            f"name the GPU container(s): {', '.join(gpu_names)}", w.source)


# --- olares-v3 (0.12.0): the platform's rules and the maintainer's market validator ----------------------------
#
# Platform: beclab/Olares docs/developer/develop/package/manifest.md, the 0.12.0 page ("Deprecated Fields
# (0.12.0)", "accelerator", "i18n", "LLMGatewaySupported"; https://docs.olares.com/developer/develop/package/
# manifest.html) and OAC's manifest validator (beclab/Olares framework/oac/internal/manifest/resources.go
# @e0a30de0bc32f5be7f1f2d7c1414b42d0efac24c). The maintainer's market: aamsellem/olares-one-market
# scripts/validate-manifests-v3.js @b41af142d2f6a087e1a36d659b15c3664c8f4823 (each of its checks is a rule below,
# written anew from what it checks) and CLAUDE.md @b41af142 "Olares Manifest Constraints".

OAC_RESOURCES = ("beclab/Olares framework/oac/internal/manifest/resources.go@e0a30de0bc32f5be7f1f2d7c1414b42d0efac24c")
SPEC_012 = "beclab/Olares docs/developer/develop/package/manifest.md (0.12.0)"
V3_VALIDATOR = ("github.com/aamsellem/olares-one-market scripts/validate-manifests-v3.js"
                "@b41af142d2f6a087e1a36d659b15c3664c8f4823")
# OAC validResourceModes, and the modes the 0.12.0 page names besides (strix-halo, intel, amd, intel-gpu)
MODES = ("cpu", "amd-apu", "amd-gpu", "apple-m", "nvidia", "nvidia-gb10", "mthreads-m1000", "strix-halo", "intel",
         "amd", "intel-gpu")
MODE_ARCH = {"amd-gpu": "amd64", "nvidia": "amd64", "nvidia-gb10": "arm64", "mthreads-m1000": "arm64"}  # OAC
GPU_MEMORY_MODES = ("nvidia", "amd-gpu")  # OAC gpuMemoryModes: only these declare requiredGPUMemory
ENVELOPE_KEYS = ("requiredCpu", "limitedCpu", "requiredMemory", "limitedMemory", "requiredDisk", "limitedDisk")
GPU_KEYS = ("requiredGPUMemory", "limitedGPUMemory")
OS_111_CATEGORIES = ("Blockchain", "Utilities", "Social Network", "Entertainment", "Productivity")
TITLE_MAX = 30
ENTRANCE_TITLE = re.compile(r"^[A-Za-z0-9 -]+$")
I18N_FIELDS = {"metadata": {"title", "description"}, "spec": {"fullDescription", "upgradeDescription"}}
MODEL_MODES = ("chat", "embedding", "audio", "tts", "translate", "image_generation", "music_generation")
MODEL_SUPPORTS = ("vision", "tools", "thinking", "none")


def _v3(view: ChartView) -> bool:
    return MANIFEST not in view.parse_errors and profile_of(view) == V3


def _map(node: Any, key: str) -> dict[str, Any]:
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


@chart_rule("OLARES019", "olares-v3: no field 0.12.0 deprecates (metadata.appid, provider, permission.provider/"
            "sysData, options.appScope, spec.subCharts, flat spec.required*/limited*, OS 1.11 categories)",
            "'Apps containing these fields may be rejected during installation'; flat resources and accelerator "
            "entries are two shapes of one envelope and may not coexist",
            f"{SPEC_012} 'Deprecated Fields (0.12.0)'; {OAC_RESOURCES} ensureLegacyAndResourcesAreMutuallyExclusive")
def v3_deprecated(view: ChartView) -> Iterator[Issue]:
    if not _v3(view):
        return
    meta, spec, perm, opts = _meta(view), _spec(view), _map(view.manifest, "permission"), \
        _map(view.manifest, "options")
    found = [("metadata.appid", "appid" in meta, "remove it; Olares derives it from metadata.name"),
             ("provider", "provider" in view.manifest,
              "remove it; give other apps an entrance with authLevel internal"),
             ("permission.provider", "provider" in perm, "remove it"),
             ("permission.sysData", "sysData" in perm, "remove it"),
             ("options.appScope", "appScope" in opts, "remove it; declare a shared app with options.shared"),
             ("spec.subCharts", "subCharts" in spec, "remove it; declare a shared app with options.shared")]
    found += [(f"spec.{key}", key in spec, "declare it in the spec.accelerator entry") for key in FLAT_KEYS]
    for field, present, fix in found:
        if present:
            yield Issue(f"{field} is deprecated in olaresManifest 0.12.0", fix, MANIFEST,
                        _at(view, MANIFEST, f"{field.rsplit('.', 1)[-1]}:"))
    for category in meta.get("categories") or ():
        if category in OS_111_CATEGORIES:
            yield Issue(f"metadata.categories {category!r} is an Olares 1.11 category",
                        "use an Olares 1.12 category (AI, Creativity, Developer Tools, Fun, Lifestyle, "
                        "Productivity_v112, Utilities_v112)", MANIFEST, _at(view, MANIFEST, f"- {category}"))


def _entry_issues(index: int, entry: dict[str, Any], arch: set[str]) -> Iterator[str]:
    mode = entry.get("mode")
    where = f"spec.accelerator[{index}]"
    if mode not in MODES:
        yield f"{where}.mode {mode!r} is not an accelerator mode ({', '.join(MODES)})"
        return
    need = MODE_ARCH.get(str(mode))
    if need is not None and need not in arch:
        yield f"{where}: mode {mode} requires spec.supportArch to contain {need!r}"
    keys = ENVELOPE_KEYS + (GPU_KEYS if mode in GPU_MEMORY_MODES else ())
    for key in keys:
        if entry.get(key) in (None, ""):
            yield f"{where}: {key} is required to declare a complete resource envelope (mode {mode})"
    if mode not in GPU_MEMORY_MODES:
        for key in GPU_KEYS:
            if key in entry:
                yield f"{where}: {key} must be empty for mode {mode} (only {', '.join(GPU_MEMORY_MODES)} declare it)"


@chart_rule("OLARES020", "olares-v3: each spec.accelerator entry names a known mode, its architecture is in "
            "supportArch (nvidia amd64, nvidia-gb10 arm64, ...), and it declares a complete envelope (GPU memory "
            "for nvidia and amd-gpu only)",
            "OAC refuses an unknown mode, a mode whose architecture the app does not support, a partial envelope, "
            "and GPU memory on a mode that has none of its own",
            f"{OAC_RESOURCES} validResourceModes, modeArchRequirement, gpuMemoryModes, ensureSectionComplete; "
            f"{SPEC_012} 'accelerator' (supported modes)")
def v3_accelerator_modes(view: ChartView) -> Iterator[Issue]:
    if not _v3(view):
        return
    arch = {str(a) for a in _spec(view).get("supportArch") or ()}
    for index, entry in enumerate(view.accelerators()):
        for message in _entry_issues(index, entry, arch):
            yield Issue(message, "fix the accelerator entry (mode, supportArch, the eight quantities)", MANIFEST,
                        _at(view, MANIFEST, f"mode: {entry.get('mode')}"))


@chart_rule("OLARES021", "metadata.title and every entrance title are 1-30 characters; an entrance title is only "
            "letters, digits, spaces and hyphens (no dots or parentheses)",
            "the Market and the desktop cut or refuse a longer title; the maintainer's market refuses any other "
            "character in an entrance title",
            f"{SPEC_012} metadata.title, entrances.title ('up to 30 characters'); "
            "github.com/aamsellem/olares-one-market CLAUDE.md@b41af142d2f6a087e1a36d659b15c3664c8f4823 "
            "'Entrance title: max 30 chars, only [a-z0-9A-Z-\\s]'")
def titles(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors:
        return
    found = [("metadata.title", _meta(view).get("title"), False)]
    found += [(f"entrances[{i}].title", e.get("title"), True)
              for i, e in enumerate(view.manifest.get("entrances") or ()) if isinstance(e, dict)]
    for field, title, entrance in found:
        text = title if isinstance(title, str) else ""
        if not text or len(text) > TITLE_MAX:
            yield Issue(f"{field} {title!r} is {len(text)} characters (1-{TITLE_MAX})", "shorten the app's title",
                        MANIFEST, _at(view, MANIFEST, "title:"))
        elif entrance and not ENTRANCE_TITLE.match(text):
            bad = "".join(sorted({c for c in text if not ENTRANCE_TITLE.match(c)}))
            yield Issue(f"{field} {title!r} holds {bad!r}: only letters, digits, spaces and hyphens",
                        "rename the app's title (e.g. Qwen3.6 -> Qwen36, drop parentheses)", MANIFEST,
                        _at(view, MANIFEST, f"title: {text}"))


def _i18n_locales(view: ChartView) -> dict[str, list[str]]:
    """Each folder under i18n/ -> the files it holds."""
    out: dict[str, list[str]] = {}
    for rel in view.tree:
        parts = rel.split("/")
        if parts[0] == "i18n" and len(parts) >= 3:
            out.setdefault(parts[1], []).append("/".join(parts[2:]))
    return out


def _i18n_issues(rel: str, text: str) -> Iterator[str]:
    import yaml

    try:
        data = yaml.load(text, Loader=yaml_loader())  # aliases refused: the text is a stranger's
    except yaml.YAMLError:
        yield f"{rel} is not YAML"
        return
    if not isinstance(data, dict):
        yield f"{rel} is not a mapping"
        return
    if str(data.get("apiVersion", "")) == "v2" or str(data.get("olaresManifest.version", "")) == "0.10.0":
        yield f"{rel} is a v2 manifest"
    for section, node in data.items():
        allowed = I18N_FIELDS.get(str(section))
        if str(section) in ("olaresManifest.version", "olaresManifest.type", "apiVersion"):
            continue
        if allowed is None or not isinstance(node, dict) or set(node) - allowed:
            yield f"{rel}: {section} holds fields the Market does not translate"
    title = _map(data, "metadata").get("title")
    if title is not None and (not isinstance(title, str) or not 0 < len(title) <= TITLE_MAX):
        yield f"{rel}: metadata.title {title!r} is not 1-{TITLE_MAX} characters"


@chart_rule("OLARES022", "olares-v3: an i18n/ folder whose every <locale>/ holds an OlaresManifest.yaml of "
            "translated fields only (metadata.title, description, spec.fullDescription, upgradeDescription), "
            "not a v2 manifest",
            "the Market shows each locale's manifest; the maintainer's market refuses a v3 chart without i18n/ or "
            "with a locale that is missing its manifest or still v2",
            f"{SPEC_012} 'i18n'; {V3_VALIDATOR} (i18n checks)")
def v3_i18n(view: ChartView) -> Iterator[Issue]:
    if not _v3(view):
        return
    locales = _i18n_locales(view)
    if not locales:
        yield Issue("no i18n/<locale>/OlaresManifest.yaml", "write i18n/en-US/OlaresManifest.yaml (the app's title "
                    "and descriptions)", "i18n/")
    for locale, files in sorted(locales.items()):
        rel = f"i18n/{locale}/{MANIFEST}"
        if MANIFEST not in files:
            yield Issue(f"i18n/{locale}/ has no {MANIFEST}", f"write {rel}", f"i18n/{locale}/")
            continue
        for message in _i18n_issues(rel, view.tree[rel]):
            yield Issue(message, "keep only the translated fields, in 0.12.0 form", rel)


@chart_rule("OLARES023", "olares-v3: an individual app (no options.shared: true, no spec.onlyAdmin: true)",
            "a shared app installs once for the cluster under the admin; a model cache is not a reason for it, and "
            "the maintainer's market refuses either flag",
            f"{V3_VALIDATOR} 'must remain an individual (non-shared) application'; {SPEC_012} options.shared")
def v3_individual(view: ChartView) -> Iterator[Issue]:
    if not _v3(view) or view.form == "shared":  # a store of the shared form (docs/forms.md): SHARED001 instead
        return
    if _map(view.manifest, "options").get("shared") is True:
        yield Issue("options.shared is true", "remove it: the app is installed per user", MANIFEST,
                    _at(view, MANIFEST, "shared:"))
    if _spec(view).get("onlyAdmin") is True:
        yield Issue("spec.onlyAdmin is true", "remove it (the default is false)", MANIFEST,
                    _at(view, MANIFEST, "onlyAdmin:"))


@chart_rule("OLARES024", "olares-v3: metadata.categories is exactly [AI]",
            "the maintainer's market shows its own taxonomy from its worker and accepts only the Olares 1.12 "
            "category AI in the manifest",
            f"{V3_VALIDATOR} 'must use only the supported AI category'; {SPEC_012} categories (OS 1.12)")
def v3_categories(view: ChartView) -> Iterator[Issue]:
    if _v3(view) and _meta(view).get("categories") != ["AI"]:
        yield Issue(f"metadata.categories is {_meta(view).get('categories')!r}", "write categories: [AI]", MANIFEST,
                    _at(view, MANIFEST, "categories:"))


@chart_rule("OLARES025", "olares-v3: the first spec.accelerator entry is mode nvidia with all eight quantities; any "
            "other entry is another Olares mode, each mode once",
            "the maintainer's market reads the first, nvidia envelope; Olares installs the entry whose mode matches "
            "the selected GPU type (app-service resolveResourceMode), so an app that also runs on a DGX Spark "
            "carries a "
            "second, nvidia-gb10 entry. The maintainer's validator accepts exactly one entry: where it and the "
            "platform differ the platform wins (docs/devices.md \"Charts\")",
            f"{V3_VALIDATOR} 'must declare one nvidia accelerator envelope', 'accelerator is missing <key>'; "
            "beclab/Olares@1b311ec3dc2c3d49eb37d5493f1da4074dea6b6a framework/app-service/pkg/appinstaller/"
            "helm_utils.go:173-178 (GPU.Type and gpu from the selected GPU type), appcfg resolveResourceMode")
def v3_one_nvidia(view: ChartView) -> Iterator[Issue]:
    if not _v3(view):
        return
    entries = view.accelerators()
    modes = [str(e.get("mode")) for e in entries]
    if not entries or modes[0] != "nvidia":
        yield Issue(f"spec.accelerator has {len(entries)} entries ({', '.join(modes)})",
                    "declare the nvidia entry first", MANIFEST, _at(view, MANIFEST, "accelerator:"))
        return
    for mode in sorted({m for m in modes if modes.count(m) > 1 or m not in MODES}):
        yield Issue(f"spec.accelerator mode {mode} is {'declared twice' if mode in MODES else 'not an Olares mode'}",
                    f"one entry per mode, among {', '.join(MODES)}", MANIFEST, _at(view, MANIFEST, "accelerator:"))
    for key in ENVELOPE_KEYS + GPU_KEYS:
        if entries[0].get(key) is None:
            yield Issue(f"spec.accelerator[0] has no {key}", f"declare {key}", MANIFEST,
                        _at(view, MANIFEST, "mode: nvidia"))


DEPLOYMENT_HEAD = re.compile(r"^kind: Deployment\nmetadata:\n(?:  [^\n]+\n)*?  name: ([^\s]+)$", re.M)


def _deployment_templates(view: ChartView) -> list[tuple[str, str]]:
    return [(rel, text) for rel, text in sorted(view.tree.items())
            if rel.startswith("templates/") and rel.endswith(".yaml") and re.search(r"^kind: Deployment$", text, re.M)]


def _workload_issues(view: ChartView, rel: str, text: str) -> Iterator[str]:
    match = DEPLOYMENT_HEAD.search(text)
    if match is None:
        yield f"{rel}: the Deployment's metadata.name is not written literally under metadata:"
        return
    name = match.group(1)
    declared = view.manifest.get("workloadReplicas")
    if not isinstance(declared, dict) or declared.get(name) != 1:
        yield f"workloadReplicas does not declare {name}: 1"
    if f"replicas: {{{{ .Values.workloads.{name}.replicaCount }}}}" not in text:
        yield f"{rel}: replicas is not {{{{ .Values.workloads.{name}.replicaCount }}}}"
    workload = _map(_map(view.values, "workloads"), name)
    if workload.get("replicaCount") != 1:
        yield f"values.yaml does not declare workloads.{name}.replicaCount: 1"


@chart_rule("OLARES026", "olares-v3: one Deployment template, its metadata.name written literally, declared "
            "`<name>: 1` in workloadReplicas and values.yaml workloads.<name>.replicaCount: 1, its replicas "
            "`{{ .Values.workloads.<name>.replicaCount }}`",
            "the maintainer's market reads the workload name from the template text and refuses a chart whose "
            "replica count is not wired through workloadReplicas and values.yaml",
            f"{V3_VALIDATOR} (Deployment checks); {SPEC_012} workloadReplicas")
def v3_workload(view: ChartView) -> Iterator[Issue]:
    if not _v3(view):
        return
    found = _deployment_templates(view)
    if len(found) != 1:
        yield Issue(f"{len(found)} Deployment templates ({', '.join(rel for rel, _ in found) or 'none'})",
                    "render exactly one Deployment", "templates/")
    for rel, text in found:
        for message in _workload_issues(view, rel, text):
            yield Issue(message, "name the Deployment after the app and wire its replicas through values.yaml", rel)


@chart_rule("OLARES027", "olares-v3: the olares dependency is written `version: '>=1.12.6-0'`",
            "the maintainer's market checks the manifest text for exactly this line",
            f"{V3_VALIDATOR} 'must require Olares >=1.12.6-0'")
def v3_dependency_text(view: ChartView) -> Iterator[Issue]:
    if _v3(view) and "version: '>=1.12.6-0'" not in view.tree.get(MANIFEST, ""):
        yield Issue("the manifest has no line `version: '>=1.12.6-0'`", "require olares '>=1.12.6-0' (single-quoted)",
                    MANIFEST, _at(view, MANIFEST, "name: olares"))


def _envs(view: ChartView) -> dict[str, dict[str, Any]]:
    envs = view.manifest.get("envs")
    return {str(e.get("envName")): e for e in envs or () if isinstance(e, dict)} if isinstance(envs, list) else {}


@chart_rule("OLARES028", "olares-v3: options.LLMGatewaySupported is a boolean; when true, MODEL_MODE is a known "
            "mode and MODEL_SUPPORTS a comma list of vision, tools, thinking (or none)",
            "Router lists the apps whose manifest sets LLMGatewaySupported and types them by MODEL_MODE; an unknown "
            "capability is carried as unknown rather than served",
            f"{SPEC_012} options.LLMGatewaySupported; beclab/apps llamacppqwen3627bmtpq4kxlv3/OlaresManifest.yaml"
            "@885118d6b46089d9906a2717aefb073c7f75be08 (envs MODEL_MODE, MODEL_SUPPORTS); beclab/apps "
            "llamacppqwen3627bmtpq4kxlv3/templates/llm-init.yaml@4926490e407f6ee292602da06a29a9a75f1291e4 "
            "(the MODEL_SUPPORTS groups)")
def v3_llm_gateway(view: ChartView) -> Iterator[Issue]:
    if not _v3(view):
        return
    flag = _map(view.manifest, "options").get("LLMGatewaySupported")
    if flag is None:
        return
    if not isinstance(flag, bool):
        yield Issue(f"options.LLMGatewaySupported {flag!r} is not a boolean", "write true or false", MANIFEST,
                    _at(view, MANIFEST, "LLMGatewaySupported:"))
        return
    if not flag:
        return
    envs = _envs(view)
    mode = envs.get("MODEL_MODE", {}).get("default")
    if mode not in MODEL_MODES:
        yield Issue(f"MODEL_MODE {mode!r} is not a Router mode ({', '.join(MODEL_MODES)})",
                    "declare envs MODEL_MODE with default chat", MANIFEST, _at(view, MANIFEST, "MODEL_MODE"))
    supports = str(envs.get("MODEL_SUPPORTS", {}).get("default", ""))
    tokens = [t.strip() for t in supports.split(",") if t.strip()]
    if not tokens or any(t not in MODEL_SUPPORTS for t in tokens) or ("none" in tokens and len(tokens) > 1):
        yield Issue(f"MODEL_SUPPORTS {supports!r} is not a list of {', '.join(MODEL_SUPPORTS[:3])} (or none)",
                    "declare envs MODEL_SUPPORTS from the app's capabilities", MANIFEST,
                    _at(view, MANIFEST, "MODEL_SUPPORTS"))


# --- oac's structural manifest checks (ported where the oracle's test vectors found our rules silent) -----------

OAC_VALIDATE = "beclab/Olares framework/oac/internal/manifest/validate.go@1f207c4ac0baee185999a0b2c55ede2d08652ce1"
ENTRANCE_NAME = re.compile(r"^[a-zA-Z0-9-]*$")  # oac entranceNameRegex
ENTRANCE_HOST = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])$")  # oac entranceHostRegex
AUTH_LEVELS = ("", "public", "private", "internal")  # oac validAuthLevels
OPEN_METHODS = ("", "default", "iframe", "window")  # oac validOpenMethods
ARCHES = ("amd64", "arm64")  # oac validSupportArchSet
HTTP_URL = re.compile(r"^https?://[^/\s?#]+")  # oac isHTTPURL: scheme http(s) and a host


def _entrance_issues(index: int, e: dict[str, Any]) -> Iterator[str]:
    where = f"entrances[{index}]"
    name, host, port = e.get("name", ""), e.get("host", ""), e.get("port")
    if not isinstance(name, str) or not ENTRANCE_NAME.match(name) or len(name) > 63:
        yield f"{where}.name {name!r} must match ^[a-z0-9A-Z-]*$ and be at most 63 characters"
    if not isinstance(host, str) or (host and (not ENTRANCE_HOST.match(host) or len(host) > 63)):
        yield f"{where}.host {host!r} must match ^[a-z]([-a-z0-9]*[a-z0-9])$ and be at most 63 characters"
    if not isinstance(port, int) or isinstance(port, bool) or port < 1:
        yield f"{where}.port {port!r} must be > 0"
    icon = e.get("icon", "")
    if icon and (not isinstance(icon, str) or not HTTP_URL.match(icon)):
        yield f"{where}.icon {icon!r} must be a valid http(s) URL"
    if e.get("authLevel", "") not in AUTH_LEVELS:
        yield f"{where}.authLevel {e.get('authLevel')!r} must be one of {', '.join(map(repr, AUTH_LEVELS))}"
    if e.get("openMethod", "") not in OPEN_METHODS:
        yield f"{where}.openMethod {e.get('openMethod')!r} must be one of {', '.join(map(repr, OPEN_METHODS))}"


@chart_rule("OLARES029", "the manifest's structure as oac validates it: metadata.icon an http(s) URL and "
            "metadata.description set; 1-10 entrances with unique names, each name ^[a-z0-9A-Z-]*$, host "
            "^[a-z]([-a-z0-9]*[a-z0-9])$, port > 0, authLevel and openMethod from their lists; spec.supportArch "
            "entries amd64 or arm64, each once",
            "the platform's validator refuses the chart at Market ingest and install (`olares-cli chart lint`)",
            f"{OAC_VALIDATE} validateAppMetaData, validateEntranceValue, uniqueEntranceNames, "
            "validSupportArchSet; framework/oac/internal/manifest/validate_test.go (TestEntrance_*)")
def oac_structure(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors:
        return
    meta = _meta(view)
    icon = meta.get("icon")
    if not isinstance(icon, str) or not HTTP_URL.match(icon):
        yield Issue(f"metadata.icon {icon!r} must be a valid http(s) URL", "give the app's icon URL", MANIFEST,
                    _at(view, MANIFEST, "icon:"))
    if not meta.get("description"):
        yield Issue("metadata.description is required", "give the app's one-line description", MANIFEST,
                    _at(view, MANIFEST, "metadata:"))
    entrances = [e for e in view.manifest.get("entrances") or () if isinstance(e, dict)]
    if not 1 <= len(entrances) <= 10:
        yield Issue(f"{len(entrances)} entrances: oac wants between 1 and 10", "declare the app's entrance",
                    MANIFEST, _at(view, MANIFEST, "entrances:"))
    names = [e.get("name") for e in entrances]
    for name in sorted({str(n) for n in names if names.count(n) > 1}):
        yield Issue(f"entrance name {name!r} is a duplicate", "give each entrance its own name", MANIFEST,
                    _at(view, MANIFEST, f"name: {name}"))
    for index, e in enumerate(entrances):
        for message in _entrance_issues(index, e):
            yield Issue(message, "fix the entrance", MANIFEST, _at(view, MANIFEST, "entrances:"))
    arch = _spec(view).get("supportArch") or []
    for a in arch if isinstance(arch, list) else [arch]:
        if a not in ARCHES:
            yield Issue(f"spec.supportArch {a!r} is not amd64 or arm64", "list amd64 and/or arm64", MANIFEST,
                        _at(view, MANIFEST, "supportArch:"))
    if isinstance(arch, list) and len(set(map(str, arch))) != len(arch):
        yield Issue("spec.supportArch lists an architecture twice", "list each once", MANIFEST,
                    _at(view, MANIFEST, "supportArch:"))
