"""App -> ChartSpec: every final value of a chart, computed here; templates only place them."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from generator.catalog import Resolved
from generator.engines import EngineSpec, engine_for

MANIFEST_VERSION = "0.12.0"
OLARES_DEPENDENCY = ">=1.12.6-0"  # olares-chart.md §2.6: v3, appCommon and accelerator need 1.12.6
STARTUP_BUDGET_S = 3600  # first boot downloads the weights (DECISIONS.md)
INIT_IMAGE = "docker.io/alpine:3.20"  # the maintainer's charts fetch GGUF files with it
CONTAINER = "engine"


@dataclass(frozen=True)
class ChartSpec:
    name: str
    chart: dict[str, Any]
    manifest: dict[str, Any]
    values: dict[str, Any]
    owners: dict[str, Any]
    engine: EngineSpec


def k8s_literal(text: str) -> str:
    """Kubernetes expands `$(VAR)` in args and env values and turns `$$` into `$`: double every `$`."""
    return text.replace("$", "$$")


def _cpu(q: str) -> Decimal:
    return Decimal(q[:-1]) / 1000 if q.endswith("m") else Decimal(q)


def _bytes(q: str) -> Decimal:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    for suffix, factor in units.items():
        if q.endswith(suffix):
            return Decimal(q[: -len(suffix)]) * factor
    return Decimal(q)


def _resources(r: Resolved) -> dict[str, Any]:
    res = r.app.resources
    gpumem = r.app.gpu_memory_mib
    return {
        "requests": {"cpu": res.cpu_request, "memory": res.memory_request, "nvidia.com/gpumem": gpumem},
        "limits": {"cpu": res.cpu_limit, "memory": res.memory_limit, "nvidia.com/gpumem": gpumem},
    }


def _values(r: Resolved, spec: EngineSpec) -> dict[str, Any]:
    engine: dict[str, Any] = {"image": spec.image}
    if spec.command:
        engine["command"] = [k8s_literal(c) for c in spec.command]
    engine["args"] = [k8s_literal(a) for a in spec.argv]
    engine["env"] = [{"name": e.name, "value": k8s_literal(e.value)} for e in spec.env]
    engine["port"] = spec.port
    engine["healthPath"] = spec.health_path
    engine["startupSeconds"] = STARTUP_BUDGET_S
    engine["resources"] = _resources(r)
    values: dict[str, Any] = {"workloads": {r.app.name: {"replicaCount": 1}}, "engine": engine}
    values["modelFetch"] = {
        "image": INIT_IMAGE,
        "files": [{"repo": d.repo, "revision": d.revision, "file": d.file, "path": d.path} for d in spec.downloads],
    }
    return values


def _accelerator(r: Resolved) -> dict[str, Any]:
    res = r.app.resources
    gpu = f"{r.app.gpu_memory_mib}Mi"
    return {
        "mode": "nvidia",
        "requiredCpu": res.cpu_request,
        "limitedCpu": res.cpu_limit,
        "requiredMemory": res.memory_request,
        "limitedMemory": res.memory_limit,
        "requiredDisk": res.disk_request,
        "limitedDisk": res.disk_limit,
        "requiredGPUMemory": gpu,
        "limitedGPUMemory": gpu,
    }


def _manifest(r: Resolved, spec: EngineSpec) -> dict[str, Any]:
    app = r.app
    spec_block: dict[str, Any] = {
        "versionName": r.stack.image_tag,
        "fullDescription": app.full_description or app.description,
    }
    if app.upgrade_description:
        spec_block["upgradeDescription"] = app.upgrade_description
    spec_block.update({
        "developer": app.owners[0],
        "submitter": app.owners[0],
        "locale": ["en-US"],
        "supportArch": ["amd64"],
        "onlyAdmin": True,
        "accelerator": [_accelerator(r)],
    })
    return {
        "olaresManifest.version": MANIFEST_VERSION,
        "olaresManifest.type": "app",
        "apiVersion": "v3",
        "metadata": {
            "name": app.name,
            "appid": app.name,
            "title": app.title,
            "description": app.description,
            "icon": app.icon,
            "version": app.version,
            "categories": ["AI"],
        },
        "entrances": [{
            "name": app.name,
            "host": app.name,
            "port": spec.port,
            "title": app.title,
            "icon": app.icon,
            "openMethod": "window",
            "authLevel": "internal",
        }],
        "workloadReplicas": {app.name: 1},
        "spec": spec_block,
        "permission": {"appCommon": True, "appCache": True},
        "options": {
            "apiTimeout": 0,
            "dependencies": [{"name": "olares", "version": OLARES_DEPENDENCY, "type": "system"}],
        },
        "envs": [
            {"envName": "HF_ENDPOINT", "valueFrom": {"envName": "OLARES_SYSTEM_HUGGINGFACE_SERVICE"}},
            {"envName": "HF_TOKEN", "valueFrom": {"envName": "OLARES_SYSTEM_HUGGINGFACE_TOKEN"}},
        ],
    }


def plan(r: Resolved) -> ChartSpec:
    spec = engine_for(r)
    app = r.app
    chart = {
        "apiVersion": "v2",
        "name": app.name,
        "description": app.description.splitlines()[0],
        "icon": app.icon,
        "type": "application",
        "version": app.version,
        "appVersion": r.stack.image_tag,
    }
    return ChartSpec(
        name=app.name,
        chart=chart,
        manifest=_manifest(r, spec),
        values=_values(r, spec),
        owners={"owners": list(app.owners)},
        engine=spec,
    )


__all__ = ["CONTAINER", "ChartSpec", "plan", "_cpu", "_bytes"]
