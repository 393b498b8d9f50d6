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

from generator.lint.helm import Doc
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


@chart_rule("OLARES018", "olares-v2: spec.requiredCpu and spec.limitedCpu are whole cores",
            "the maintainer's market (0.10.0, beclab/apps format) writes CPU in integer cores, not millicores",
            "github.com/aamsellem/orales-one-market CLAUDE.md 'CPU values in integer cores (e.g., 4), NOT millicores'")
def whole_cores(view: ChartView) -> Iterator[Issue]:
    if MANIFEST in view.parse_errors or profile_of(view) != V2:
        return
    spec = _spec(view)
    for key in ("requiredCpu", "limitedCpu"):
        value = spec.get(key)
        if value is None:
            continue
        cores = _quantity(value)
        if cores is None or cores != int(cores) or str(value).strip().endswith("m"):
            yield Issue(f"spec.{key} {value!r} is not a whole number of cores", f"write {key} as an integer, e.g. '4'",
                        MANIFEST, _at(view, MANIFEST, f"{key}:"))


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
