"""One chart -> one app of the catalog (plus the drafts it needs), with everything it could not map.

The result says, per fact of the chart, where it went: a field of the app (or of its stack or model), the
app's `extra_args` or `env` (kept, rendered again), or the app's `unmapped` list (kept for the record:
the catalog cannot express it, so a re-render will not have it). Nothing is dropped silently.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shlex
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any, cast

from pydantic import TypeAdapter, ValidationError

from generator.core.data import tuples
from generator.adapters.helm import CappedRenderer
from generator.catalog import Catalog, ChatTemplateFile, Resolved
from generator.chart.plan import whole_cores
from generator.chart.profiles import PROFILES, Profile
from generator.core.errors import CatalogError, InputError, Problem
from generator.core.redact import literal_secret, secret_name
from generator.core.text import safe_line
from generator.engines.base import CHAT_TEMPLATE_DIR, CHAT_TEMPLATE_FILE, SLOT_DIR
from generator.engines.family import Family, family, family_of, stack_engine
from generator.engines.readback import Launcher
from generator.fit.sizing import sized
from generator.flags.tables import FlagTable, FlagTables
from generator.importer import programs
from generator.importer.argv import Mapped, is_flag, map_argv
from generator.importer.drafts import Pool, StackDraft, slug
from generator.importer.helmview import Rendered, doc_key, env_mark, marked_envs, path_to, render_chart
from generator.importer.source import ChartFiles
from generator.importer.workload import (
    EnvEntry,
    Fetch,
    Launch,
    Lines,
    Origin,
    Pod,
    Token,
    Written,
    on_volume,
    pod_spec,
    read_pod,
)
from generator.lint.helm import Doc
from generator.lint.quantity import parse_quantity
from generator.yamlio.loader import Document
from generator.lint.values import olares_values
from generator.schema import App, GenesisRegistry, Stack
from generator.schema.app import PipPackage
from generator.schema.common import AppName
from generator.schema.engines import Declared

PIP_PACKAGE = TypeAdapter(PipPackage)  # the App schema's package spelling
APP_NAME = TypeAdapter(AppName)  # the App schema's name rule (generator/schema/common.py), the one name validator

HF_PLUMBING = ("HF_TOKEN", "HF_ENDPOINT", "HUGGING_FACE_HUB_TOKEN")
ROUTER_ENVS = ("MODEL_MODE", "MODEL_NAME", "MODEL_SUPPORTS")  # olares-v3's Router card (docs/profiles.md "Router")
HAMI_ENV = "CUDA_DEVICE_MEMORY_LIMIT_0"
# a literal secret is never copied into the catalog nor shown: secret-named env variables and flags (`--api-key` of
# llama-server and vLLM, `--hf-token`) and any value holding a token (core/redact.py `secret_name`, `literal_secret`)
CHART_HF_HOME = "/models"  # generator/engines/*.py: HF_HOME of every rendered chart
# where huggingface_hub and transformers cache downloads: HF_HOME and HF_HUB_CACHE
# (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables), HF_HUB_CACHE's older
# spelling HUGGINGFACE_HUB_CACHE (https://huggingface.co/docs/huggingface_hub/v0.12.0/package_reference/
# environment_variables) and transformers' TRANSFORMERS_CACHE (https://huggingface.co/docs/transformers/installation)
HF_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+")  # a Hugging Face repo id, owner/name
HF_CACHE_ENVS = ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE")
CHART_MODELS = "/models"  # generator/engines/base.py MODELS_DIR: where the rendered chart's files are
GPUMEM = "nvidia.com/gpumem"
STARTUP_BUDGET_S = 3600  # generator/chart/plan.py STARTUP_BUDGET_S
APP_KEYS = tuple(App.model_fields)
CHART_FIELDS = ("name", "title", "description", "full_description", "icon", "owners", "model", "quantization",
                "stack", "device", "context_length", "served_name", "kv_cache_type", "kv_cache_type_v", "speculative",
                "vision", "mmproj", "audio", "chat_template", "slot_save", "python_packages",
                "genesis_patches", "gpu_memory_mib", "gpu_memory_utilization", "resources", "env",
                "extra_args", "version", "upgrade_description", "unmapped", "form")
"""The app fields an import sets (the fields a chart determines, plus `unmapped`); `--update` changes only
these. Status, benchmarks, calibration, probe and the deprecation fields are not in a chart."""


@dataclass
class Imported:
    label: str
    name: str | None = None
    status: str = "error"  # ok, draft, unsupported, error
    profile: str | None = None
    engine: str | None = None
    stack: str | None = None
    stack_draft: bool = False
    model: str | None = None
    model_draft: bool = False
    app: dict[str, Any] | None = None  # the app file's data, in field order
    unmapped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unsupported: str | None = None
    problems: list[Problem] = field(default_factory=list)
    launcher: list[tuple[int | None, str]] = field(default_factory=list)  # (line, text) run before the engine
    gpu_memory_from: tuple[str, str] | None = None  # (figure, file:line) gpu_memory_mib was taken from
    carried: tuple[str, ...] = ()  # app fields the chart's catalog block sets (importer/carry.py); `--update` too
    app_notes: list[str] = field(default_factory=list)  # notes the written app file carries in its header

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.label, "name": self.name, "status": self.status, "profile": self.profile,
                "engine": self.engine, "stack": self.stack, "stack_draft": self.stack_draft, "model": self.model,
                "model_draft": self.model_draft, "unsupported": self.unsupported, "missing": self.missing,
                "unmapped": self.unmapped, "kept": self.kept, "notes": self.notes,
                "problems": [str(p) for p in self.problems], "app": self.app}


class _Ctx:
    def __init__(self, rendered: Rendered, result: Imported, renamed: Mapping[str, str] | None = None):
        self.r = rendered
        self.renamed: Mapping[str, str] = renamed or {}  # upstream name -> the catalog's (corrections `renamed`)
        self.lines = Lines(rendered)
        self.result = result
        self.profile: Profile = PROFILES[_profile(rendered.manifest)]  # the chart's own manifest profile
        self.handled_mounts: set[str] = set()  # volumes mapped to an app field (chat template, slot save)
        self.handled_maps: set[str] = set()  # ConfigMaps mapped to an app field (the chat template)
        self.handled_lines: set[int] = set()  # launcher-script lines mapped to an app field (pip install)
        self.handled_writes: set[Written] = set()  # files init containers write, mapped to an app field
        self.handled_env: dict[str, str] = {}  # env variables those files are written from (name: value)
        self.pod_writes: list[Written] = []  # every such file of the chart
        self.audio_image: bool | None = None  # vLLM: the image count of an audio app's --limit-mm-per-prompt
        self.packages_launcher = False  # the launcher script is the catalog's pip launcher
        self.stated: tuple[str, ...] = ()  # GPU memory fields the chart's catalog block says the app states

    def unmapped(self, origin: Origin | str, what: str) -> None:
        self.result.unmapped.append(f"{origin}: {what}")

    def note(self, origin: Origin | str, what: str) -> None:
        self.result.notes.append(f"{origin}: {what}")

    def kept(self, origin: Origin | str, what: str) -> None:
        self.result.kept.append(f"{origin}: {what}")

    def manifest_origin(self, *needles: str) -> Origin:
        return self.lines.origin("OlaresManifest.yaml", *needles)


def _perm(profile: Profile) -> str:
    return " and ".join(k for k, _ in profile.permission)


def _profile(manifest: dict[str, Any]) -> str:
    version = str(manifest.get("olaresManifest.version", ""))
    api = str(manifest.get("apiVersion", ""))
    if api == "v3" or version.startswith(("0.11", "0.12")):
        return "olares-v3"
    return "olares-v2"


# --- the engine container -----------------------------------------------------------------------------

def _prefix_matches(argv: list[Token], command: tuple[str, ...]) -> bool:
    if not command or len(argv) < len(command):
        return False
    if programs.basename(argv[0].text) != programs.basename(command[0]):
        return False
    return [t.text for t in argv[1:len(command)]] == list(command[1:])


def _family_prefix(argv: list[Token]) -> tuple[str, int] | None:
    """(family, launcher length) of an argv that starts an engine's launcher (importer/programs.py `launched`)."""
    return programs.launched([t.text for t in argv])


def _launcher(name: str) -> Launcher:
    """The family's launcher part (engines/readback.py `Launcher`): only families that have one are imported."""
    launcher = family(Family(name)).launcher
    assert launcher is not None, f"family {name} has no Launcher (generator/engines/{name}.py)"
    return launcher


def _declared(name: str) -> Declared:
    return family(Family(name)).declared


def _manifest_defaults(ctx: _Ctx, tokens: list[Token]) -> list[Token]:
    """An argument that is a whole manifest env (`<olaresEnv:ENGINE_ARGS>`) is that env's default, word-split
    as the launcher's unquoted `${ENGINE_ARGS:-}` does (beclab/apps sglangqwen359bawq4bitv3/templates/
    wrappers.yaml@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049: ENGINE_ARGS, "a cmdline-style string ...
    shell-word-split and appended after the --model-path / --served-model-name / --host / --port baseline"). Each
    word's origin is the env's line in the manifest; an env without a default stays a mark (unmapped later)."""
    out: list[Token] = []
    for token in tokens:
        found = _env_default(ctx, token.text)
        if found is None:
            out.append(token)
            continue
        name, default = found
        origin = ctx.manifest_origin(f"envName: {name}")
        try:
            words = shlex.split(default)
        except ValueError:
            words = default.split()
        out += [Token(word, origin, (name,)) for word in words]
    return out


def _env_default(ctx: _Ctx, text: str) -> tuple[str, str] | None:
    """(env, its manifest default) of a value that is one whole manifest env (`<olaresEnv:NAME>`), else None."""
    names = marked_envs(text)
    if len(names) != 1 or text.strip() != env_mark(names[0]):
        return None
    for env in ctx.r.manifest.get("envs") or ():
        if not isinstance(env, dict) or env.get("envName") != names[0]:
            continue
        if isinstance(env.get("default"), str | int | float):
            return names[0], str(env["default"])
    return None


def _engine_launch(pod: Pod, pool: Pool) -> tuple[Launch, str, int] | None:
    """(launch, family, program prefix length) of the one container that runs a supported engine."""
    found: list[tuple[Launch, str, int]] = []
    for launch in pod.launches:
        for stack in pool.stacks_with_image(launch.image):
            if _prefix_matches(launch.argv, tuple(stack.command)):
                family = family_of(stack)
                found.append((launch, family, len(stack.command)))
                break
        else:
            known = _family_prefix(launch.argv)
            if known:
                found.append((launch, known[0], known[1]))
    if len(found) > 1:
        names = ", ".join(f"{f[0].workload.label}/{f[0].name}" for f in found)
        raise InputError([Problem(str(found[1][0].argv[0].origin), None, None,
                                  f"two containers run an engine ({names}); a catalog app runs one")])
    return found[0] if found else None


def _choose_stack(pool: Pool, launch: Launch, family: str, prefix: int, port: int | None,
                  ctx: _Ctx) -> Stack | None:
    program = tuple(t.text for t in launch.argv[:prefix])
    best: tuple[int, Stack] | None = None
    for stack in pool.stacks_with_image(launch.image):
        engine_family = family_of(stack)
        if engine_family != family or (port is not None and stack.port != port):
            continue
        score = 0
        if tuple(stack.command) == program:
            score += 10
        elif stack.command and programs.basename(stack.command[0]) == programs.basename(program[0]):
            score += 5
        else:
            continue
        argv = [t.text for t in launch.argv[prefix:]]
        score += sum(1 for arg in stack.args if arg in argv)
        score += sum(1 for k, v in stack.env.items() if launch.env.get(k) and launch.env[k].value == v)
        if best is None or score > best[0]:
            best = (score, stack)
    if best is None:
        return None
    stack = best[1]
    if tuple(stack.command) != program:
        origin = launch.argv[0].origin
        if not launch.command_set:
            ctx.note(origin, f"the chart runs the image's entrypoint; stack {stack.id} states it as command "
                             f"{list(stack.command)}")
        else:
            ctx.unmapped(origin, f"the chart starts {' '.join(program)}; stack {stack.id} starts "
                                 f"{' '.join(stack.command)} (same program, another path)")
    return stack


def _table(cat: Catalog, stack: Stack | None) -> FlagTable | None:
    tables = FlagTables(cat.root)
    if stack is not None and stack.flag_table and tables.exists(stack.flag_table):
        try:
            return tables.get(stack.flag_table)
        except CatalogError:
            return None
    return None


# --- downloads --------------------------------------------------------------------------------------------

def _fetch_for(path: str, fetches: list[Fetch]) -> Fetch | None:
    for fetch in fetches:
        if fetch.dest and PurePosixPath(fetch.dest) == PurePosixPath(path):
            return fetch
    name = PurePosixPath(path).name
    for fetch in fetches:
        if fetch.dest is None and PurePosixPath(fetch.file).name == name:
            return fetch
    for fetch in fetches:
        if fetch.dest and PurePosixPath(fetch.dest).name == name:
            return fetch
    return None


# --- the app ------------------------------------------------------------------------------------------

def _hami_mib(value: str) -> int | None:
    match = re.fullmatch(r"([1-9][0-9]*)([kKmMgG]?)", value.strip())
    if not match:
        return None
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit == "m":
        return number
    if unit == "g":
        return number * 1024
    if unit == "k":
        return number // 1024 if number % 1024 == 0 else None
    return number // 2**20 if number % 2**20 == 0 else None


def _mib(value: Any) -> int | None:
    try:
        q = parse_quantity(value)
    except ValueError:
        return None
    mib = q / Decimal(2**20)
    return int(mib) if mib == int(mib) and mib > 0 else None


def _quantity(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if re.fullmatch(r"[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?", text) else None


def _resources(ctx: _Ctx, launch: Launch, app: dict[str, Any]) -> None:
    res = launch.container.get("resources") or {}
    requests, limits = res.get("requests") or {}, res.get("limits") or {}
    anchor = ctx.lines.container_anchor(launch.workload, launch.name)
    origin = ctx.lines.origin(launch.workload.source, "resources:", after=anchor)
    out = _container_resources(ctx, requests, limits, origin)
    _manifest_resources(ctx, out)
    defaults = App.model_fields["resources"].default.model_dump()
    missing = [k for k in defaults if k not in out]
    if missing:
        ctx.note(origin, "not set in the chart, the catalog default is used: "
                 + ", ".join(f"{k} {defaults[k]}" for k in missing))
    full = {**defaults, **out}
    app["resources"] = full


def _container_resources(ctx: _Ctx, requests: dict[str, Any], limits: dict[str, Any],
                         origin: Origin) -> dict[str, str]:
    """The container's CPU and memory requests and limits as catalog fields; other resources are unmapped."""
    out: dict[str, str] = {}
    for key, src, name in (("cpu_request", requests, "cpu"), ("cpu_limit", limits, "cpu"),
                           ("memory_request", requests, "memory"), ("memory_limit", limits, "memory")):
        if name in src:
            quantity = _quantity(src[name])
            if quantity is None and (found := _env_default(ctx, str(src[name]))) is not None:
                quantity = _quantity(found[1])  # a manifest env's default (beclab/apps SGLANG_CPU_REQUEST ...)
                if quantity is not None:
                    ctx.note(origin, f"resources {name} {quantity} is manifest env {found[0]}'s default")
            if quantity is None:
                ctx.unmapped(origin, f"resources {name} {src[name]!r} is not a quantity the catalog takes")
            else:
                out[key] = quantity
    for part, src in (("requests", requests), ("limits", limits)):
        for key, value in src.items():
            if key in ("cpu", "memory", GPUMEM):
                continue
            ctx.unmapped(origin, f"resources.{part}.{key}: {value} (the catalog requests GPU memory through "
                                 f"{GPUMEM} and HAMi)" if key.startswith("nvidia.com/") else
                         f"resources.{part}.{key}: {value} is not modelled")
    return out


def _manifest_resources(ctx: _Ctx, out: dict[str, str]) -> None:
    """The manifest's disk into `out`; its CPU and memory must match the container's (`out`)."""
    spec = ctx.r.manifest.get("spec") or {}
    flat = {k: spec.get(k) for k in ("requiredDisk", "limitedDisk", "requiredCpu", "limitedCpu", "requiredMemory",
                                     "limitedMemory", "requiredGpu", "limitedGpu") if k in spec}
    accel = next((a for a in spec.get("accelerator") or () if isinstance(a, dict)), None) if isinstance(
        spec.get("accelerator"), list) else None
    source = dict(flat)
    if accel:
        source.update({k: v for k, v in accel.items() if k != "mode"})
    for key, name in (("disk_request", "requiredDisk"), ("disk_limit", "limitedDisk")):
        if name in source:
            quantity = _quantity(source[name])
            if quantity is None:
                ctx.unmapped(ctx.manifest_origin(f"{name}:"), f"spec {name} {source[name]!r} is not a quantity")
            else:
                out[key] = quantity
    # the manifest's CPU and memory must match the container's (the catalog holds one value for both)
    for key, name in (("cpu_request", "requiredCpu"), ("cpu_limit", "limitedCpu"),
                      ("memory_request", "requiredMemory"), ("memory_limit", "limitedMemory")):
        if name in source and key in out:
            # olares-v2 writes whole cores (generator/chart/plan.py whole_cores: `1500m` -> `2`)
            theirs = whole_cores(out[key]) if ctx.profile.integer_cpu and key.startswith("cpu") else out[key]
            try:
                same = parse_quantity(str(source[name])) == parse_quantity(theirs)
            except ValueError:
                same = False
            if not same:
                ctx.unmapped(ctx.manifest_origin(f"{name}:"),
                             f"spec {name} {source[name]} differs from the container's {out[key]} (the catalog "
                             "writes the container's value in both)")


def _gpu_memory(ctx: _Ctx, launch: Launch, app: dict[str, Any]) -> None:
    candidates = _gpu_candidates(ctx, launch)
    if not candidates:
        unknown = _set_at_install(ctx, launch, ("resources", "limits", GPUMEM)) or _set_at_install(
            ctx, launch, ("resources", "requests", GPUMEM))
        if unknown:
            envs = ", ".join(unknown)
            ctx.result.missing.append(f"gpu_memory_mib: the chart computes {GPUMEM} from manifest env {envs}, which "
                                      "has no default (the user sets it at install); a catalog app states its GPU "
                                      "memory")
            return
        ctx.result.missing.append("gpu_memory_mib (the chart sets no CUDA_DEVICE_MEMORY_LIMIT_0, nvidia.com/gpumem "
                                  "or GPU memory in the manifest)")
        return
    label, mib, origin = candidates[0]
    app["gpu_memory_mib"] = mib
    ctx.result.gpu_memory_from = (label, str(origin))  # read by importer/__init__.py (issue 23)
    if not label.startswith(HAMI_ENV):
        ctx.note(origin, f"gpu_memory_mib {mib} from {label} (the chart sets no {HAMI_ENV}; the catalog renders one)")
    others = {value for _, value, _ in candidates[1:]}
    if label.startswith(HAMI_ENV) and len(others) == 1 and min(others) < mib:
        # one scheduler request below the in-container cap: a measured belt (generator/chart/gpumem.py, docs/devices.md
        # "Three numbers"), which the catalog renders from `measured:`, not a disagreement
        recorded = any(m.get("field") == "gpu_memory_mib" and str(m.get("value")).rstrip("m") == str(mib)
                       for m in app.get("measured") or ())
        ctx.note(candidates[1][2], f"the scheduler is asked for {min(others)} MiB, below the in-container cap "
                 f"{mib} MiB: a measured belt; " + ("its measurement comes from the chart's catalog block" if recorded
                                                    else "record its measurement in `measured:` (field "
                                                         "gpu_memory_mib)"))
        return
    for other, value, where in candidates[1:]:
        if value != mib and not other.startswith("spec requiredGpu"):
            ctx.unmapped(where, f"{other} ({value} MiB) differs from gpu_memory_mib {mib} taken from {label}")
        elif other.startswith("spec requiredGpu") and value != mib:
            ctx.unmapped(where, f"{other}: the catalog requests and limits the same GPU memory ({mib} MiB)")


def _set_at_install(ctx: _Ctx, launch: Launch, tail: tuple[str, ...]) -> tuple[str, ...]:
    """The manifest envs with no default (set at install) a container value is computed from (helmview
    `Rendered.unknown`); () when it is not."""
    where = path_to(launch.workload.body, launch.container)
    if where is None:
        return ()
    return ctx.r.unknown.get(doc_key(launch.workload), {}).get((*where, *tail), ())


def _gpu_candidates(ctx: _Ctx, launch: Launch) -> list[tuple[str, int, Origin]]:
    """Every GPU memory figure of the chart, first the one the catalog takes: (label, MiB, where)."""
    candidates: list[tuple[str, int, Origin]] = []
    hami = launch.env.get(HAMI_ENV)
    if hami is not None and hami.value is not None:
        mib = _hami_mib(hami.value)
        if mib is None:
            ctx.unmapped(hami.origin, f"{HAMI_ENV}={hami.value}: not a whole number of MiB")
        else:
            candidates.append((f"{HAMI_ENV} {hami.value}", mib, hami.origin))
    res = launch.container.get("resources") or {}
    anchor = ctx.lines.container_anchor(launch.workload, launch.name)
    for part in ("limits", "requests"):
        value = (res.get(part) or {}).get(GPUMEM)
        if value is not None and _set_at_install(ctx, launch, ("resources", part, GPUMEM)):
            continue  # computed from an env with no default: `_gpu_memory` says so
        if value is not None:
            try:
                mib = int(str(value))
                candidates.append((f"{GPUMEM} {part} {value}", mib, ctx.lines.origin(launch.workload.source,
                                                                                   GPUMEM, after=anchor)))
            except ValueError:
                ctx.unmapped(ctx.lines.origin(launch.workload.source, GPUMEM, after=anchor),
                             f"{GPUMEM} {value}: not a number of MiB")
    spec = ctx.r.manifest.get("spec") or {}
    accel = next((a for a in spec.get("accelerator") or () if isinstance(a, dict)), {}) \
        if isinstance(spec.get("accelerator"), list) else {}
    for name in ("limitedGPUMemory", "requiredGPUMemory", "limitedGpu", "requiredGpu"):
        value = accel.get(name, spec.get(name))
        if value is not None:
            mib = _mib(value)
            if mib is not None:
                candidates.append((f"spec {name} {value}", mib, ctx.manifest_origin(f"{name}:")))
    return candidates


def _env(ctx: _Ctx, launch: Launch, stack: Stack | None, family: str, consumed: set[str], cat: Catalog,
         app: dict[str, Any]) -> None:
    env: dict[str, str] = {}
    patches: list[str] = []
    stack_env = dict(stack.env) if stack is not None else {}
    genesis = cat.genesis if stack is not None and stack.fork == "genesis" else None
    kv: dict[str, str] = {}
    kv_env = _launcher(family).kv_env
    for name, entry in launch.env.items():
        value = entry.value
        if _env_left_out(ctx, name, entry, consumed) or value is None or _hf_cache_elsewhere(ctx, launch, name, entry):
            continue
        if name in kv_env:
            kv[name] = value
            continue
        patch = _genesis_patch(ctx, genesis, name, entry) if genesis is not None else None
        if patch is not None:
            patches.append(patch)
            continue
        if stack_env.get(name) == value:
            continue
        env[name] = value
        ctx.kept(entry.origin, f"env {name}")
    for name, value in stack_env.items():
        if name not in launch.env:
            ctx.note(stack.id if stack else "", f"stack {stack.id if stack else ''} sets env {name}={value}, which the "
                                                "chart does not; a re-render adds it")
    if kv:
        _kv_env(kv, kv_env, env, app)
    if patches:
        app["genesis_patches"] = patches
    if env:
        app["env"] = env


def _hf_cache_elsewhere(ctx: _Ctx, launch: Launch, name: str, entry: EnvEntry) -> bool:
    """A Hugging Face cache variable pointing outside the catalog's model cache (HF_HOME=/models on its `models`
    volume, generator/engines/*.py): left out, said. Kept, it would point the re-rendered engine at a folder no
    volume holds (the chart's own cache volume is not rendered), so every start would download the model into the
    container (beclab/apps sglangqwen359bawq4bitv3/templates/sglang.yaml sets HF_HOME=/cache/hf on its hf-cache
    hostPath for that reason)."""
    value = entry.value
    if name not in HF_CACHE_ENVS or value is None or PurePosixPath(value) == PurePosixPath(CHART_HF_HOME) \
            or PurePosixPath(value).is_relative_to(CHART_HF_HOME):
        return False
    mounts = tuple((str(m.get("mountPath") or ""), str(m.get("name") or ""))
                   for m in launch.container.get("volumeMounts") or () if isinstance(m, dict))
    volumes = sorted({vol for path, vol in mounts if path and (PurePosixPath(path).is_relative_to(value)
                                                               or PurePosixPath(value).is_relative_to(path))})
    where = f" (on volume {', '.join(volumes)}, not rendered)" if volumes else ""
    ctx.unmapped(entry.origin, f"env {name} {value}: the chart's Hugging Face cache{where}; a re-render caches the "
                               f"model under HF_HOME={CHART_HF_HOME}, its models volume")
    return True


def _download_dir_elsewhere(ctx: _Ctx, launch: Launch, mapped: Mapped) -> None:
    """`--download-dir` on a volume the catalog does not render (the second public store's
    nemotronlabselastic30bnvfp4one: `/shared-models/llms/huggingface` on a hostPath): left out, said, as a Hugging Face
    cache variable is (`_hf_cache_elsewhere`). Kept, every start would download the weights into the container;
    without it the engine downloads into the Hugging Face cache, HF_HOME=/models on the chart's models volume (vllm
    0.22.1 vllm/config/load.py `LoadConfig.download_dir`: "default to the default cache directory of Hugging Face";
    SGLang's `ServerArgs.download_dir`, catalog/flags/sglang-0-5-14.yaml, likewise). llama.cpp has no such flag."""
    taken = _take(mapped.extra, "--download-dir")
    if taken is None:
        return
    value, origin, start, count = taken
    if PurePosixPath(value).is_relative_to(CHART_HF_HOME):
        return
    mounts = [(str(m.get("mountPath") or ""), str(m.get("name") or ""))
              for m in launch.container.get("volumeMounts") or () if isinstance(m, dict)]
    volumes = sorted({name for path, name in mounts if path and PurePosixPath(value).is_relative_to(path)})
    where = f" (on volume {', '.join(volumes)}, not rendered)" if volumes else ""
    del mapped.extra[start:start + count]
    ctx.unmapped(origin, f"--download-dir {value}: the chart's download folder{where}; a re-render downloads into "
                         f"the Hugging Face cache, HF_HOME={CHART_HF_HOME}, its models volume")


def _env_left_out(ctx: _Ctx, name: str, entry: EnvEntry, consumed: set[str]) -> bool:
    """Whether the env var stays out of the app's `env` (said why where the chart loses something)."""
    if name in HF_PLUMBING:
        if entry.value is not None and not entry.olares and entry.via == "env" and name != "HF_ENDPOINT":
            ctx.note(entry.origin, f"{name}: a literal value in the chart is not imported (a secret); the catalog "
                                   "passes the token from Olares")
        return True
    if name == HAMI_ENV:
        return True
    if ctx.handled_env.get(name) == entry.value:
        return True  # what an init container writes the chat template from: the app's chat_template holds it
    if entry.value is None:
        ctx.unmapped(entry.origin, f"env {name} from {entry.via}: its value is not in the chart")
        return True
    if entry.olares:
        ctx.unmapped(entry.origin, f"env {name} renders from the manifest env(s) {', '.join(entry.olares)}; the "
                                   "catalog declares only the Hugging Face endpoint and token")
        return True
    if name == "HF_HOME" and entry.value == CHART_HF_HOME:
        return True
    if name in consumed and entry.via.startswith("configMap"):
        return True  # read by $(VAR) or the launcher script: its value is in the fields and args already
    secret = literal_secret(entry.value) or ("a literal secret" if secret_name(name) and entry.value else None)
    if secret:
        ctx.unmapped(entry.origin, f"env {name}: {secret} is not imported (set it in the cluster)")
        return True
    return False


def _genesis_patch(ctx: _Ctx, genesis: GenesisRegistry, name: str, entry: EnvEntry) -> str | None:
    """The Genesis patch the env var turns on (`NAME=1`), or None."""
    patch = genesis.by_env(name)
    if patch is None or entry.value != "1":
        return None
    if name != patch.env:
        ctx.note(entry.origin, f"{name} is an alias of Genesis patch {patch.id}; the catalog renders {patch.env}")
    return patch.id


def _kv_env(kv: dict[str, str], names: tuple[str, ...], env: dict[str, str], app: dict[str, Any]) -> None:
    """KV cache types the engine reads from its env (`Launcher.kv_env`, Lucebox's DFLASH27B_KV_K / _V): both set
    become kv_cache_type (and _v); one alone stays an env var."""
    k = kv.get(names[0])
    v = kv.get(names[1])
    if k and v:
        app["kv_cache_type"] = k
        if v != k:
            app["kv_cache_type_v"] = v
    else:
        env.update(kv)


def _consumed_vars(pod: Pod, launch: Launch) -> set[str]:
    """Env names that commands and launcher scripts read (`$(VAR)`, `$VAR`, `${VAR...}`)."""
    texts: list[str] = []
    for container in [launch.container, *[c for _, c, _ in pod.fetchers]]:
        texts += [str(x) for x in container.get("command") or ()]
        texts += [str(x) for x in container.get("args") or ()]
    blob = "\n".join(texts)
    names = set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", blob))
    names |= set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", blob))
    return names


def _meta(ctx: _Ctx, app: dict[str, Any]) -> None:
    manifest, chart = ctx.r.manifest, ctx.r.chart
    meta = manifest.get("metadata") or {}
    spec = manifest.get("spec") or {}
    _meta_names(ctx, app, meta, spec, chart)
    _meta_owners(ctx, app, spec)
    _meta_version(ctx, app, meta, spec, chart)


_SPEED = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*t/s\s*$")


def bento_benchmark(bento: Any, origin: str, today: dt.date, device: str | None = None,
                    named: bool = False) -> dict[str, Any] | None:
    """The measured hero speed of the maintainer's `metadata.bento` block (his scripts/build-catalog.js reads it:
    aamsellem/olares-one-market@39e2d0c7 scripts/build-catalog.js) as one benchmark of the app: `hero.value`
    `N t/s` the speed, `mtp.accept` (a percentage) the acceptance; no context (below). The block carries no date:
    `date` is the day the figure was read, said in `method`. None when the hero is not a speed (a SWE-bench
    score, an audio length). `method` quotes the label and says whose device the figure is for: `device` as the
    label names it (`named`), or the app's device taken for a label that names none (importer/bento.py)."""
    if not isinstance(bento, dict) or not isinstance(bento.get("hero"), dict):
        return None
    hero = bento["hero"]
    speed = _SPEED.match(str(hero.get("value", "")))
    if not speed or float(speed.group(1)) <= 0:
        return None
    bench: dict[str, Any] = {"tokens_per_s": float(speed.group(1))}
    caps: dict[str, Any] = bento["capabilities"] if isinstance(bento.get("capabilities"), dict) else {}
    mtp: dict[str, Any] = caps["mtp"] if isinstance(caps.get("mtp"), dict) else {}
    accept = mtp.get("accept")
    if mtp.get("enabled") and isinstance(accept, (int, float)) and not isinstance(accept, bool) and 0 < accept <= 100:
        bench["acceptance"] = round(float(accept) / 100, 4)
    # The context a hero label (`speed @ 262K`) or the `context` spec names is the server's --ctx-size, not the
    # prompt the speed was measured at (his notes: a short prompt, 2,000 tokens out): the benchmark records no
    # context, so the roofline holds it against an empty cache, the bound of any prompt (generator/fit/roofline.py).
    on = (f"a figure on {device}, as its label names it" if device and named else
          f"its label names no device: taken as a figure on the app's device {device}" if device else
          "its label names no device")
    bench.update({"date": today, "method": f"upstream's metadata.bento hero figure {hero.get('value')!s} "
                                          f"({hero.get('label')!s}), read on {today.isoformat()}: the chart's own "
                                          f"figure; {on} (prompt length not stated)",
                  "source": origin})
    return bench


def _meta_bento(ctx: _Ctx, cat: Catalog, app: dict[str, Any]) -> None:
    """The hero figure as the app's benchmark when its label names the app's device or none; a figure on another
    device (a catalog device or not) is left out of `benchmarks:` and said in unmapped (importer/bento.py)."""
    from generator.importer.bento import named_device

    meta = ctx.r.manifest.get("metadata") or {}
    line = ctx.manifest_origin("hero:").line
    origin = (f"upstream's chart {meta.get('name')} {meta.get('version')} OlaresManifest.yaml"
              f"{f':{line}' if line else ''} metadata.bento.hero")
    own = cat.devices.get(str(app.get("device")))
    bento: dict[str, Any] = meta["bento"] if isinstance(meta.get("bento"), dict) else {}
    hero: dict[str, Any] = bento["hero"] if isinstance(bento.get("hero"), dict) else {}
    named = named_device(str(hero.get("label") or ""), cat.devices.values(), own)
    bench = bento_benchmark(bento, origin, dt.date.today(), own.name if own else None, named is not None)
    if bench is None:
        return
    if named is not None and (own is None or named.device is None or named.device.id != own.id):
        what = (f"{named.device.id}, not the app's device {own.id if own else '(none)'}" if named.device else
                "not a catalog device")
        ctx.unmapped(ctx.manifest_origin("hero:"), f"metadata.bento.hero {hero.get('value')!s} "
                     f"({hero.get('label')!s}) is a figure on {named.words} ({what}): kept out of benchmarks, "
                     "which are the app's own device's figures")
        return
    app["benchmarks"] = [bench]


def _meta_names(ctx: _Ctx, app: dict[str, Any], meta: dict[str, Any], spec: dict[str, Any],
                chart: dict[str, Any]) -> None:
    """The app's name, title, description and icon from the manifest (and Chart.yaml's agreement)."""
    upstream = str(meta.get("name") or chart.get("name") or "")
    name = ctx.renamed.get(upstream, upstream)  # a chart the catalog renames (a name over 30 characters)
    _check_name(ctx, name)  # before anything is built from it: the import writes apps/<name>.yaml
    app["name"] = name
    ctx.result.name = name
    if name != upstream:
        ctx.note(ctx.manifest_origin("name:"), f"metadata.name {upstream!r} imported as {name!r} (the catalog's "
                                               "rename: catalog/corrections.yaml `renamed`)")
    if chart.get("name") != upstream:
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "name:"), f"Chart.yaml name {chart.get('name')!r} differs from "
                                                              f"metadata.name {upstream!r}")
    if meta.get("appid") not in (None, upstream):
        ctx.unmapped(ctx.manifest_origin("appid:"), f"metadata.appid {meta.get('appid')!r} differs from the name")
    for key, src in (("title", "title"), ("description", "description"), ("icon", "icon")):
        if meta.get(src) is not None:
            app[key] = str(meta[src])
    full = spec.get("fullDescription")
    if full is not None and str(full) != app.get("description"):
        app["full_description"] = str(full)


def _check_name(ctx: _Ctx, name: str) -> None:
    """The app name is the file name the import writes (`apps/<name>.yaml`, `drafts/apps/<name>.yaml`): it must be
    an Olares app name (the schema's `AppName`: lowercase letters and digits, a letter first, at most 30, not
    reserved) before any path is built from it, so `../../releases` or `/abs/path/X` never becomes a path."""
    try:
        APP_NAME.validate_python(name)
    except ValidationError as exc:
        why = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        origin = ctx.manifest_origin("name:") if ctx.r.manifest.get("metadata") else ctx.lines.origin("Chart.yaml",
                                                                                                     "name:")
        raise InputError([Problem(origin.where, origin.line, "metadata.name",
                                  f"{safe_line(repr(name), 80)} is not an Olares app name ({why}); the import names "
                                  "the app's file by it: give the chart a lowercase name of letters and digits, "
                                  "a letter first, at most 30 characters")]) from None


_HANDLE = re.compile(r"^[A-Za-z0-9-]{1,39}$")  # an owner is a GitHub handle (schema/app.py `owners`)


def _meta_owners(ctx: _Ctx, app: dict[str, Any], spec: dict[str, Any]) -> None:
    """The owners: the chart's owners file, else spec.developer, else spec.submitter (the first that is a GitHub
    handle: a developer named `Liquid AI` is a company, the store's submitter `coynntis` the person who answers)."""
    owners = list(ctx.r.owners)
    for key in ("developer", "submitter"):
        value = spec.get(key)
        if owners or value is None or not _HANDLE.match(str(value)):
            continue
        owners = [str(value)]
        why = "" if key == "developer" else f" (spec.developer {str(spec.get('developer'))!r} is not a GitHub handle)"
        ctx.note(ctx.manifest_origin(f"{key}:"), f"no owners file: owners taken from spec.{key}{why}")
    if owners:
        app["owners"] = owners
    for key in ("developer", "submitter"):
        if spec.get(key) is not None and owners and str(spec[key]) != owners[0]:
            app[key] = str(spec[key])
    _meta_links(ctx, app, spec)


def _meta_links(ctx: _Ctx, app: dict[str, Any], spec: dict[str, Any]) -> None:
    """spec.website, sourceCode and license (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e
    docs/developer/develop/package/manifest.md "Spec"): kept as the app's own fields."""
    for key, field_name in (("website", "website"), ("sourceCode", "source_code")):
        if isinstance(spec.get(key), str) and spec[key].startswith(("https://", "http://")):
            app[field_name] = spec[key]
        elif spec.get(key) is not None:
            ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"spec.{key} {spec[key]!r} is not an http(s) URL")
    licenses = spec.get("license")
    if isinstance(licenses, list):
        kept = [{"text": str(e["text"]), **({"url": str(e["url"])} if e.get("url") else {})}
                for e in licenses if isinstance(e, dict) and e.get("text")]
        if kept:
            app["license"] = kept
        if len(kept) != len(licenses):
            ctx.unmapped(ctx.manifest_origin("license:"), "a spec.license entry without `text` is not kept")


def _meta_version(ctx: _Ctx, app: dict[str, Any], meta: dict[str, Any], spec: dict[str, Any],
                  chart: dict[str, Any]) -> None:
    """The version and upgrade note; categories, Chart.yaml description and icon as the catalog writes them."""
    version = meta.get("version", chart.get("version"))
    if version is not None:
        app["version"] = str(version)
    if chart.get("version") is not None and str(chart.get("version")) != str(version):
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "version:"), f"Chart.yaml version {chart.get('version')} differs "
                                                                 f"from metadata.version {version}")
    if spec.get("upgradeDescription"):
        app["upgrade_description"] = str(spec["upgradeDescription"])
    if meta.get("categories") not in (None, ["AI"]):
        ctx.unmapped(ctx.manifest_origin("categories:"), f"metadata.categories {meta.get('categories')} (the catalog "
                                                         "writes [AI])")
    first_line = str(app.get("description", "")).splitlines()[0] if app.get("description") else ""
    if chart.get("description") not in (None, first_line):
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "description:"),
                     "Chart.yaml description differs from metadata.description (the catalog writes the app's "
                     "description in both)")
    if chart.get("icon") not in (None, app.get("icon")):
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "icon:"), "Chart.yaml icon differs from metadata.icon")


def _manifest_rest(ctx: _Ctx, app: dict[str, Any], port: int | None, stack: Stack | None) -> None:
    """Manifest facts the catalog renders its own way: each difference is recorded."""
    manifest = ctx.r.manifest
    spec = manifest.get("spec") or {}
    _manifest_entrances(ctx, manifest, app, port, stack)
    _manifest_spec(ctx, spec, stack)
    _manifest_options(ctx, manifest)
    _manifest_envs(ctx, manifest)
    _manifest_top(ctx, manifest)
    _manifest_i18n(ctx, app)


def _manifest_entrances(ctx: _Ctx, manifest: dict[str, Any], app: dict[str, Any], port: int | None,
                        stack: Stack | None) -> None:
    """The one entrance the catalog renders: its name, host, port, title and icon."""
    name, title, icon = app.get("name"), app.get("title"), app.get("icon")
    entrances = [e for e in manifest.get("entrances") or () if isinstance(e, dict)]
    if len(entrances) != 1:
        ctx.unmapped(ctx.manifest_origin("entrances:"), f"{len(entrances)} entrances (the catalog renders one)")
    for entrance in entrances[:1]:
        expect = {"name": name, "host": name, "port": stack.port if stack else port, "title": title, "icon": icon,
                  "openMethod": "window", "authLevel": "internal"}
        for key, want in expect.items():
            got = entrance.get(key)
            if got is not None and want is not None and str(got) != str(want):
                ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"entrances[0].{key} {got!r} (the catalog renders "
                                                             f"{want!r})")
        for key in sorted(set(entrance) - set(expect)):
            ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"entrances[0].{key}: {entrance[key]!r} is not modelled")
    if manifest.get("sharedEntrances"):
        ctx.unmapped(ctx.manifest_origin("sharedEntrances:"), "sharedEntrances are not modelled")


PER_MODE_NOTE = "another accelerator mode"  # what a chart of several modes cannot give back: the devices of each


def _manifest_spec(ctx: _Ctx, spec: dict[str, Any], stack: Stack | None) -> None:
    """spec fields: versionName, the keys the catalog models, locale and supportArch."""
    version_name = spec.get("versionName")
    version = (ctx.r.manifest.get("metadata") or {}).get("version")
    if version_name is not None and str(version_name) != str(version):
        ctx.unmapped(ctx.manifest_origin("versionName:"), f"spec.versionName {version_name!r} (the catalog renders the "
                                                          f"app's version {version!r})")
    known_spec = {"versionName", "fullDescription", "upgradeDescription", "developer", "submitter", "locale",
                  "website", "sourceCode", "license",
                  "supportArch", "onlyAdmin", "accelerator", "requiredDisk", "limitedDisk", "requiredCpu",
                  "limitedCpu", "requiredMemory", "limitedMemory", "requiredGpu", "limitedGpu"}
    for key in sorted(set(spec) - known_spec):
        ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"spec.{key} is not modelled")
    if spec.get("locale") not in (None, ["en-US"]):
        ctx.unmapped(ctx.manifest_origin("locale:"), f"spec.locale {spec.get('locale')} (the catalog writes [en-US])")
    modes = [str(a.get("mode")) for a in spec.get("accelerator") or () if isinstance(a, dict)] \
        if isinstance(spec.get("accelerator"), list) else []
    if len(modes) > 1:  # one chart for several accelerator modes (the catalog's `devices:`, docs/devices.md "Charts")
        ctx.unmapped(ctx.manifest_origin("accelerator:"),
                     f"{PER_MODE_NOTE}: spec.accelerator {', '.join(modes[1:])} and values.yaml modes (imported for "
                     f"the {modes[0]} entry; declare the other devices under `devices:`)")
    elif spec.get("supportArch") not in (None, ["amd64"]):
        ctx.unmapped(ctx.manifest_origin("supportArch:"), f"spec.supportArch {spec.get('supportArch')} (the catalog "
                                                          "writes [amd64])")


def _manifest_options(ctx: _Ctx, manifest: dict[str, Any]) -> None:
    """permission and options as the profile and the catalog write them."""
    permission = manifest.get("permission") or {}
    if permission and permission != dict(ctx.profile.permission):
        ctx.unmapped(ctx.manifest_origin("permission:"), f"permission {permission} (the {ctx.profile.name} profile "
                                                         f"asks for {_perm(ctx.profile)})")
    options = manifest.get("options") or {}
    derived = {"LLMGatewaySupported"} if ctx.profile.llm_gateway else set()  # the Router card: the plan derives it
    for key in sorted(set(options) - {"apiTimeout", "dependencies"} - derived):
        ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"options.{key} is not modelled")
    if options.get("apiTimeout") not in (None, 0):
        ctx.unmapped(ctx.manifest_origin("apiTimeout:"), f"options.apiTimeout {options.get('apiTimeout')} (the catalog "
                                                         "writes 0)")
    for dep in options.get("dependencies") or ():
        if isinstance(dep, dict) and dep.get("name") != "olares":
            ctx.unmapped(ctx.manifest_origin("dependencies:"), f"dependency {dep.get('name')} {dep.get('version')} is "
                                                               "not modelled")


def _manifest_envs(ctx: _Ctx, manifest: dict[str, Any]) -> None:
    """Manifest envs: only the Hugging Face endpoint and token, filled as the profile says."""
    hf_from = {"HF_ENDPOINT": ctx.profile.hf_endpoint_from, "HF_TOKEN": ctx.profile.hf_token_from}
    for env in manifest.get("envs") or ():
        if not isinstance(env, dict):
            continue
        env_name = str(env.get("envName", ""))
        source = (env.get("valueFrom") or {}).get("envName") if isinstance(env.get("valueFrom"), dict) else None
        if ctx.profile.llm_gateway and env_name in ROUTER_ENVS:
            continue  # the Router card (generator/chart/plan.py): derived from the app's own facts
        if not any(h in env_name for h in ("HUGGINGFACE", "HF_")):
            ctx.unmapped(ctx.manifest_origin(env_name), f"manifest env {env_name} is not modelled")
        elif env_name in hf_from and source is not None and source != hf_from[env_name]:
            ctx.unmapped(ctx.manifest_origin(env_name),
                         f"manifest env {env_name} from {source} (the {ctx.profile.name} profile fills it from "
                         f"{hf_from[env_name]})")


def _manifest_top(ctx: _Ctx, manifest: dict[str, Any]) -> None:
    """Top-level keys the catalog does not model; the manifest type."""
    known_top = {"olaresManifest.version", "olaresManifest.type", "apiVersion", "metadata", "entrances", "spec",
                 "permission", "options", "envs", "workloadReplicas", "sharedEntrances"}
    for key in sorted(set(manifest) - known_top):
        ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"{key} is not modelled")
    if manifest.get("olaresManifest.type") not in (None, "app"):
        ctx.unmapped(ctx.manifest_origin("olaresManifest.type"), f"olaresManifest.type "
                                                                 f"{manifest.get('olaresManifest.type')!r}")


def _manifest_i18n(ctx: _Ctx, app: dict[str, Any]) -> None:
    """Translations: the catalog writes none, so a differing one is recorded."""
    for locale, data in ctx.r.i18n.items():
        meta, ispec = data.get("metadata") or {}, data.get("spec") or {}
        rel = f"i18n/{locale}/OlaresManifest.yaml"
        for key, want in (("title", app.get("title")), ("description", app.get("description"))):
            if meta.get(key) is not None and str(meta[key]) != str(want):
                ctx.unmapped(ctx.lines.origin(rel, f"{key}:"), f"{locale} metadata.{key} differs from the manifest's "
                                                               "(the catalog writes no translations)")
        full = ispec.get("fullDescription")
        if full is not None and str(full) != str(app.get("full_description") or app.get("description")):
            ctx.unmapped(ctx.lines.origin(rel, "fullDescription:"), f"{locale} spec.fullDescription differs from the "
                                                                    "manifest's")


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


def _pod_workload(ctx: _Ctx, doc: Doc, spec: dict[str, Any], src: str) -> None:
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


def _unmapped_writes(ctx: _Ctx, doc: Doc, container: dict[str, Any]) -> list[Written]:
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
    for item in container.get("ports") or ():
        if isinstance(item, dict) and port is not None and item.get("containerPort") != port:
            ctx.unmapped(ctx.lines.origin(src, "containerPort", after=anchor),
                         f"containerPort {item.get('containerPort')} differs from the engine port {port}")
    startup = container.get("startupProbe") or {}
    path = ((startup.get("httpGet") or {}).get("path"))
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
        probe = container["livenessProbe"]
        ctx.unmapped(ctx.lines.origin(src, "livenessProbe", after=anchor),
                     f"livenessProbe ({(probe.get('httpGet') or {}).get('path', 'not HTTP')}, every "
                     f"{probe.get('periodSeconds', 10)} s, after {probe.get('initialDelaySeconds', 0)} s) is not "
                     "modelled")
    if container.get("imagePullPolicy"):
        ctx.unmapped(ctx.lines.origin(src, "imagePullPolicy", after=anchor),
                     f"imagePullPolicy {container['imagePullPolicy']}")


def _pod_mounts(ctx: _Ctx, launch: Launch, spec: dict[str, Any], src: str, anchor: int) -> None:
    """The engine's volume mounts: /models on the profile's weights folder; others are recorded."""
    container = launch.container
    volumes = {v.get("name"): v for v in spec.get("volumes") or () if isinstance(v, dict)}
    for mount in container.get("volumeMounts") or ():
        if not isinstance(mount, dict):
            continue
        volume = volumes.get(mount.get("name")) or {}
        kind = next((k for k in volume if k != "name"), "?")
        origin = ctx.lines.origin(src, str(mount.get("mountPath")), after=anchor)
        if mount.get("name") in ctx.handled_mounts:
            continue
        if mount.get("mountPath") == "/models":
            path = str((volume.get("hostPath") or {}).get("path", ""))
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
    used_maps = {str((s.get("configMapRef") or {}).get("name")) for s in container.get("envFrom") or ()
                 if isinstance(s, dict)}
    for _, c, _ in pod.fetchers:
        used_maps |= {str((s.get("configMapRef") or {}).get("name")) for s in c.get("envFrom") or ()
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


def _profile_note(ctx: _Ctx, wanted: Profile) -> None:
    """The chart is in another manifest profile than the catalog renders: say what a re-render changes."""
    ctx.note(ctx.manifest_origin("apiVersion:"),
             f"the chart is in the {ctx.profile.name} manifest profile (olaresManifest "
             f"{ctx.profile.manifest_version}, apiVersion {ctx.profile.api_version}); the catalog renders "
             f"{wanted.name} (catalog/market.yaml, docs/profiles.md): the manifest version, resource fields, "
             f"permission {_perm(wanted)}, weights folder and Hugging Face envs of a re-render follow it")


def _no_engine(result: Imported, pod: Pod, files: ChartFiles) -> Imported:
    """No container runs an engine the catalog imports: a known unsupported engine is a result, else InputError."""
    for launch in pod.launches:
        script = launch.argv[0].text if launch.script is None and launch.argv else ""
        script = "\n".join(str(x) for x in [*(launch.container.get("command") or ()),
                                            *(launch.container.get("args") or ())]) or script
        found = programs.unsupported(launch.image, launch.program, script)
        if found:
            return _unsupported(result, found)
    what = "; ".join(f"{launch.name} runs {launch.program or '(the image entrypoint)'} ({launch.image})"
                     for launch in pod.launches) \
        or "no Deployment or StatefulSet with a container"
    origin = pod.launches[0].argv[0].origin if pod.launches and pod.launches[0].argv else Origin(files.label, None)
    raise InputError([Problem(str(origin), None, None,
                              f"unknown engine: {what}; the catalog imports vLLM (`vllm serve`), llama.cpp "
                              "(`llama-server`) and Lucebox (`dflash_server`) apps")])


def import_chart(files: ChartFiles, cat: Catalog, pool: Pool, renderer: CappedRenderer | None = None,
                 renamed: Mapping[str, str] | None = None) -> Imported:
    """Read one chart into an app of `cat` (drafts go to `pool`). Raises InputError for what must stop the
    run (not a chart, unknown engine, missing value); an unsupported engine is a result, not an error.
    `renamed` maps an upstream app name to the catalog's (catalog/corrections.yaml `renamed`, read by sync)."""
    result = Imported(files.label)
    rendered = render_chart(files, renderer)
    ctx = _Ctx(rendered, result, renamed)
    for note in rendered.notes:
        result.notes.append(str(note))
    result.profile = ctx.profile.name
    if ctx.profile.name != cat.market.profile:
        _profile_note(ctx, PROFILES[cat.market.profile])
    app: dict[str, Any] = {}
    _meta(ctx, app)
    _carried(ctx, cat, files, app)
    pod = read_pod(rendered, ctx.lines)
    engine = _engine_launch(pod, pool)
    if engine is None:
        return _no_engine(result, pod, files)
    launch, family, prefix = engine
    if launch.problems or pod.problems:
        raise InputError(launch.problems + pod.problems)
    launch.argv = _manifest_defaults(ctx, launch.argv)
    result.engine = family
    result.launcher = [(o.line, t) for o, t in launch.pre_exec]  # read by importer/__init__.py (issue 23)
    tokens = launch.argv[prefix:]
    port_text = next((tokens[i + 1].text for i in range(len(tokens) - 1) if tokens[i].text == "--port"), None)
    port = int(port_text) if port_text and port_text.isdigit() else None
    stack = _choose_stack(pool, launch, family, prefix, port, ctx)
    draft_stack: StackDraft | None = None
    if stack is None:
        draft_stack = _draft_stack(pool, launch, family, prefix, port, app.get("name") or files.label)
        stack = _draft_stack_model(draft_stack)
    mapped = map_argv(family, tokens, _table(cat, stack if draft_stack is None else None), stack)
    if _declared(family).audio:  # speech recognition on vLLM is recognised by its model
        found = programs.unsupported(launch.image, launch.program, "",
                                     mapped.model_repo[0] if mapped.model_repo else None)
        if found:
            if draft_stack is not None:
                pool.stacks.pop(draft_stack.id, None)
            return _unsupported(result, found)
    result.stack = stack.id
    result.stack_draft = pool.is_draft_stack(stack.id)
    if draft_stack is not None and mapped.fields.get("speculative") and _launcher(family).own_speculative:
        method = mapped.fields["speculative"]["method"]
        draft_stack.data.setdefault("spec_methods", []).append(method)
        draft_stack.data.setdefault("speculative_args", {})[method] = []
    app["stack"] = stack.id
    ctx.pod_writes = pod.writes
    _features(ctx, launch, mapped, family, stack, pool, app, pod.writes)
    _download_dir_elsewhere(ctx, launch, mapped)
    _apply_argv(ctx, mapped, app, pool, family, pod.fetches)
    consumed = _consumed_vars(pod, launch)
    _env(ctx, launch, stack, family, consumed, cat, app)
    _gpu_memory(ctx, launch, app)
    _device(ctx, cat, app)  # by the GPU memory it needs
    _meta_bento(ctx, cat, app)  # the hero figure is the app's own device's, or none (importer/bento.py)
    _resources(ctx, launch, app)
    fetch_lines = {f.origin.line for f in pod.fetches if f.by == "launcher script"}
    _pre_exec(ctx, launch, {x for x in fetch_lines if x})
    _manifest_rest(ctx, app, port, stack)
    _pod_rest(ctx, pod, launch, stack.port, stack.health_path)
    for stray in mapped.stack_args_missing:
        ctx.note(f"stack {stack.id}", f"the stack's shared args include `{stray}`, which the chart does not pass; a "
                                      "re-render adds it")
    _finish(ctx, cat, mapped, app)
    _carry_modes(ctx, cat, files)
    return result


def _carried(ctx: _Ctx, cat: Catalog, files: ChartFiles, app: dict[str, Any]) -> None:
    """The fields the chart's catalog block carries (importer/carry.py), over what `_meta` read (a bento figure).
    A further device or stack this catalog has no file for is left out, with a note."""
    from generator.importer.carry import FIELDS, VALUES, carried

    found = carried(files)
    if found is None:
        return
    fields, ctx.stated, line = found
    entries = fields.get("devices")
    if isinstance(entries, list):
        known = [e for e in entries
                 if e.get("device") in cat.devices and ("stack" not in e or e["stack"] in cat.stacks)]
        for entry in (e for e in entries if e not in known):
            ctx.note(f"{files.where(VALUES)}:{line}", f"devices: {entry.get('device')} on stack "
                     f"{entry.get('stack') or 'of the app'}: the catalog has no devices/ or stacks/ file for it; "
                     "left out")
        fields["devices"] = known
        if not known:
            del fields["devices"]
    app.update(fields)
    for key in FIELDS:
        if key not in fields:
            app.pop(key, None)
    ctx.result.carried = FIELDS
    stated = f"; the app states {' and '.join(ctx.stated)} (not left to the fit)" if ctx.stated else ""
    ctx.note(f"{files.where(VALUES)}:{line}",
             f"{', '.join(fields) or 'nothing'} from the chart's catalog block{stated}")


def _carry_modes(ctx: _Ctx, cat: Catalog, files: ChartFiles) -> None:
    """A chart's other accelerator modes back as `devices:` entries when they render the chart again
    (importer/modes.py); else the PER_MODE_NOTE stays."""
    from generator.importer.modes import carry, renders

    result = ctx.result
    notes = [n for n in result.unmapped if PER_MODE_NOTE in n]
    spec = ctx.r.manifest.get("spec") or {}
    accel = spec.get("accelerator") if isinstance(spec, dict) else None
    if result.status != "ok" or result.app is None or len(notes) != 1 or not isinstance(accel, list):
        return
    modes = [str(a.get("mode")) for a in accel if isinstance(a, dict)]
    chart = {rel: text for rel in files.files if (text := files.text(rel)) is not None}
    left = [n for n in result.unmapped if n not in notes]
    app = {k: v for k, v in result.app.items() if k != "unmapped"} | ({"unmapped": left} if left else {})
    if "devices" in result.carried:  # the catalog block names the devices: kept when they render the chart again
        entries = app.get("devices") or []
        if not renders(cat, app, entries, chart, _resolved):
            return
    else:
        entries = carry(cat, app, chart, modes, _resolved)
    if not entries:
        return
    app["devices"] = entries
    result.app = {k: app[k] for k in APP_KEYS if k in app}
    result.unmapped = left
    ctx.note("devices", f"spec.accelerator {', '.join(modes[1:])}: {', '.join(e['device'] for e in entries)} "
                        "(the app with these entries renders the chart again)")


def _draft_stack_model(draft_stack: StackDraft) -> Stack:
    """The drafted stack as a Stack (unvalidated: the draft is incomplete), for mapping the app's argv."""
    return Stack.model_construct(**{"fork": "upstream", "version": "", **draft_stack.data,
                                    "command": tuple(draft_stack.data["command"]),
                                    "args": (), "env": {}, "speculative_args": {
                                        k: tuple(v) for k, v in draft_stack.data.get("speculative_args", {}).items()},
                                    "spec_methods": tuple(draft_stack.data.get("spec_methods", ()))})


def _finish(ctx: _Ctx, cat: Catalog, mapped: Mapped, app: dict[str, Any]) -> None:
    """The app document in the catalog's key order, validated; the result's notes and unmapped facts sorted."""
    result = ctx.result
    for note in mapped.notes:
        result.notes.append(str(note))
    result.unmapped.sort(key=_where_key)
    if result.unmapped:
        app["unmapped"] = list(result.unmapped)
    app.setdefault("status", "active")  # a chart has no status; a new app starts active (--update leaves it)
    ordered = {k: app[k] for k in APP_KEYS if k in app}
    _validate(ctx, ordered)
    if result.status == "ok":
        _omit_sized(ctx, cat, ordered)
    result.app = ordered


def _omit_sized(ctx: _Ctx, cat: Catalog, app: dict[str, Any]) -> None:
    """A GPU memory (and a vLLM utilization) equal to what the fit sizes is written as the catalog writes it:
    left out (generator/fit/sizing.py `sized`). The room the app leaves (`gpu_room`) and its measured calibration
    rows (`calibration`) are part of that sizing: the chart's catalog block's (importer/carry.py), else the existing
    app's. A number the block says the app states is kept."""
    existing = cat.apps.get(str(app.get("name")))
    room = existing.app.gpu_room if existing is not None and "gpu_room" not in ctx.result.carried else None
    calibration = existing.app.calibration if existing is not None and "calibration" not in ctx.result.carried \
        else None
    mib, util = app.get("gpu_memory_mib"), app.get("gpu_memory_utilization")
    # a chart's catalog block says which of them the app states (ctx.stated); without one, the catalog's app does
    block = bool(ctx.result.carried)
    if mib is None or "gpu_memory_mib" in ctx.stated or (
            not block and existing is not None and existing.app.gpu_memory_mib == mib):
        return  # the app states this very number: it is kept
    tries = [("gpu_memory_mib", "gpu_memory_utilization"), ("gpu_memory_mib",)] if util is not None \
        else [("gpu_memory_mib",)]
    if util is not None and ("gpu_memory_utilization" in ctx.stated or (
            not block and existing is not None and existing.app.gpu_memory_utilization == util)):
        tries = [("gpu_memory_mib",)]  # the utilization the app states is kept
    for left_out in tries:
        fields = {k: v for k, v in tuples(app).items() if k not in left_out}
        if room is not None and "gpu_room" not in fields:
            fields["gpu_room"] = room
        if calibration and "calibration" not in fields:
            fields["calibration"] = calibration
        candidate = App.model_validate(fields)
        r = _resolved(cat, candidate)
        if r is None:
            return
        filled = sized(r).app
        if filled.gpu_memory_mib == mib and filled.gpu_memory_utilization == util:
            for key in left_out:
                del app[key]
            ctx.note("gpu_memory_mib", f"{mib} MiB{f' and utilization {util}' if len(left_out) == 2 else ''} is what "
                                       "the fit sizes (generator/fit/sizing.py): left out, as the catalog writes it")
            return


def _resolved(cat: Catalog, app: App) -> Resolved | None:
    model, stack, device = cat.models.get(app.model), cat.stacks.get(app.stack), cat.devices.get(app.device)
    if model is None or stack is None or device is None:
        return None
    template: ChatTemplateFile | None = cat.chat_templates.get(app.chat_template) if app.chat_template else None
    return Resolved(app=app, model=model, stack=stack, device=device, genesis=cat.genesis, file=f"{app.name}.yaml",
                    doc=Document(Path(f"{app.name}.yaml"), {}), market=cat.market, chat_template=template)


def _unsupported(result: Imported, found: programs.Unsupported) -> Imported:
    result.status = "unsupported"
    result.unsupported = f"{found.kind}: {found.server} (recognised by {found.why})"
    result.unmapped, result.kept, result.app = [], [], None
    return result


def _where_key(entry: str) -> tuple[str, int]:
    match = re.match(r"^(.*?):([0-9]+): ", entry)
    return (match.group(1), int(match.group(2))) if match else (entry.split(": ", 1)[0], 0)


def _draft_stack(pool: Pool, launch: Launch, family: str, prefix: int, port: int | None, app: str) -> StackDraft:
    image = launch.image
    ref, tag = (image.rsplit(":", 1) if ":" in image.rsplit("/", 1)[-1] else (image, "latest"))
    repo = ref.rsplit("/", 1)[-1]
    guessed = [f"id and title from the image {image}"]
    engine, fork = stack_engine(cast(Family, family))
    data: dict[str, Any] = {"id": slug(f"{repo}-{tag}"), "title": f"{repo} {tag}"[:60], "engine": engine}
    upstream = image.startswith(programs.upstream_images())
    if fork is not None:
        data["fork"] = fork
    elif upstream:
        data["fork"] = "upstream"
        guessed.append("fork upstream from the image's publisher")
    data["image"] = image
    data["port"] = port or 8080
    if port is None:
        guessed.append("port 8080: the chart passes no --port")
    startup = (launch.container.get("startupProbe") or {}).get("httpGet") or {}
    data["health_path"] = str(startup.get("path") or "/health")
    data["command"] = [t.text for t in launch.argv[:prefix]]
    data["sources"] = [{"ref": str(launch.argv[0].origin), "note": "image and command of the imported chart"}]
    return pool.add_stack(data, guessed, app)


def _apply_argv(ctx: _Ctx, mapped: Mapped, app: dict[str, Any], pool: Pool, family: str,
                fetches: list[Fetch]) -> None:
    name = str(app.get("name") or ctx.result.label)
    fields = dict(mapped.fields)
    _argv_fields(ctx, mapped, fields, app, name, family)
    model_id, quant = _argv_model(ctx, mapped, pool, fetches, name)
    if model_id is not None:
        app["model"], app["quantization"] = model_id, quant
        ctx.result.model = model_id
    spec = fields.get("speculative")
    if spec is not None:
        app["speculative"] = _argv_speculative(ctx, mapped, pool, fetches, name, model_id, spec)
    if _declared(family).gguf and mapped.mmproj_path is not None:
        _argv_mmproj(ctx, mapped, pool, fetches, name, model_id, app)
    elif _declared(family).audio:
        _argv_vllm_vision(ctx, mapped, pool, model_id, app)
    # what stays: extra_args (never a literal secret)
    mapped.extra = _without_secrets(ctx, mapped.extra)
    extra = [t.text for t in mapped.extra]
    if extra:
        app["extra_args"] = extra
        _report_kept(ctx, mapped.extra)
    _model_files_in_extra(ctx, mapped, fetches)


def _argv_fields(ctx: _Ctx, mapped: Mapped, fields: dict[str, Any], app: dict[str, Any], name: str,
                 family: str) -> None:
    """The served name and the fields the argv sets directly; a missing context length is said."""
    served = fields.pop("served_name", None)
    if served is not None and _served_repo(ctx, mapped, served, name):
        served = None
    if served is not None and served != name:
        app["served_name"] = served
    for key in ("context_length", "kv_cache_type", "kv_cache_type_v", "gpu_memory_utilization"):
        if key in fields:
            app[key] = fields[key]
    if "context_length" not in app:
        flag = _launcher(family).context_flag
        ctx.result.missing.append(f"context_length (the chart passes no {flag})")


def _served_repo(ctx: _Ctx, mapped: Mapped, served: str, name: str) -> bool:
    """A served name the catalog's `served_name` cannot hold, said: one that is the model's Hugging Face repo id
    (the official SGLang charts pass `--served-model-name "$MODEL_NAME"`, the `--model-path` repo: beclab/apps
    sglangqwen359bawq4bitv3/templates/wrappers.yaml), one of a manifest env with no default, or another name with a
    `/`. The model is identified by that repo (`_argv_model`); a re-render serves the app's name."""
    origin = mapped.origins.get("served_name", "served_name")
    envs = marked_envs(served)
    if envs:
        ctx.unmapped(origin, f"--served-model-name is manifest env {', '.join(envs)}, which has no default (the user "
                             f"names the model at install); a re-render serves {name!r}")
        return True
    if "/" not in served:
        return False
    repo = mapped.model_repo[0] if mapped.model_repo is not None else None
    what = "the model's Hugging Face repo id (the model and weight are found by it)" if served == repo else \
        "a Hugging Face repo id" if HF_REPO.fullmatch(served) else "a name with a `/`"
    ctx.unmapped(origin, f"--served-model-name {served} is {what}; the catalog's served_name takes no `/` "
                         f"(generator/schema/app.py): a re-render serves {name!r}")
    return True


def _served_weight(ctx: _Ctx, mapped: Mapped, pool: Pool, path: str, origin: Origin,
                   name: str) -> tuple[str, str] | None:
    """(model id, quantization) of a weight the catalog (or a draft) has under the repo id the engine serves its
    model as (`--served-model-name org/repo`), when the engine loads a path the chart does not download; else None.
    A served name is a name, not a download: only a weight already known is taken, never a new draft."""
    served = mapped.fields.get("served_name")
    if not isinstance(served, str) or not HF_REPO.fullmatch(served) or pool.find_weight(served, None, None) is None:
        return None
    model_id, quant = _weight(ctx, pool, served, None, None, str(origin), name)
    ctx.unmapped(origin, f"the engine loads {path}; the model is found by the repo id it is served as, {served} "
                         f"(model {model_id}, weight {quant}): a re-render downloads that repo")
    return model_id, quant


def _argv_model(ctx: _Ctx, mapped: Mapped, pool: Pool, fetches: list[Fetch],
                name: str) -> tuple[str | None, str | None]:
    """(model id, quantization) of the weights the engine serves: a Hugging Face repo, a file the chart
    downloads, or `-hf`; (None, None) with what is missing said."""
    model_id = quant = None
    if mapped.model_repo is not None:
        repo, origin = mapped.model_repo
        if envs := marked_envs(repo):
            ctx.result.missing.append(f"model: the engine serves manifest env {', '.join(envs)}, which has no default "
                                      "(the user names the model at install); a catalog app serves one model: "
                                      f"set {envs[0]}'s default to a Hugging Face repo id")
            ctx.unmapped(origin, f"the engine serves {repo}, set at install")
        elif not HF_REPO.fullmatch(repo):
            found = _served_weight(ctx, mapped, pool, repo, origin, name)
            if found is not None:
                return found
            ctx.result.missing.append(f"model: {repo} is not a Hugging Face repo id (a local path?)")
            ctx.unmapped(origin, f"the engine serves {repo}, not a Hugging Face repo")
        else:
            model_id, quant = _weight(ctx, pool, repo, None, mapped.model_revision, str(origin), name)
    elif mapped.model_path is not None:
        path, origin = mapped.model_path
        fetch = _fetch_for(path, fetches)
        if fetch is None and (found := _served_weight(ctx, mapped, pool, path, origin, name)) is not None:
            return found
        if fetch is None:
            ctx.result.missing.append(f"model: {path} is not downloaded by the chart (no curl/wget or fetch container "
                                      "names it), so its Hugging Face repo is unknown")
            ctx.unmapped(origin, f"model file {path} comes from outside the chart")
        else:
            model_id, quant = _weight(ctx, pool, fetch.repo, fetch.file, fetch.revision, str(fetch.origin), name)
            if fetch.by != "init container model-fetch":
                ctx.note(fetch.origin, f"{fetch.file} is downloaded by the {fetch.by}; the catalog's init container "
                                       f"fetches it to /models/{fetch.repo}/{fetch.file}")
    elif mapped.hf_repo is not None:
        text, origin = mapped.hf_repo
        repo, _, tag = text.partition(":")
        if mapped.hf_file:
            model_id, quant = _weight(ctx, pool, repo, mapped.hf_file, None, str(origin), name)
            ctx.note(origin, "the engine downloads the model itself (-hf); the catalog's init container fetches it")
        else:
            ctx.result.missing.append(f"model: -hf {text} names no file (the engine picks one by the tag {tag!r}); "
                                      "add the GGUF file to a model of the catalog")
            ctx.unmapped(origin, f"-hf {text}")
    else:
        ctx.result.missing.append("model: the engine's argv names no model")
    return model_id, quant


def _argv_speculative(ctx: _Ctx, mapped: Mapped, pool: Pool, fetches: list[Fetch], name: str,
                      model_id: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    """The speculative field, with its drafter (found in the model, or drafted) when the argv names one."""
    drafter = None
    if mapped.drafter_repo is not None and model_id is not None:
        drafter = pool.find_drafter(model_id, mapped.drafter_repo, None) or pool.add_drafter(
            model_id, spec["method"], mapped.drafter_repo, None, str(mapped.origins.get("speculative", "")), name)
    elif mapped.drafter_path is not None and model_id is not None:
        path, origin = mapped.drafter_path
        fetch = _fetch_for(path, fetches)
        if fetch is None:
            ctx.result.missing.append(f"speculative.drafter: {path} is not downloaded by the chart")
        else:
            drafter = pool.find_drafter(model_id, fetch.repo, fetch.file) or pool.add_drafter(
                model_id, spec["method"], fetch.repo, fetch.file, str(fetch.origin), name)
    if drafter:
        spec = {**spec, "drafter": drafter}
        known = pool.cat.models.get(model_id or "")
        if known is None or known.drafter(drafter) is None:
            ctx.result.model_draft = True
            ctx.result.missing.append(f"model {model_id}: drafter {drafter} is a draft "
                                      f"(drafts/models/{model_id}.yaml)")
    return spec


def _argv_mmproj(ctx: _Ctx, mapped: Mapped, pool: Pool, fetches: list[Fetch], name: str, model_id: str | None,
                 app: dict[str, Any]) -> None:
    """llama.cpp's `--mmproj`: the model's projector (found or drafted), else kept in extra_args."""
    assert mapped.mmproj_path is not None, "_apply_argv calls it for a --mmproj only"
    path, origin = mapped.mmproj_path
    fetch = _fetch_for(path, fetches)
    if fetch is None or model_id is None:
        ctx.result.missing.append(f"vision projector {path}: not downloaded by the chart")
        ctx.kept(origin, f"extra_args --mmproj {path}")
        mapped.extra += [Token("--mmproj", origin), Token(path, origin)]
    else:
        if not pool.mmproj_matches(model_id, fetch.repo, fetch.file):
            problem = pool.set_mmproj(model_id, fetch.repo, fetch.file, str(fetch.origin), name)
            if problem:
                ctx.result.missing.append(f"vision: {problem}")
        known = pool.cat.models.get(model_id)
        variant = None if known is None else next(
            (p for p in known.projectors() if (p.repo, p.file) == (fetch.repo, fetch.file)), None)
        if variant is not None and variant is not known.mmproj:  # type: ignore[union-attr]
            app["mmproj"] = variant.quant  # one of the model's other projectors
        if variant is None:
            ctx.result.model_draft = True
            ctx.result.missing.append(f"model {model_id}: the vision projector is a draft "
                                      f"(drafts/models/{model_id}.yaml)")
        app["vision"] = True


def _argv_vllm_vision(ctx: _Ctx, mapped: Mapped, pool: Pool, model_id: str | None, app: dict[str, Any]) -> None:
    """vLLM (the family whose builder writes `audio`, generator/schema/engines.py): vision from the audio image's
    flags or the model's architecture, or the olares-v3 Router card's MODEL_SUPPORTS (generator/chart/plan.py writes
    `vision` from the app's own flag); audio needs an audio encoder."""
    card = _card_vision(ctx.r.manifest)
    if card is not None:  # the card says it outright; the heuristics below only guess
        if card:
            app["vision"] = True
        model = pool.cat.models.get(model_id or "")
        if ctx.audio_image is not None and model is not None and not model.architecture.audio:
            ctx.result.missing.append(f"audio: model {model_id} has no audio encoder (architecture.audio)")
        return
    if ctx.audio_image is not None:
        if ctx.audio_image:
            app["vision"] = True
        model = pool.cat.models.get(model_id or "")
        if model is not None and not model.architecture.audio:
            ctx.result.missing.append(f"audio: model {model_id} has no audio encoder (architecture.audio)")
    elif model_id is not None:
        model = pool.cat.models.get(model_id)
        arch_vision = bool(model and model.architecture.vision)
        text = " ".join(t.text for t in mapped.extra)
        if arch_vision and "--language-model-only" not in text and not re.search(r'"image"\s*:\s*0', text):
            app["vision"] = True


def _card_vision(manifest: Any) -> bool | None:
    """Whether the manifest's MODEL_SUPPORTS lists vision; None without one."""
    envs = manifest.get("envs") if isinstance(manifest, dict) else None
    for env in envs if isinstance(envs, list) else ():
        if isinstance(env, dict) and env.get("envName") == "MODEL_SUPPORTS":
            return "vision" in str(env.get("default", "")).split(",")
    return None


def _without_secrets(ctx: _Ctx, tokens: list[Token]) -> list[Token]:
    """The tokens without secret flags and their values (each one recorded as not imported)."""
    kept: list[Token] = []
    skip = False
    for index, token in enumerate(tokens):
        head = token.text.split("=", 1)[0]
        if skip:
            skip = False
            continue
        if is_flag(head) and secret_name(head):
            ctx.unmapped(token.origin, f"{head}: a literal secret is not imported (set it in the cluster)")
            nxt = tokens[index + 1].text if index + 1 < len(tokens) else None
            skip = "=" not in token.text and nxt is not None and not is_flag(nxt)
            continue
        secret = literal_secret(token.text)
        if secret:  # a URL with `?token=hf_...`: the value goes, and the flag it belongs to
            flag = kept.pop().text if kept and is_flag(kept[-1].text) and not is_flag(token.text) else None
            ctx.unmapped(token.origin, f"{flag or 'an argument'}: {secret} is not imported (set it in the cluster)")
            continue
        kept.append(token)
    return kept


def _model_files_in_extra(ctx: _Ctx, mapped: Mapped, fetches: list[Fetch]) -> None:
    """A kept argument that reads a file under the models folder the rendered chart does not provide."""
    for index, token in enumerate(mapped.extra):
        if token.text.startswith(CHART_MODELS + "/") and "." in PurePosixPath(token.text).name:  # a file
            flag = mapped.extra[index - 1].text if index and is_flag(mapped.extra[index - 1].text) else "an argument"
            fetch = _fetch_for(token.text, fetches)
            source = (f"the chart's {fetch.by} downloads it from {fetch.repo}" if fetch
                      else "a script or init container of the chart writes it")
            ctx.result.missing.append(f"extra_args: {flag} {token.text} ({token.origin}) reads a file under "
                                      f"{CHART_MODELS} that the rendered chart does not provide ({source}); map it "
                                      "(a drafter or projector of the model, a stack's speculative_args) or drop it")


# --- the features a chart spells as arguments, volumes and a launcher (generator/engines/base.py) ------------

def _take(tokens: list[Token], flag: str) -> tuple[str, Origin, int, int] | None:
    """(value, origin, start, count) of the first `flag VALUE` / `flag=VALUE` in `tokens`."""
    for index, token in enumerate(tokens):
        if token.text == flag and index + 1 < len(tokens):
            return tokens[index + 1].text, token.origin, index, 2
        if token.text.startswith(flag + "="):
            return token.text.split("=", 1)[1], token.origin, index, 1
    return None


def _written_for(launch: Launch, path: str, writes: list[Written]) -> Written | None:
    """The file an init container of the engine's pod writes at the engine's `path`: the same file of the same
    volume (mount paths and subPaths followed)."""
    mounts = tuple((str(m.get("mountPath") or ""), str(m.get("name") or ""), str(m.get("subPath") or ""))
                   for m in launch.container.get("volumeMounts") or () if isinstance(m, dict))
    wanted = on_volume(mounts, path) if path.startswith("/") else None
    workload = (launch.workload.source, launch.workload.name)
    if wanted is None:
        return None
    found = [w for w in writes if w.workload == workload and on_volume(w.mounts, w.path) == wanted]
    return found[-1] if found else None  # the last write wins


def _mount_at(launch: Launch, folder: str) -> tuple[str, dict[str, Any]] | None:
    """(volume name, volume) of the engine container's mount at `folder`."""
    volumes = {v.get("name"): v for v in pod_spec(launch.workload).get("volumes") or () if isinstance(v, dict)}
    for mount in launch.container.get("volumeMounts") or ():
        if isinstance(mount, dict) and str(mount.get("mountPath", "")).rstrip("/") == folder.rstrip("/"):
            name = str(mount.get("name"))
            return name, volumes.get(name) or {}
    return None


def _features(ctx: _Ctx, launch: Launch, mapped: Mapped, family: str, stack: Stack, pool: Pool,
              app: dict[str, Any], writes: list[Written]) -> None:
    """`chat_template`, `slot_save`, `audio` and `python_packages`: each back from the spelling the catalog
    renders; what differs from it stays in `extra_args` / `unmapped` as before."""
    extra = mapped.extra
    flag = _launcher(family).chat_template_flag
    found = _take(extra, flag) if flag else None
    write = _written_for(launch, found[0], writes) if found is not None else None
    if found is not None and write is not None and write.text is not None:
        path, origin, start, count = found
        how = "decoding it with base64 -d" if write.how == "base64" else "as is"
        template_id = _chat_template(ctx, pool, write.text, str(write.value_origin),
                                     str(app.get("name") or ctx.result.label))
        app["chat_template"] = template_id
        ctx.handled_writes.add(write)
        ctx.handled_env[write.var] = write.value
        del extra[start:start + count]
        ctx.note(write.origin, f"init container {write.container} writes {write.path} from env {write.var} "
                               f"({how}), which {flag} reads: chat_template {template_id}; the catalog mounts it "
                               f"from a ConfigMap at {CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}")
        found = None
    if found is not None:
        path, origin, start, count = found
        folder, _, key = path.rpartition("/")
        mount = _mount_at(launch, folder) if folder else None
        map_name = str((mount[1].get("configMap") or {}).get("name")) if mount and isinstance(
            mount[1].get("configMap"), dict) else None
        doc = next((d for d in ctx.r.docs if d.kind == "ConfigMap" and d.name == map_name), None)
        data = (doc.body.get("data") or {}) if doc is not None else {}
        if mount is not None and map_name is not None and isinstance(data.get(key), str):
            text = data[key]
            where = ctx.lines.origin(doc.source, key) if doc is not None else origin
            template_id = _chat_template(ctx, pool, text, str(where), str(app.get("name") or ctx.result.label))
            app["chat_template"] = template_id
            ctx.handled_mounts.add(mount[0])
            ctx.handled_maps.add(map_name)
            del extra[start:start + count]
            if path != f"{CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}":
                ctx.note(origin, f"{flag} {path}: the catalog mounts the chat template at "
                                 f"{CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}")
    if _declared(family).slot_save:
        found = _take(extra, "--slot-save-path")
        mount = _mount_at(launch, found[0]) if found is not None else None
        if found is not None and mount is not None and "emptyDir" in mount[1]:
            path, origin, start, count = found
            app["slot_save"] = True
            ctx.handled_mounts.add(mount[0])
            del extra[start:start + count]
            if path.rstrip("/") != SLOT_DIR:
                ctx.note(origin, f"--slot-save-path {path}: the catalog mounts its emptyDir at {SLOT_DIR}")
    if _declared(family).audio:
        found = _take(extra, "--limit-mm-per-prompt")
        if found is not None:
            try:
                limits = json.loads(found[0])
            except ValueError:
                limits = None
            # generator/engines/vllm.py renders {"image": 1 if vision else 0, "audio": 1}
            if isinstance(limits, dict) and set(limits) == {"image", "audio"} and limits["audio"] == 1 \
                    and limits["image"] in (0, 1) and not isinstance(limits["image"], bool):
                app["audio"] = True
                ctx.audio_image = bool(limits["image"])
                del extra[found[2]:found[2] + found[3]]
    _packages(ctx, launch, stack, app)


PIP_LAUNCHER = re.compile(r'^pip install --quiet ((?:[A-Za-z0-9][A-Za-z0-9._=+!-]* )+)&& exec (.+) "\$@"$')


def _packages(ctx: _Ctx, launch: Launch, stack: Stack, app: dict[str, Any]) -> None:
    """The pip launcher generator/engines/base.py `command` writes: `sh -c 'pip install --quiet PKG... && exec
    <stack command> "$@"' --`."""
    command = [str(x) for x in launch.container.get("command") or ()]
    if launch.script is None or len(command) != 4 or command[:2] != ["sh", "-c"] or command[3] != "--":
        return
    match = PIP_LAUNCHER.match(command[2].replace("$$", "$").strip())
    if not match or match.group(2) != shlex.join(stack.command):
        return
    packages = match.group(1).split()
    try:
        for package in packages:
            PIP_PACKAGE.validate_python(package)
    except ValidationError:
        return
    app["python_packages"] = packages
    ctx.handled_lines |= {o.line for o, t in launch.pre_exec if t.startswith("pip install") and o.line}
    ctx.packages_launcher = True


def _chat_template(ctx: _Ctx, pool: Pool, text: str, ref: str, app: str) -> str:
    """The catalog's chat template with these bytes (by sha256), else a draft of one."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    known = next((t for t in pool.cat.chat_templates.values() if t.meta.sha256 == digest), None)
    if known is not None:
        return known.meta.id
    template_id = pool.add_chat_template(text, digest, ref, app)
    ctx.result.missing.append(f"chat_template {template_id}: a draft (drafts/chat_templates/{template_id}.yaml), "
                              "say what it changes (`purpose`) and move it with its .jinja to chat_templates/")
    return template_id


def _report_kept(ctx: _Ctx, tokens: list[Token]) -> None:
    group: list[Token] = []
    for token in tokens + [Token("--", Origin("", None))]:
        if is_flag(token.text) or token.text == "--":
            if group:
                text = " ".join(t.text if len(t.text) <= 60 else t.text[:57] + "..." for t in group)
                ctx.kept(group[0].origin, f"extra_args {text}")
            group = [token]
        else:
            group.append(token)


def _weight(ctx: _Ctx, pool: Pool, repo: str, file: str | None, revision: str | None, ref: str,
            app: str) -> tuple[str, str]:
    found = pool.find_weight(repo, file, revision)
    if found:
        model_id, quant, in_catalog = found
        if not in_catalog:
            ctx.result.model_draft = True
            ctx.result.missing.append(f"model {model_id}: weight {quant} is a draft (drafts/models/{model_id}.yaml)"
                                      + _draft_lacks(pool, model_id))
        return model_id, quant
    model_id, quant, how = pool.add_weight(repo, file, revision, ref, app)
    ctx.result.model_draft = True
    what = "a new model" if how == "new model" else f"weight {quant} {how}"
    ctx.result.missing.append(f"model {model_id}: {what} — complete drafts/models/{model_id}.yaml"
                              + _draft_lacks(pool, model_id))
    return model_id, quant


def _draft_lacks(pool: Pool, model_id: str) -> str:
    """What a drafted model lacks, said in the app's reason: facts no chart states (the architecture of the
    model's config.json, the weight's size, their sources)."""
    lacks = pool.models[model_id].missing()[0] if model_id in pool.models else []
    return f"; it lacks {', '.join(lacks)}" if lacks else ""


def _device(ctx: _Ctx, cat: Catalog, app: dict[str, Any]) -> None:
    own = app.pop("device", None)  # the chart's catalog block names it (importer/carry.py)
    if own in cat.devices:
        app["device"] = own
        return
    if own is not None:
        ctx.note("device", f"the chart's catalog block names device {own}, which the catalog has no devices/ file for")
    devices = sorted(cat.devices.values(), key=lambda d: d.id)
    if not devices:
        ctx.result.missing.append("device (the catalog has no devices/)")
        return
    if len(devices) == 1:
        app["device"] = devices[0].id
        return
    # the device the catalog's apps name most (its market's device: a chart carries one `nvidia` envelope, which
    # several desktop cards of the catalog could hold, docs/devices.md); with none, the smallest cap that holds it
    home = Counter(r.app.device for r in cat.apps.values() if r.app.device in cat.devices)
    mib = app.get("gpu_memory_mib") or 0
    fitting = [d for d in devices if d.hami_cap_mib >= mib]
    targeted = [d for d in cat.market.devices if d in cat.devices]
    if home:
        chosen = cat.devices[min(home, key=lambda d: (-home[d], d))]
        why = "the device most of the catalog's apps name"
    elif targeted:  # a store with no app yet: the first device its market.yaml targets is its own
        chosen = cat.devices[targeted[0]]
        why = "the first device catalog/market.yaml targets"
    else:
        chosen = (min(fitting, key=lambda d: d.hami_cap_mib) if fitting
                  else max(devices, key=lambda d: d.hami_cap_mib))
        why = "the smallest HAMi cap that holds the app"
    app["device"] = chosen.id
    ctx.note("device", f"the chart names no device; {chosen.id} chosen ({why})")


def _validate(ctx: _Ctx, app: dict[str, Any]) -> None:
    result = ctx.result
    draft = result.stack_draft or result.model_draft or bool(result.missing)
    if result.stack_draft:
        result.missing.append(f"stack {result.stack} is a draft (drafts/stacks/{result.stack}.yaml)")
    try:
        App.model_validate(tuples(app))
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            if err["type"] == "missing":
                # the quantization names a weight of the model: with the model unknown, the model's reason says it
                said = ("model",) if loc == "quantization" else ()
                if not any(m.startswith((loc, *said)) for m in result.missing):
                    result.missing.append(loc)
            else:
                result.missing.append(f"{loc}: {err['msg']}")
        draft = True
    result.status = "draft" if draft else "ok"



__all__ = ["CHART_FIELDS", "Imported", "import_chart", "marked_envs"]
