"""App -> ChartSpec: every final value of a chart, computed here; templates only place them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from generator.catalog import Resolved
from generator.chart.parts import (MODEL_SUPPORTS, Accelerator, ChartYaml, ContainerResources, Dependency,
                                   EngineValues, Entrance, EnvValue, FetchFile, I18nManifest, ManifestSpec, Metadata,
                                   ModeEngine, ModeEnvelope, ModelCard, ModelFetch, ModeResources, OlaresManifest,
                                   Owners, ResourceList, SettingEnv, SharedEntrance, SharedManifest, SystemEnv, Values)
from generator.chart.gpumem import GpuMemory, gpu_memory
from generator.chart.profiles import PROFILES, Profile, get_profile
from generator.chart.shared import (API_KEY_ENV, CONTEXT_ENV, NUMBER_REGEX, OUTPUT_ENV, SharedEngine, explicit_slots,
                                    knobs_for, plan_engine)
from generator.core import InputError, Problem
from generator.engines import EngineSpec, Sized, engine_for
from generator.engines import CHAT_TEMPLATE_FILE
from generator.engines import Flag
from generator.engines import family_for
from generator.engines import Settings, decided
from generator.fit import largest_fitting, variant_on
from generator.fit import sized
from generator.schema import SOURCE_LOCALE

STARTUP_BUDGET_S = 3600  # first boot downloads the weights (docs/domain.md)
INIT_IMAGE = "docker.io/alpine:3.20"  # the maintainer's charts fetch GGUF files with it
CONTAINER = "engine"
# The modes whose GPU memory is HAMi's `nvidia.com/gpumem` (OAC gpuMemoryModes holds nvidia and amd-gpu; the catalog's
# devices are NVIDIA): on any other mode (nvidia-gb10) the GPU memory is the pod's memory, as beclab's charts set it
# (github.com/beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd llamacppqwen3627bmtpq4kxlv3/templates/llamacpp.yaml
# lines 16-28, 132-147: on nvidia-gb10 no gpumem, the memory request and limit are the GPU figure).
GPUMEM_MODES = ("nvidia",)


@dataclass(frozen=True)
class ModePlan:
    """One more accelerator mode of a per-mode chart: the device whose plan it carries (the first of the app's
    `devices:` in that mode that runs there), the variant as sized there and its engine."""

    mode: str
    device: str
    resolved: Sized
    engine: EngineSpec
    gpu: GpuMemory  # the scheduler request, the in-container cap and the engine's budget there (chart/gpumem.py)
    shared: SharedEngine | None = None  # the shared form's bounds on that device


@dataclass(frozen=True)
class ChartSpec:
    """Every final value of one app's chart, as typed parts (generator/chart/parts.py)."""

    name: str
    chart: ChartYaml
    manifest: OlaresManifest
    values: Values
    owners: Owners
    engine: EngineSpec
    resolved: Sized  # the app as planned: GPU memory (and vLLM utilization) filled in by the fit when left out
    settings: Settings  # the engine's effective settings, decided once (rules and explain read these)
    profile: Profile
    files: dict[str, str] = field(default_factory=dict)  # chart files shipped verbatim (the chat template)
    modes: tuple[ModePlan, ...] = ()  # per-mode charts (Profile.per_mode): the other modes, each on its device
    i18n: dict[str, I18nManifest] = field(default_factory=dict)  # locale -> i18n/<locale>/OlaresManifest.yaml
    gpu: GpuMemory | None = None  # the scheduler request, the in-container cap, the engine's budget (chart/gpumem.py)
    shared: SharedEngine | None = None  # the shared form (docs/forms.md): the app's own device's bounds


def k8s_literal(text: str) -> str:
    """Kubernetes expands `$(VAR)` in args and env values and turns `$$` into `$`: double every `$`."""
    return text.replace("$", "$$")


def _gpu_mib(r: Sized) -> int:
    """What the scheduler is asked for (chart/gpumem.py: at most the card, whatever the in-container cap)."""
    return gpu_memory(r, fitted=False).scheduler.mib


def whole_cores(quantity: str) -> str:
    """A CPU quantity in whole cores, rounded up (`4000m` -> `4`, `500m` -> `1`, `16` -> `16`)."""
    cores = float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)
    return str(max(1, math.ceil(cores - 1e-9)))


def _resources(r: Sized) -> ContainerResources:
    res = r.app.resources
    gpumem = _gpu_mib(r)
    return ContainerResources(requests=ResourceList(res.cpu_request, res.memory_request, gpumem),
                              limits=ResourceList(res.cpu_limit, res.memory_limit, gpumem))


def _values(r: Sized, spec: EngineSpec, shared: SharedEngine | None = None) -> Values:
    engine = EngineValues(
        image=spec.image, command=tuple(k8s_literal(c) for c in spec.command),
        args=tuple(k8s_literal(a) for a in spec.argv),
        env=tuple(EnvValue(e.name, k8s_literal(e.value)) for e in spec.env), port=spec.port,
        health_path=spec.health_path, startup_seconds=STARTUP_BUDGET_S, resources=_resources(r), shared=shared)
    files = tuple(FetchFile(d.repo, d.revision, d.file, d.path) for d in spec.downloads)
    return Values(workloads={r.app.name: 1}, engine=engine, model_fetch=ModelFetch(INIT_IMAGE, files))


def _accelerator(r: Sized, profile: Profile) -> Accelerator:
    res = r.app.resources
    gpu = f"{_gpu_mib(r)}Mi"
    cpu = whole_cores if profile.integer_cpu else str
    return Accelerator(required_cpu=cpu(res.cpu_request), limited_cpu=cpu(res.cpu_limit),
                       required_memory=res.memory_request,
                       limited_memory=res.memory_limit, required_disk=res.disk_request, limited_disk=res.disk_limit,
                       required_gpu_memory=gpu, limited_gpu_memory=gpu)


def _shared_engine(r: Resolved, spec: EngineSpec, settings: Settings,
                   largest: int) -> tuple[EngineSpec, Settings, SharedEngine]:
    """The shared form's engine (its slot count explicit), its settings (the slot count citing the flag written out)
    and bounds for `r` (planned) on its device; `largest`: the largest context the fit places there
    (generator/fit/devices.py `largest_fitting`)."""
    explicit = explicit_slots(r, spec, settings)
    bounds = plan_engine(r, explicit, settings, largest)
    if explicit is not spec:  # the slot flag appended: the setting now comes from it, as the engine reads it
        added = explicit.args[-1]
        name = knobs_for(r).slot_setting
        value = getattr(settings, name)
        source = Flag(added.tokens[0], added.tokens[1], added.origin, 0)
        settings = replace(settings, **{name: replace(value, source=source)})
    return explicit, settings, bounds


def _mode_plans(r: Sized, spec: EngineSpec, shared: bool = False) -> tuple[ModePlan, ...]:
    """Per mode other than the app's own, the first device of `devices:` in that mode the app runs on and the store
    targets (an excluded device, or one the store's market.yaml does not list, gives no mode). The app's own mode keeps
    the app's own device: one chart can only branch on the mode Olares injects, so desktop cards of the same mode share
    the own device's values. Part of the one pass (`plan`): each variant is settled and sized by the fit, decided and
    built by its engine, then planned here."""
    out: list[ModePlan] = []
    seen = {r.device.accelerator}
    for target in r.targets:
        mode = target.device.accelerator
        if mode in seen or not r.market.targets(target.device.id, r.device.id):
            continue  # one entry per mode; only the devices the store targets (catalog/market.yaml `devices:`)
        variant = variant_on(r, target.device.id)
        if variant is None:
            continue
        seen.add(mode)
        fitted = variant.app.gpu_memory_mib is None
        planned = sized(variant) if fitted else Sized(variant)
        engine = engine_for(planned)  # built once per mode, from the sized variant
        # the mounts come from app fields a `devices:` entry cannot override (engines/base.py `mounts`)
        assert engine.mounts == spec.mounts, f"{r.app.name}: {target.device.id} mounts differ"
        bounds = None
        if shared:  # the settings read before the fit's search of the largest context, the values planned after it
            settings = decided(planned)
            engine, _, bounds = _shared_engine(planned, engine, settings, largest_fitting(planned))
        gpu = gpu_memory(planned, fitted=fitted)
        out.append(ModePlan(mode, target.device.id, planned, engine, gpu, bounds))
    return tuple(out)


def _mode_values(m: ModePlan) -> ModeEngine:
    res = m.resolved.app.resources
    gpu = _gpu_mib(m.resolved)
    if m.mode in GPUMEM_MODES:
        resources = ModeResources(res.cpu_request, res.cpu_limit, res.memory_request, res.memory_limit, gpu)
    else:  # the GPU's memory is the pod's: request and limit the GPU figure (beclab's charts, GPUMEM_MODES)
        resources = ModeResources(res.cpu_request, res.cpu_limit, f"{gpu}Mi", f"{gpu}Mi", None)
    spec = m.engine
    return ModeEngine(image=spec.image, command=tuple(k8s_literal(c) for c in spec.command),
                      args=tuple(k8s_literal(a) for a in spec.argv),
                      env=tuple(EnvValue(e.name, k8s_literal(e.value)) for e in spec.env), port=spec.port,
                      health_path=spec.health_path, resources=resources,
                      files=tuple(FetchFile(d.repo, d.revision, d.file, d.path) for d in spec.downloads),
                      shared=m.shared)


def _mode_envelope(m: ModePlan, profile: Profile) -> ModeEnvelope:
    res = m.resolved.app.resources
    cpu = whole_cores if profile.integer_cpu else str
    gpu = f"{_gpu_mib(m.resolved)}Mi"
    if m.mode in GPUMEM_MODES:
        return ModeEnvelope(m.mode, cpu(res.cpu_request), cpu(res.cpu_limit), res.memory_request, res.memory_limit,
                            res.disk_request, res.disk_limit, gpu)
    return ModeEnvelope(m.mode, cpu(res.cpu_request), cpu(res.cpu_limit), gpu, gpu, res.disk_request,
                        res.disk_limit)


def _support_arch(r: Resolved, modes: tuple[ModePlan, ...]) -> tuple[str, ...]:
    """The CPU architectures of the modes' devices, amd64 first (every image of a mode publishes its device's CPU:
    generator/fit/devices.py excludes the device otherwise)."""
    found = {r.device.cpu_arch, *(m.resolved.device.cpu_arch for m in modes)}
    return tuple(sorted(found, key=lambda a: (a != "amd64", a)))


def _supports(r: Resolved, spec: EngineSpec) -> tuple[str, ...]:
    """MODEL_SUPPORTS from facts the chart already holds (docs/profiles.md "Router"):
    - vision: the app serves images (`vision: true`: the engine gets the mmproj / the multimodal limit);
    - tools: vLLM runs with `--enable-auto-tool-choice` and a `--tool-call-parser` (vLLM docs, tool calling);
      llama.cpp with `--jinja` (its docs/function-calling.md: tool calls need --jinja, a generic format
      serves any template);
    - thinking: vLLM runs a `--reasoning-parser` (vLLM docs, reasoning outputs). The catalog holds no
      reasoning fact for llama.cpp models, so a llama.cpp app declares none. SGLang declares neither yet."""
    from_argv = family_for(r.stack).supports(spec.argv)  # the family's `supports` (engines/interface.py)
    return tuple(s for s in MODEL_SUPPORTS if (r.app.vision if s == "vision" else s in from_argv))


def _i18n(r: Resolved, profile: Profile) -> dict[str, I18nManifest]:
    """i18n/<locale>/OlaresManifest.yaml for en-US (the app's own text) and each translation (olares-v3)."""
    if not profile.i18n:
        return {}
    app = r.app
    full = app.full_description or app.description
    out = {SOURCE_LOCALE: I18nManifest(app.title, app.description, full, app.upgrade_description)}
    for locale, t in sorted(app.i18n.items()):
        out[locale] = I18nManifest(t.title, t.description, t.full_description or full, None)
    return out


def _settings(bounds: SharedEngine) -> tuple[SettingEnv, ...]:
    """The manifest envs of the shared form (generator/chart/shared.py says how each reaches the engine)."""
    c = bounds.context
    output = {"--n-predict": " The engine answers this many tokens when a request names no max_tokens.",
              "--override-generation-config": " The engine caps every answer at it (vLLM max_new_tokens)."}
    out = [SettingEnv(CONTEXT_ENV, f"Context window in tokens per request. Empty: {c.default:,} (the app's own). "
                      f"At most {c.maximum:,}: {c.why}; a larger value is served as {c.maximum:,}.",
                      regex=NUMBER_REGEX),
           SettingEnv(OUTPUT_ENV, "Largest output a request may ask for, in tokens, at most the context window. "
                      "Empty: up to the context window." + (output.get(bounds.output_flag or "", "") if
                                                             bounds.output_flag else " The engine takes no such "
                                                             "setting: the value is the model card's."),
                      regex=NUMBER_REGEX)]
    if bounds.api_key_flag:
        out.append(SettingEnv(API_KEY_ENV, "API key the engine requires of every request (Authorization: Bearer). "
                              "Empty: none.", type="password"))
    return tuple(out)


def _shared_manifest(r: Resolved, bounds: SharedEngine) -> SharedManifest:
    app = r.app
    entrance = SharedEntrance(name=app.name, host=f"sharedentrances-{app.name}", title=app.title, icon=app.icon)
    return SharedManifest(entrance, _settings(bounds))


def _manifest(r: Sized, spec: EngineSpec, profile: Profile, modes: tuple[ModePlan, ...] = (),
              shared: SharedEngine | None = None) -> OlaresManifest:
    app = r.app
    locales = (SOURCE_LOCALE, *sorted(app.i18n)) if profile.i18n else (SOURCE_LOCALE,)
    return OlaresManifest(
        manifest_version=profile.manifest_version,
        metadata=Metadata(name=app.name, title=app.title, description=app.description, icon=app.icon,
                          version=app.version),
        entrances=(Entrance(name=app.name, port=spec.port, title=app.title, icon=app.icon),),
        workload_replicas={app.name: 1},
        spec=ManifestSpec(version_name=app.version, full_description=app.full_description or app.description,
                          upgrade_description=app.upgrade_description, developer=app.developer or app.owners[0],
                          submitter=app.submitter or app.owners[0], accelerator=(_accelerator(r, profile),),
                          locale=locales, website=app.website, source_code=app.source_code,
                          license=tuple((lic.text, lic.url) for lic in app.license),
                          support_arch=_support_arch(r, modes) if modes else ("amd64",),
                          modes=tuple(_mode_envelope(m, profile) for m in modes), shared=shared is not None),
        dependencies=(Dependency("olares", profile.olares_dependency, "system"),),
        envs=(SystemEnv("HF_ENDPOINT", profile.hf_endpoint_from, profile.env_flags),
              SystemEnv("HF_TOKEN", profile.hf_token_from, profile.env_flags)),
        model_card=ModelCard(app.model_alias, _card_supports(r, spec) if shared else _supports(r, spec)),
        profile=profile,
        shared=_shared_manifest(r, shared) if shared is not None else None,
    )


def _card_supports(r: Resolved, spec: EngineSpec) -> tuple[str, ...]:
    """The shared form's MODEL_SUPPORTS: the model card's (generator/chart/card.py), which also reads the chat
    template's thinking switch."""
    from generator.chart.card import capabilities

    return capabilities(r, spec)[0]


def _require_v3(r: Resolved, profile: Profile) -> None:
    """The shared form needs apiVersion v3 (manifest.md "shared": `apiVersion` must be 'v3')."""
    if profile.api_version != "v3":
        line = r.line("form") if r.app.form else None
        raise InputError([Problem(r.file if line else "catalog/market.yaml", line, "form",
                                  f"{r.app.name}: the shared form needs apiVersion v3 (Olares 1.12.6+), but the chart "
                                  f"profile is {profile.name}; render with profile olares-v3, or set `form: single`")])


def plan(r: Resolved, profile: Profile | str | None = None) -> ChartSpec:
    """Every final value of the app's chart. `profile`: the manifest profile (docs/profiles.md); by default the
    catalog's (catalog/market.yaml), a publish target may pass its own. An app that leaves its GPU memory out is
    sized by the fit first (generator/fit/sizing.py); `ChartSpec.resolved` is that sized app.

    The one pass from app to plan, each stage handed the previous one's typed result and none handed the app back
    after a later stage had it (tests/test_walk.py): the fit sizes the app (a stated GPU memory: nothing to size),
    its engine decides its settings and builds its argv once, the fit settles and sizes each other mode's variant
    (and, in the shared form, finds the largest context each fits), then the chart's values are planned from those."""
    chosen = get_profile(profile) if isinstance(profile, str) else profile or PROFILES[r.market.profile]
    shared = r.form == "shared"
    if shared and chosen.api_version != "v3":
        _require_v3(r, chosen)
    fitted = r.app.gpu_memory_mib is None
    planned = sized(r) if fitted else Sized(r)  # sized: decides the settings on the way, building no argv
    settings = decided(planned)
    spec = engine_for(planned)  # the app's argv, built once
    largest = largest_fitting(planned) if shared else 0
    modes = _mode_plans(planned, spec, shared) if chosen.per_mode and not chosen.flat_resources else ()
    return _chart(planned, settings, spec, chosen, modes, gpu_memory(planned, fitted=fitted),
                  _shared_engine(planned, spec, settings, largest) if shared else None)


def _chart(r: Sized, settings: Settings, spec: EngineSpec, chosen: Profile, modes: tuple[ModePlan, ...],
           gpu: GpuMemory, shared_form: tuple[EngineSpec, Settings, SharedEngine] | None) -> ChartSpec:
    """The chart's values from the pass's typed results (`plan`)."""
    shared = None
    if shared_form is not None:
        spec, settings, shared = shared_form
    app = r.app
    chart = ChartYaml(name=app.name, description=app.description.splitlines()[0], icon=app.icon, version=app.version,
                      app_version=app.version)
    files = {CHAT_TEMPLATE_FILE: r.chat_template.text} if r.chat_template is not None else {}
    values = _values(r, spec, shared)
    if modes:
        values = replace(values, modes=tuple((m.mode, _mode_values(m)) for m in modes))
    return ChartSpec(name=app.name, chart=chart, manifest=_manifest(r, spec, chosen, modes, shared), values=values,
                     owners=Owners(tuple(app.owners)), engine=spec, resolved=r, settings=settings,
                     profile=chosen, files=files,
                     i18n=_i18n(r, chosen), modes=modes, gpu=gpu, shared=shared)


__all__ = ["CONTAINER", "GPUMEM_MODES", "ChartSpec", "ModePlan", "k8s_literal", "plan", "whole_cores"]
