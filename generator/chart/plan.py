"""App -> ChartSpec: every final value of a chart, computed here; templates only place them."""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog import Resolved
from generator.chart.parts import (Accelerator, ChartYaml, ContainerResources, Dependency, EngineValues, Entrance,
                                   EnvValue, FetchFile, ManifestSpec, Metadata, ModelFetch, OlaresManifest, Owners,
                                   ResourceList, SystemEnv, Values)
from generator.engines import EngineSpec, engine_for

MANIFEST_VERSION = "0.12.0"
OLARES_DEPENDENCY = ">=1.12.6-0"  # olares-chart.md §2.6: v3, appCommon and accelerator need 1.12.6
STARTUP_BUDGET_S = 3600  # first boot downloads the weights (DECISIONS.md)
INIT_IMAGE = "docker.io/alpine:3.20"  # the maintainer's charts fetch GGUF files with it
CONTAINER = "engine"


@dataclass(frozen=True)
class ChartSpec:
    """Every final value of one app's chart, as typed parts (generator/chart/parts.py)."""

    name: str
    chart: ChartYaml
    manifest: OlaresManifest
    values: Values
    owners: Owners
    engine: EngineSpec


def k8s_literal(text: str) -> str:
    """Kubernetes expands `$(VAR)` in args and env values and turns `$$` into `$`: double every `$`."""
    return text.replace("$", "$$")


def _resources(r: Resolved) -> ContainerResources:
    res = r.app.resources
    gpumem = r.app.gpu_memory_mib
    return ContainerResources(requests=ResourceList(res.cpu_request, res.memory_request, gpumem),
                              limits=ResourceList(res.cpu_limit, res.memory_limit, gpumem))


def _values(r: Resolved, spec: EngineSpec) -> Values:
    engine = EngineValues(
        image=spec.image, command=tuple(k8s_literal(c) for c in spec.command), args=tuple(k8s_literal(a) for a in spec.argv),
        env=tuple(EnvValue(e.name, k8s_literal(e.value)) for e in spec.env), port=spec.port,
        health_path=spec.health_path, startup_seconds=STARTUP_BUDGET_S, resources=_resources(r))
    files = tuple(FetchFile(d.repo, d.revision, d.file, d.path) for d in spec.downloads)
    return Values(workloads={r.app.name: 1}, engine=engine, model_fetch=ModelFetch(INIT_IMAGE, files))


def _accelerator(r: Resolved) -> Accelerator:
    res = r.app.resources
    gpu = f"{r.app.gpu_memory_mib}Mi"
    return Accelerator(required_cpu=res.cpu_request, limited_cpu=res.cpu_limit, required_memory=res.memory_request,
                       limited_memory=res.memory_limit, required_disk=res.disk_request, limited_disk=res.disk_limit,
                       required_gpu_memory=gpu, limited_gpu_memory=gpu)


def _manifest(r: Resolved, spec: EngineSpec) -> OlaresManifest:
    app = r.app
    return OlaresManifest(
        manifest_version=MANIFEST_VERSION,
        metadata=Metadata(name=app.name, title=app.title, description=app.description, icon=app.icon,
                          version=app.version),
        entrances=(Entrance(name=app.name, port=spec.port, title=app.title, icon=app.icon),),
        workload_replicas={app.name: 1},
        spec=ManifestSpec(version_name=r.stack.image_tag, full_description=app.full_description or app.description,
                          upgrade_description=app.upgrade_description, developer=app.owners[0],
                          submitter=app.owners[0], accelerator=(_accelerator(r),)),
        dependencies=(Dependency("olares", OLARES_DEPENDENCY, "system"),),
        envs=(SystemEnv("HF_ENDPOINT", "OLARES_SYSTEM_HUGGINGFACE_SERVICE"),
              SystemEnv("HF_TOKEN", "OLARES_SYSTEM_HUGGINGFACE_TOKEN")),
    )


def plan(r: Resolved) -> ChartSpec:
    spec = engine_for(r)
    app = r.app
    chart = ChartYaml(name=app.name, description=app.description.splitlines()[0], icon=app.icon, version=app.version,
                      app_version=r.stack.image_tag)
    return ChartSpec(name=app.name, chart=chart, manifest=_manifest(r, spec), values=_values(r, spec),
                     owners=Owners(tuple(app.owners)), engine=spec)


__all__ = ["CONTAINER", "ChartSpec", "k8s_literal", "plan"]
