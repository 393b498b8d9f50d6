"""The engine container's environment -> the app's `env`, `genesis_patches` and KV settings; the Hugging
Face plumbing and cache paths a rendered chart sets itself.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from generator.core import Data
from generator.catalog import Catalog
from generator.core import literal_secret, secret_name
from generator.importer.argv import Mapped
from generator.importer.workload import Launch, Pod
from generator.importer.podenv import EnvEntry
from generator.schema import GenesisRegistry, Stack
from generator.importer import objects
from generator.importer.context import HAMI_ENV, _Ctx, _launcher, _take

HF_PLUMBING = ("HF_TOKEN", "HF_ENDPOINT", "HUGGING_FACE_HUB_TOKEN")
# a literal secret is never copied into the catalog nor shown: secret-named env variables and flags (`--api-key` of
# llama-server and vLLM, `--hf-token`) and any value holding a token (core/redact.py `secret_name`, `literal_secret`)
CHART_HF_HOME = "/models"  # generator/engines/*.py: HF_HOME of every rendered chart
# where huggingface_hub and transformers cache downloads: HF_HOME and HF_HUB_CACHE
# (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables), HF_HUB_CACHE's older
# spelling HUGGINGFACE_HUB_CACHE (https://huggingface.co/docs/huggingface_hub/v0.12.0/package_reference/
# environment_variables) and transformers' TRANSFORMERS_CACHE (https://huggingface.co/docs/transformers/installation)
HF_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+")  # a Hugging Face repo id, owner/name
HF_CACHE_ENVS = ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE")


def _env(ctx: _Ctx, launch: Launch, stack: Stack | None, family: str, consumed: set[str], cat: Catalog,
         app: dict[str, Data]) -> None:
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
        app["genesis_patches"] = list[Data](patches)
    if env:
        app["env"] = dict[str, Data](env)


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
                   for m in objects.maps(launch.container, "volumeMounts"))
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
              for m in objects.maps(launch.container, "volumeMounts")]
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


def _kv_env(kv: dict[str, str], names: tuple[str, ...], env: dict[str, str], app: dict[str, Data]) -> None:
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
        texts += [str(x) for x in objects.items(container, "command")]
        texts += [str(x) for x in objects.items(container, "args")]
    blob = "\n".join(texts)
    names = set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", blob))
    names |= set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", blob))
    return names


__all__ = ["CHART_HF_HOME", "HF_CACHE_ENVS", "HF_PLUMBING", "HF_REPO"]
