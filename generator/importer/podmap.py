"""The rest of the pod -> what the catalog renders itself (probes, mounts, other containers and
documents, launcher lines run before the engine), each reported as kept, noted or unmapped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from generator.chart import Profile
from generator.importer.workload import Launch, Pod, pod_spec
from generator.importer.writes import Written
from generator.lint import Doc
from generator.lint import olares_values
from generator.importer import objects
from generator.importer.context import _Ctx

STARTUP_BUDGET_S = 3600  # generator/chart/plan.py STARTUP_BUDGET_S


def _pod_rest(ctx: _Ctx, pod: Pod, launch: Launch, port: int | None, health: str | None) -> None:
    """Workload, pod and container facts the catalog renders its own way."""
    doc = launch.workload
    spec = pod_spec(doc)
    src = doc.source
    anchor = ctx.lines.container_anchor(doc, launch.name)
    _pod_workload(ctx, doc, spec, src)
    _pod_other_containers(ctx, pod, launch)
    _pod_container(ctx, launch, src, anchor, port, health)
    _pod_mounts(ctx, launch, spec, src, anchor)
    _pod_other_docs(ctx, port)
    _pod_unused_maps(ctx, pod, launch)


def _pod_workload(ctx: _Ctx, doc: Doc, spec: Mapping[str, object], src: str) -> None:
    """Workload and pod spec: one replica, Recreate, the GPU annotation, the pod keys modelled."""
    body_spec = doc.body.get("spec") or {}
    if body_spec.get("replicas") not in (None, 1) and not isinstance(body_spec.get("replicas"), str):
        ctx.unmapped(ctx.lines.origin(src, "replicas:"), f"replicas {body_spec.get('replicas')}")
    strategy = (body_spec.get("strategy") or {}).get("type")
    if strategy not in (None, "Recreate"):
        ctx.unmapped(ctx.lines.origin(src, "strategy:"), f"strategy {strategy} (the catalog renders Recreate)")
    annotations = ((doc.body.get("metadata") or {}).get("annotations") or {})
    if "applications.app.bytetrade.io/gpu-inject" not in annotations:
        ctx.unmapped(ctx.lines.origin(src, "metadata:"), "no gpu-inject annotation (the catalog renders one)")
    known_pod = {"containers", "initContainers", "volumes", "restartPolicy"}
    for key in sorted(set(spec) - known_pod):
        ctx.unmapped(ctx.lines.origin(src, f"{key}:"), f"pod spec.{key} is not modelled")
    if spec.get("restartPolicy") not in (None, "Always"):
        ctx.unmapped(ctx.lines.origin(src, "restartPolicy:"), f"restartPolicy {spec.get('restartPolicy')}")


def _pod_other_containers(ctx: _Ctx, pod: Pod, launch: Launch) -> None:
    """Init containers and jobs that do more than fetch files; containers besides the engine."""
    for doc2, container, pure in pod.fetchers:
        where = ctx.lines.origin(doc2.source, str(container.get("name")))
        if pure:
            # each file it fetches has its note (the catalog's init container fetches it); a file it writes
            # from an env variable is the chat template, or not modelled
            for write in _unmapped_writes(ctx, doc2, container):
                ctx.unmapped(write.origin, f"init container {write.container} writes {write.path} from env "
                                           f"{write.var}, which the engine does not read as its chat template "
                                           "(not modelled)")
            continue
        else:
            what = "job" if doc2.kind == "Job" else "init container"
            ctx.unmapped(where, f"{what} {container.get('name')} does more than download model files "
                                "(its script is not modelled)")
    for other in pod.launches:
        if other is not launch:
            ctx.unmapped(ctx.lines.origin(other.workload.source, other.name), f"container {other.name} "
                                                                              f"({other.image}) is not modelled")


def _unmapped_writes(ctx: _Ctx, doc: Doc, container: Mapping[str, object]) -> list[Written]:
    """The files this init container writes from an env variable that no app field holds."""
    return [w for w in ctx.pod_writes if w.workload == (doc.source, doc.name)
            and w.container == str(container.get("name") or "") and w not in ctx.handled_writes]


def _pod_container(ctx: _Ctx, launch: Launch, src: str, anchor: int, port: int | None, health: str | None) -> None:
    """The engine container: its keys, port and probes."""
    container = launch.container
    known = {"name", "image", "command", "args", "env", "envFrom", "ports", "startupProbe", "readinessProbe",
             "livenessProbe", "resources", "volumeMounts", "imagePullPolicy"}
    for key in sorted(set(container) - known):
        ctx.unmapped(ctx.lines.origin(src, f"{key}:", after=anchor), f"container {key} is not modelled")
    for item in objects.items(container, "ports"):
        if isinstance(item, dict) and port is not None and item.get("containerPort") != port:
            ctx.unmapped(ctx.lines.origin(src, "containerPort", after=anchor),
                         f"containerPort {item.get('containerPort')} differs from the engine port {port}")
    startup: dict[str, Any] = dict(objects.section(container, "startupProbe"))  # a probe as rendered
    path = objects.section(startup, "httpGet").get("path")
    if path is not None and health is not None and path != health:
        ctx.unmapped(ctx.lines.origin(src, "startupProbe", after=anchor),
                     f"startupProbe path {path} (the stack's health path is {health})")
    if startup:
        budget = int(startup.get("failureThreshold", 3)) * int(startup.get("periodSeconds", 10)) \
            + int(startup.get("initialDelaySeconds", 0))
        if budget != STARTUP_BUDGET_S:
            ctx.unmapped(ctx.lines.origin(src, "startupProbe", after=anchor),
                         f"startupProbe allows {budget} s (the catalog renders {STARTUP_BUDGET_S} s for the first "
                         "download)")
    else:
        ctx.unmapped(ctx.lines.origin(src, launch.name), "no startupProbe (the catalog renders one)")
    if container.get("livenessProbe"):
        probe: dict[str, Any] = dict(objects.section(container, "livenessProbe"))
        ctx.unmapped(ctx.lines.origin(src, "livenessProbe", after=anchor),
                     f"livenessProbe ({(probe.get('httpGet') or {}).get('path', 'not HTTP')}, every "
                     f"{probe.get('periodSeconds', 10)} s, after {probe.get('initialDelaySeconds', 0)} s) is not "
                     "modelled")
    if container.get("imagePullPolicy"):
        ctx.unmapped(ctx.lines.origin(src, "imagePullPolicy", after=anchor),
                     f"imagePullPolicy {container['imagePullPolicy']}")


def _pod_mounts(ctx: _Ctx, launch: Launch, spec: Mapping[str, object], src: str, anchor: int) -> None:
    """The engine's volume mounts: /models on the profile's weights folder; others are recorded."""
    container = launch.container
    volumes = {v.get("name"): v for v in objects.maps(spec, "volumes")}
    for mount in objects.items(container, "volumeMounts"):
        if not isinstance(mount, dict):
            continue
        volume = volumes.get(mount.get("name")) or {}
        kind = next((k for k in volume if k != "name"), "?")
        origin = ctx.lines.origin(src, str(mount.get("mountPath")), after=anchor)
        if mount.get("name") in ctx.handled_mounts:
            continue
        if mount.get("mountPath") == "/models":
            path = str(objects.section(volume, "hostPath").get("path", ""))
            if kind != "hostPath" or _userspace(ctx, path) != _models_folder(ctx.profile):
                ctx.unmapped(origin, f"/models is a {kind} {_userspace(ctx, path)} (the {ctx.profile.name} profile "
                                     f"stores weights in {_models_folder(ctx.profile)})")
            continue
        detail = (volume.get(kind) or {}) if isinstance(volume.get(kind), dict) else volume.get(kind)
        shown = f"{kind} {_userspace(ctx, str(detail))}" if detail else kind
        ctx.unmapped(origin, f"volume {mount.get('name')} ({shown}) mounted at {mount.get('mountPath')} is not "
                             "modelled")


def _pod_other_docs(ctx: _Ctx, port: int | None) -> None:
    """Rendered documents besides the workloads: the Service's port, the token Secret; others are recorded."""
    for doc2 in ctx.r.docs:
        if doc2.kind in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ConfigMap"):
            continue
        if doc2.kind == "Service":
            ports = [p.get("port") for p in (doc2.body.get("spec") or {}).get("ports") or () if isinstance(p, dict)]
            if port is not None and ports and ports != [port]:
                ctx.unmapped(ctx.lines.origin(doc2.source, "port:"), f"Service {doc2.name} ports {ports} (the catalog "
                                                                     f"serves the engine port {port})")
            continue
        if doc2.kind == "Secret" and doc2.name.endswith("-secrets"):
            data = doc2.body.get("stringData") or doc2.body.get("data") or {}
            if set(data) <= {"HF_TOKEN"}:
                continue
        ctx.unmapped(ctx.lines.origin(doc2.source, f"kind: {doc2.kind}"), f"{doc2.label} is not modelled")


def _pod_unused_maps(ctx: _Ctx, pod: Pod, launch: Launch) -> None:
    """ConfigMaps nothing reads."""
    container = launch.container
    used_maps = {str((s.get("configMapRef") or {}).get("name")) for s in objects.items(container, "envFrom")
                 if isinstance(s, dict)}
    for _, c, _ in pod.fetchers:
        used_maps |= {str((s.get("configMapRef") or {}).get("name")) for s in objects.items(c, "envFrom")
                      if isinstance(s, dict)}
    used_maps |= ctx.handled_maps
    for doc2 in ctx.r.docs:
        if doc2.kind == "ConfigMap" and doc2.name not in used_maps:
            ctx.unmapped(ctx.lines.origin(doc2.source, doc2.name), f"ConfigMap {doc2.name} is not read by the engine "
                                                                  "(not modelled)")


def _models_folder(profile: Profile) -> str:
    """The host folder of the weights in `profile` (generator/chart/profiles.py models_path), as _userspace writes
    it: olares-v2 `<appData>/models`, olares-v3 `<appCommon>/huggingface`."""
    key, folder = ("appData", "models") if profile.flat_resources else ("appCommon", "huggingface")
    return f"{{{{ .Values.userspace.{key} }}}}/{folder}"


def _userspace(ctx: _Ctx, text: str) -> str:
    """Olares' injected userspace paths written back as the values they came from."""
    name = str(ctx.result.name or "")
    for key, value in sorted(olares_values(name, {}, {})["userspace"].items(), key=lambda kv: -len(kv[1])):
        text = text.replace(value, f"{{{{ .Values.userspace.{key} }}}}")
    return text


def _pre_exec(ctx: _Ctx, launch: Launch, fetch_lines: set[int]) -> None:
    ignorable = re.compile(r"^(set\s+-[a-z]+|echo\b|mkdir\b|ls\b|cd\b|mv\b|if\b|then\b|else\b|elif\b|fi\b|true\b|"
                           r"(export\s+)?[A-Za-z_][A-Za-z0-9_]*=|(eval\s+)?(curl|wget)\b)")
    rest = [(o, t) for o, t in launch.pre_exec
            if not ignorable.match(t) and o.line not in fetch_lines and o.line not in ctx.handled_lines]
    if rest:
        first = rest[0][0]
        lines = ", ".join(str(o.line) for o, _ in rest[:8]) + (" ..." if len(rest) > 8 else "")
        ctx.unmapped(first, f"the launcher script runs commands before the engine (lines {lines}: "
                            f"{rest[0][1][:160]}{'...' if len(rest[0][1]) > 160 else ''}); not modelled")
    if launch.script is not None and not ctx.packages_launcher:
        ctx.note(launch.script_origin or "", "the engine starts from a launcher script; the catalog renders the "
                                             "command and arguments directly")


__all__ = ["STARTUP_BUDGET_S"]
