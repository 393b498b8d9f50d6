"""The parts of a chart as typed values: Chart.yaml, OlaresManifest.yaml, values.yaml and owners.

`chart.plan` builds them; later stages (rules, versions) read their fields. Each part's `to_data()` gives the
plain data the YAML emitter (generator/yamlio/yamlout.py) writes, key by key in the order the chart files
have always had, so the rendered bytes do not depend on how the parts are held. Field names follow Python;
the keys they become are spelled in `to_data()` (Olares: `olaresManifest.version`, `requiredGPUMemory`, ...).

Olares manifest fields: Olares `OlaresManifest.yaml` reference (https://docs.olares.com/developer/develop/
package/manifest.html); Helm Chart.yaml: https://helm.sh/docs/topics/charts/#the-chartyaml-file.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.chart.profiles import OLARES_V3, Profile
from generator.chart.shared import SharedEngine
from generator.core import Data

GPU_RESOURCE = "nvidia.com/gpumem"  # HAMi's extended resource: an integer of MiB


# ---- Chart.yaml ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChartYaml:
    name: str
    description: str  # the first line of the app's description
    icon: str
    version: str
    app_version: str  # the app's version (spec.versionName corresponds to it: manifest.md "Spec")
    api_version: str = "v2"
    type: str = "application"

    def to_data(self) -> dict[str, Data]:
        return {"apiVersion": self.api_version, "name": self.name, "description": self.description, "icon": self.icon,
                "type": self.type, "version": self.version, "appVersion": self.app_version}


# ---- OlaresManifest.yaml ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Metadata:
    name: str
    title: str
    description: str
    icon: str
    version: str
    categories: tuple[str, ...] = ("AI",)  # Olares 1.12 Market categories (manifest.md "categories")

    def to_data(self, profile: Profile = OLARES_V3) -> dict[str, Data]:
        out: dict[str, Data] = {"name": self.name}
        if profile.appid:  # 0.12.0 deprecates metadata.appid ("created automatically from metadata.name")
            out["appid"] = self.name
        out.update({"title": self.title, "description": self.description, "icon": self.icon,
                    "version": self.version, "categories": list(self.categories)})
        return out


@dataclass(frozen=True)
class Entrance:
    name: str
    port: int
    title: str
    icon: str
    open_method: str = "window"
    auth_level: str = "internal"

    def to_data(self) -> dict[str, Data]:
        return {"name": self.name, "host": self.name, "port": self.port, "title": self.title, "icon": self.icon,
                "openMethod": self.open_method, "authLevel": self.auth_level}


def _cpu_memory_disk(entry: Accelerator | ModeEnvelope) -> dict[str, str]:
    """The six CPU, memory and disk reservations of an accelerator entry by their manifest keys, in manifest order."""
    return {"requiredCpu": entry.required_cpu, "limitedCpu": entry.limited_cpu,
            "requiredMemory": entry.required_memory, "limitedMemory": entry.limited_memory,
            "requiredDisk": entry.required_disk, "limitedDisk": entry.limited_disk}


@dataclass(frozen=True)
class Accelerator:
    """One `spec.accelerator` entry: the resources Olares reserves for the app in one GPU mode."""

    required_cpu: str
    limited_cpu: str
    required_memory: str
    limited_memory: str
    required_disk: str
    limited_disk: str
    required_gpu_memory: str
    limited_gpu_memory: str
    mode: str = "nvidia"

    def resources(self) -> dict[str, str]:
        """Every reservation by its manifest key (what `catalog bump` compares), without the mode."""
        return {**_cpu_memory_disk(self),
                "requiredGPUMemory": self.required_gpu_memory, "limitedGPUMemory": self.limited_gpu_memory}

    def to_data(self) -> dict[str, Data]:
        return {"mode": self.mode, **self.resources()}

    def flat_data(self) -> dict[str, Data]:
        """olares-v2: the same reservations as flat `spec` fields (GPU memory as `requiredGpu`/`limitedGpu`)."""
        return {**_cpu_memory_disk(self),
                "requiredGpu": self.required_gpu_memory, "limitedGpu": self.limited_gpu_memory}


@dataclass(frozen=True)
class ModeEnvelope:
    """A further `spec.accelerator` entry: the app on the reference device of another mode (docs/devices.md
    "Charts"). `gpu_memory` None: the mode has no GPU memory of its own (nvidia-gb10: the pod's memory is the GPU's;
    OAC's gpuMemoryModes are nvidia and amd-gpu, beclab/Olares framework/oac/internal/manifest/resources.go
    @e0a30de0bc32f5be7f1f2d7c1414b42d0efac24c)."""

    mode: str
    required_cpu: str
    limited_cpu: str
    required_memory: str
    limited_memory: str
    required_disk: str
    limited_disk: str
    gpu_memory: str | None = None

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"mode": self.mode, **_cpu_memory_disk(self)}
        if self.gpu_memory is not None:
            out.update({"requiredGPUMemory": self.gpu_memory, "limitedGPUMemory": self.gpu_memory})
        return out


@dataclass(frozen=True)
class ManifestSpec:
    # the app's version: the market shows it as the version users install (the maintainer's charts write
    # metadata.version there; beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e
    # docs/developer/develop/package/manifest.md "Spec": "the version of the application that this chart contains")
    version_name: str
    full_description: str
    upgrade_description: str | None
    developer: str
    submitter: str
    accelerator: tuple[Accelerator, ...]
    website: str | None = None
    source_code: str | None = None
    license: tuple[tuple[str, str | None], ...] = ()  # (text, url) of spec.license
    locale: tuple[str, ...] = ("en-US",)
    support_arch: tuple[str, ...] = ("amd64",)
    only_admin: bool = True
    modes: tuple[ModeEnvelope, ...] = ()  # olares-v3 per-mode charts: the entries after the app's own mode
    shared: bool = False  # the shared form: `onlyAdmin: true`, which options.shared requires (manifest.md "shared")

    def to_data(self, profile: Profile = OLARES_V3) -> dict[str, Data]:
        out: dict[str, Data] = {"versionName": self.version_name, "fullDescription": self.full_description}
        if self.upgrade_description:
            out["upgradeDescription"] = self.upgrade_description
        out["developer"] = self.developer
        if self.website:
            out["website"] = self.website
        if self.source_code:
            out["sourceCode"] = self.source_code
        out.update({"submitter": self.submitter, "locale": list(self.locale), "supportArch": list(self.support_arch)})
        if self.license:
            out["license"] = [{"text": t, **({"url": u} if u else {})} for t, u in self.license]
        if self.shared:
            out["onlyAdmin"] = True
        elif profile.only_admin:  # v3: an individual app leaves onlyAdmin out (the spec's default, false)
            out["onlyAdmin"] = self.only_admin
        if profile.flat_resources:
            out.update(self.accelerator[0].flat_data())  # v2 has one envelope: the nvidia one
        else:
            entries: list[Data] = [a.to_data() for a in self.accelerator]
            out["accelerator"] = entries + [m.to_data() for m in self.modes]
        return out


@dataclass(frozen=True)
class Dependency:
    name: str
    version: str
    type: str

    def to_data(self) -> dict[str, Data]:
        return {"name": self.name, "version": self.version, "type": self.type}


@dataclass(frozen=True)
class SystemEnv:
    """An app env var Olares fills from a system or user env var (`valueFrom.envName`). `flags`: also write
    `required: false, applyOnChange: true` (the official v3 charts; the token is optional, a changed one
    redeploys the app: docs/profiles.md)."""

    name: str
    system_name: str
    flags: bool = False

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"envName": self.name}
        if self.flags:
            out.update({"required": False, "applyOnChange": True})
        out["valueFrom"] = {"envName": self.system_name}
        return out


@dataclass(frozen=True)
class FixedEnv:
    """An app env var with a fixed value the user cannot edit (the MODEL_* envs of beclab/apps' v3 LLM charts)."""

    name: str
    value: str

    def to_data(self) -> dict[str, Data]:
        return {"envName": self.name, "required": True, "type": "string", "editable": False,
                "applyOnChange": False, "default": self.value}


MODEL_SUPPORTS = ("vision", "tools", "thinking")  # the MODEL_SUPPORTS vocabulary of beclab/apps' v3 charts


@dataclass(frozen=True)
class ModelCard:
    """What Olares Router reads of a chat app from its manifest (docs/profiles.md "Router"):
    options.LLMGatewaySupported, and the MODEL_MODE / MODEL_NAME / MODEL_SUPPORTS envs of beclab/apps'
    v3 LLM charts (`none` when the model has none of vision, tools, thinking)."""

    name: str  # the model name the server answers to (/v1/models)
    supports: tuple[str, ...]  # a subset of MODEL_SUPPORTS, in its order
    mode: str = "chat"

    def envs(self) -> tuple[FixedEnv, ...]:
        return (FixedEnv("MODEL_MODE", self.mode), FixedEnv("MODEL_NAME", self.name),
                FixedEnv("MODEL_SUPPORTS", ",".join(self.supports) or "none"))


@dataclass(frozen=True)
class SharedEntrance:
    """A `sharedEntrances` entry: the in-cluster address other apps and Router reach the engine at (manifest.md
    "sharedEntrances": port 0, invisible, authLevel internal, as in its example and beclab/apps' engine bases)."""

    name: str
    host: str  # a Service of the chart (generator/chart/shared.py SERVICE_PORT -> the engine's port)
    title: str
    icon: str

    def to_data(self) -> dict[str, Data]:
        return {"name": self.name, "host": self.host, "port": 0, "title": self.title, "icon": self.icon,
                "invisible": True, "authLevel": "internal"}


@dataclass(frozen=True)
class SettingEnv:
    """A manifest env a user (or Router) may change, read by the chart as `.Values.olaresEnv.<name>` (manifest.md
    "envs": type string/int/.../password, regex, editable, applyOnChange: a change redeploys the app). Its default is
    empty, as the official bases write their optional settings (beclab/apps@83b36160 llamacppllmbasev3
    ENGINE_ARGS `default: ""`): empty means the chart's own value."""

    name: str
    description: str
    type: str = "string"
    regex: str | None = None

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"envName": self.name, "required": False, "default": "", "type": self.type,
                                "editable": True, "applyOnChange": True}
        if self.regex is not None:
            out["regex"] = self.regex
        out["description"] = self.description
        return out


@dataclass(frozen=True)
class SharedManifest:
    """What the shared form adds to the manifest (docs/forms.md)."""

    entrance: SharedEntrance
    settings: tuple[SettingEnv, ...]


@dataclass(frozen=True)
class I18nManifest:
    """i18n/<locale>/OlaresManifest.yaml: the fields the Market translates (manifest.md "i18n")."""

    title: str
    description: str
    full_description: str
    upgrade_description: str | None

    def to_data(self) -> dict[str, Data]:
        spec: dict[str, Data] = {"fullDescription": self.full_description}
        if self.upgrade_description:
            spec["upgradeDescription"] = self.upgrade_description
        return {"metadata": {"title": self.title, "description": self.description}, "spec": spec}


@dataclass(frozen=True)
class OlaresManifest:
    manifest_version: str
    metadata: Metadata
    entrances: tuple[Entrance, ...]
    workload_replicas: dict[str, int]
    spec: ManifestSpec
    dependencies: tuple[Dependency, ...]
    envs: tuple[SystemEnv, ...]
    api_timeout: int = 0
    model_card: ModelCard | None = None  # a chat app Router lists (olares-v3 only)
    manifest_type: str = "app"
    profile: Profile = OLARES_V3  # which manifest format to_data() writes (generator/chart/profiles.py)
    shared: SharedManifest | None = None  # the shared form (docs/forms.md)

    @property
    def api_version(self) -> str:
        return self.profile.api_version

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {
            "olaresManifest.version": self.manifest_version,
            "olaresManifest.type": self.manifest_type,
            "apiVersion": self.api_version,
            "metadata": self.metadata.to_data(self.profile),
            "entrances": [e.to_data() for e in self.entrances],
        }
        if self.shared is not None:
            out["sharedEntrances"] = [self.shared.entrance.to_data()]
        if self.profile.workload_replicas:
            out["workloadReplicas"] = dict(self.workload_replicas)
        envs: list[Data] = [e.to_data() for e in self.envs]
        envs += [e.to_data() for e in self._card_envs()]
        envs += [e.to_data() for e in (self.shared.settings if self.shared is not None else ())]
        out.update({
            "spec": self.spec.to_data(self.profile),
            "permission": dict(self.profile.permission),
            "options": self._options(),
            "envs": envs,
        })
        return out

    def _gateway(self) -> bool:
        return self.model_card is not None and self.profile.llm_gateway

    def _card_envs(self) -> tuple[FixedEnv, ...]:
        return self.model_card.envs() if self.model_card is not None and self._gateway() else ()

    def _options(self) -> dict[str, Data]:
        out: dict[str, Data] = {"apiTimeout": self.api_timeout}
        if self._gateway():
            out["LLMGatewaySupported"] = True
        if self.shared is not None:
            out["shared"] = True
        out["dependencies"] = [d.to_data() for d in self.dependencies]
        return out


# ---- values.yaml --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResourceList:
    cpu: str
    memory: str
    gpumem: int  # MiB (HAMi `nvidia.com/gpumem`)

    def to_data(self) -> dict[str, Data]:
        return {"cpu": self.cpu, "memory": self.memory, GPU_RESOURCE: self.gpumem}


@dataclass(frozen=True)
class ContainerResources:
    requests: ResourceList
    limits: ResourceList

    def to_data(self) -> dict[str, Data]:
        return {"requests": self.requests.to_data(), "limits": self.limits.to_data()}


@dataclass(frozen=True)
class EnvValue:
    name: str
    value: str  # `$` already doubled for Kubernetes

    def to_data(self) -> dict[str, Data]:
        return {"name": self.name, "value": self.value}


@dataclass(frozen=True)
class EngineValues:
    image: str
    command: tuple[str, ...]  # empty: the image's entrypoint (the key is left out)
    args: tuple[str, ...]  # `$` already doubled for Kubernetes
    env: tuple[EnvValue, ...]
    port: int
    health_path: str
    startup_seconds: int
    resources: ContainerResources
    shared: SharedEngine | None = None  # the shared form's bounds (generator/chart/shared.py)

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"image": self.image}
        if self.command:
            out["command"] = list(self.command)
        out.update({"args": list(self.args), "env": [e.to_data() for e in self.env], "port": self.port,
                    "healthPath": self.health_path, "startupSeconds": self.startup_seconds,
                    "resources": self.resources.to_data()})
        if self.shared is not None:
            out["shared"] = self.shared.to_data()
        return out


@dataclass(frozen=True)
class FetchFile:
    repo: str
    revision: str
    file: str
    path: str

    def to_data(self) -> dict[str, Data]:
        return {"repo": self.repo, "revision": self.revision, "file": self.file, "path": self.path}


@dataclass(frozen=True)
class ModeResources:
    """A mode's container resources; `gpumem` None leaves `nvidia.com/gpumem` out (nvidia-gb10: the pod's memory is
    the GPU's, beclab/apps llamacppqwen3627bmtpq4kxlv3/templates/llamacpp.yaml)."""

    cpu_request: str
    cpu_limit: str
    memory_request: str
    memory_limit: str
    gpumem: int | None

    def to_data(self) -> dict[str, Data]:
        gpu: dict[str, Data] = {} if self.gpumem is None else {GPU_RESOURCE: self.gpumem}
        return {"requests": {"cpu": self.cpu_request, "memory": self.memory_request, **gpu},
                "limits": {"cpu": self.cpu_limit, "memory": self.memory_limit, **gpu}}


@dataclass(frozen=True)
class ModeEngine:
    """values.yaml `modes.<mode>`: what the Deployment takes instead of `engine` when Olares installs the app in that
    accelerator mode (the startup budget stays the app's own)."""

    image: str
    command: tuple[str, ...]
    args: tuple[str, ...]  # `$` already doubled for Kubernetes
    env: tuple[EnvValue, ...]
    port: int  # the container's; the Service keeps the app's own port and targets the container's named port
    health_path: str
    resources: ModeResources
    files: tuple[FetchFile, ...]  # what the init container fetches in this mode (instead of modelFetch.files)
    shared: SharedEngine | None = None  # the shared form's bounds on this mode's device

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"image": self.image}
        if self.command:
            out["command"] = list(self.command)
        out.update({"args": list(self.args), "env": [e.to_data() for e in self.env], "port": self.port,
                    "healthPath": self.health_path, "resources": self.resources.to_data(),
                    "files": [f.to_data() for f in self.files]})
        if self.shared is not None:
            out["shared"] = self.shared.to_data()
        return out


@dataclass(frozen=True)
class ModelFetch:
    """The init container that downloads GGUF files before the engine starts (empty `files` for vLLM)."""

    image: str
    files: tuple[FetchFile, ...]

    def to_data(self) -> dict[str, Data]:
        return {"image": self.image, "files": [f.to_data() for f in self.files]}


@dataclass(frozen=True)
class Values:
    workloads: dict[str, int]  # workload name -> replicaCount
    engine: EngineValues
    model_fetch: ModelFetch
    modes: tuple[tuple[str, ModeEngine], ...] = ()  # olares-v3 per-mode charts: mode -> its engine values

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"workloads": {name: {"replicaCount": n} for name, n in self.workloads.items()},
                                "engine": self.engine.to_data()}
        if self.modes:
            out["modes"] = {mode: m.to_data() for mode, m in self.modes}
        out["modelFetch"] = self.model_fetch.to_data()
        return out


# ---- owners -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Owners:
    owners: tuple[str, ...]

    def to_data(self) -> dict[str, Data]:
        return {"owners": list(self.owners)}


def key_paths(node: Data, prefix: str = "") -> list[str]:
    """Dotted paths of every leaf of a mapping (a list is a leaf): `engine.resources.limits.cpu`, ..."""
    if not isinstance(node, dict):
        return [prefix]
    paths: list[str] = []
    for key, value in node.items():
        paths += key_paths(value, f"{prefix}.{key}" if prefix else str(key))
    return paths


__all__ = ["Accelerator", "ChartYaml", "ContainerResources", "Data", "Dependency", "EngineValues", "EnvValue",
           "Entrance", "FetchFile", "FixedEnv", "GPU_RESOURCE", "I18nManifest", "MODEL_SUPPORTS", "ManifestSpec",
           "Metadata", "ModeEngine", "ModeEnvelope", "ModeResources", "ModelCard", "ModelFetch", "OlaresManifest",
           "Owners", "ResourceList", "SettingEnv", "SharedEntrance", "SharedManifest", "SystemEnv", "Values",
           "key_paths"]
