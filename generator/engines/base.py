"""What an engine module produces: the container's argv and env, each piece with its origin."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NewType

from generator.catalog import Resolved
from generator.schema import WeightFile

# A resolved app whose GPU memory is decided: the app states it, or the fit sized it (generator/fit/sizing.py `sized`,
# the one maker of a Sized). The engine's argv and env carry that figure (the HAMi limit, SGLang's pool), so building
# them takes a Sized: calling the engine before the fit is a type error, not a runtime assertion.
Sized = NewType("Sized", Resolved)


def cap_of(r: Sized) -> int:
    """The GPU memory (MiB) a sized app runs under: stated, or filled in by the fit (a Sized always has it)."""
    mib = r.app.gpu_memory_mib
    assert mib is not None, f"{r.app.name}: a Sized app has its GPU memory (generator/fit/sizing.py sized)"
    return mib

MODELS_DIR = "/models"
SLOT_DIR = "/cache"  # llama-server --slot-save-path, on an emptyDir (the maintainer's charts)
CHAT_TEMPLATE_DIR = "/etc/catalog/chat-template"  # the chart's ConfigMap, mounted read-only
CHAT_TEMPLATE_FILE = "chat_template.jinja"  # shipped at the chart's root, read with .Files.Get


@dataclass(frozen=True)
class Arg:
    tokens: tuple[str, ...]
    origin: str  # where it came from: app.<field>, stack, genesis, extra_args, ...


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    origin: str


@dataclass(frozen=True)
class Download:
    """A file the init container fetches before the engine starts."""

    repo: str
    revision: str
    file: str

    @property
    def path(self) -> str:
        return f"{MODELS_DIR}/{self.repo}/{self.file}"


@dataclass(frozen=True)
class Mount:
    """A volume the engine container mounts besides the models folder."""

    name: str  # volume name in the pod
    path: str  # mount path in the container
    kind: Literal["emptyDir", "chatTemplate"]


@dataclass(frozen=True)
class EngineSpec:
    image: str
    command: tuple[str, ...]
    args: tuple[Arg, ...]
    env: tuple[EnvVar, ...]  # resolved: one entry per name, last assignment wins
    overridden: tuple[EnvVar, ...]  # assignments replaced by a later one (for `explain`)
    port: int
    health_path: str
    downloads: tuple[Download, ...]
    mounts: tuple[Mount, ...] = ()

    @property
    def argv(self) -> list[str]:
        return [token for arg in self.args for token in arg.tokens]

    @property
    def env_map(self) -> dict[str, str]:
        return {e.name: e.value for e in self.env}


def chat_template_path() -> str:
    return f"{CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}"


def hami_limit(mib: int) -> str:
    """HAMi-core's format: an integer with `m` (MiB); never a Kubernetes `Mi`, never zero-padded."""
    return f"{mib}m"


def download(weight: WeightFile) -> Download:
    assert weight.file is not None, "the catalog resolver checks that a llama.cpp stack's weights name a file"
    return Download(repo=weight.repo, revision=weight.revision or "main", file=weight.file)


def resolve_env(*groups: list[EnvVar]) -> tuple[tuple[EnvVar, ...], tuple[EnvVar, ...]]:
    """Merge env groups in order; a later name replaces an earlier one in place."""
    merged: dict[str, EnvVar] = {}
    overridden: list[EnvVar] = []
    for group in groups:
        for var in group:
            if var.name in merged:
                overridden.append(merged[var.name])
            merged[var.name] = var
    return tuple(merged.values()), tuple(overridden)


def common_env(r: Sized) -> tuple[list[EnvVar], list[EnvVar], list[EnvVar], list[EnvVar]]:
    """Stack env, the HAMi limit, Genesis flags and the app's own env, in that order."""
    stack = [EnvVar(k, v, f"stack {r.stack.id}") for k, v in r.stack.env.items()]
    hami = [EnvVar("CUDA_DEVICE_MEMORY_LIMIT_0", hami_limit(cap_of(r)), "app.gpu_memory_mib")]
    genesis = []
    for pid in r.app.genesis_patches:
        patch = r.genesis.patch(pid) if r.genesis else None
        if patch is not None:
            genesis.append(EnvVar(patch.env, "1", f"genesis {patch.id}"))
    app = [EnvVar(k, v, "app.env") for k, v in r.app.env.items()]
    return stack, hami, genesis, app


def fill(args: tuple[str, ...], tokens: int | None, drafter: str | None) -> tuple[str, ...]:
    """The stack's speculative spelling with its placeholders filled; the catalog resolver has checked that the app
    sets what the spelling takes (a drafter, a draft length)."""
    out = []
    for arg in args:
        if arg == "{tokens}":
            assert tokens is not None, "checked when the catalog is resolved"
            out.append(str(tokens))
        elif arg == "{drafter}":
            assert drafter is not None, "checked when the catalog is resolved"
            out.append(drafter)
        else:
            out.append(arg)
    return tuple(out)


def compact_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False, ensure_ascii=False)


# ---- the one builder: the head and tail every engine shares ------------------------------------------------

@dataclass
class Head:
    """What an engine module starts from: the resolved app, its weight file, and the files to fetch."""

    r: Sized
    weight: WeightFile
    downloads: list[Download] = field(default_factory=list)

    def fetch(self, weight: WeightFile) -> Download:
        """A GGUF file the init container downloads; returns it so its path can go into the argv."""
        fetched = download(weight)
        self.downloads.append(fetched)
        return fetched

    def listen(self) -> Arg:
        """`--host 0.0.0.0 --port <stack port>`: every engine's server spells it the same."""
        stack = self.r.stack
        return Arg(("--host", "0.0.0.0", "--port", str(stack.port)), f"stack {stack.id} port")


@dataclass(frozen=True)
class Own:
    """What is an engine's own: its argv before the stack's and app's args, and env of its own."""

    args: list[Arg]
    env: list[EnvVar] = field(default_factory=list)  # placed after the HAMi limit, before Genesis and app env


def app_weight(r: Resolved) -> WeightFile:
    weight = r.model.weight(r.app.quantization)
    assert weight is not None, f"{r.app.name}: quantization {r.app.quantization!r} (checked by the catalog loader)"
    return weight


def mounts(r: Resolved) -> tuple[Mount, ...]:
    """The chat template's ConfigMap and the slot-save emptyDir, when the app asks for them."""
    out = []
    if r.app.chat_template:
        out.append(Mount("chat-template", CHAT_TEMPLATE_DIR, "chatTemplate"))
    if r.app.slot_save:
        out.append(Mount("cache", SLOT_DIR, "emptyDir"))
    return tuple(out)


def command(r: Resolved) -> tuple[str, ...]:
    """The stack's command; with `python_packages`, wrapped in a shell that pip-installs them first (as the
    maintainer's E4B chart does: `sh -c 'pip install --quiet ... && exec vllm serve "$@"' --`)."""
    stack, packages = r.stack, r.app.python_packages
    if not packages:
        return stack.command
    assert stack.command, "checked when the catalog is resolved: python_packages needs the stack's command"
    script = f"pip install --quiet {' '.join(packages)} && exec {shlex.join(stack.command)} \"$@\""
    return ("sh", "-c", script, "--")


def given_args(r: Resolved) -> list[Arg]:
    """The args the catalog writes as text after the engine's own: the stack's `args`, then the app's `extra_args`
    (the engine reads the last occurrence of a flag, so these override the engine's own)."""
    out = []
    if r.stack.args:
        out.append(Arg(r.stack.args, f"stack {r.stack.id}"))
    if r.app.extra_args:
        out.append(Arg(r.app.extra_args, "app.extra_args"))
    return out


def engine_env(r: Sized, own_env: list[EnvVar]) -> tuple[tuple[EnvVar, ...], tuple[EnvVar, ...]]:
    """The container's env (resolved, and the assignments a later one replaced): stack env, HF_HOME, the HAMi limit,
    the engine's own env, Genesis flags, the app's env. Built from the app alone: a family's settings read it
    (engines/decided.py) without building the argv."""
    stack_env, hami, genesis, app_env = common_env(r)
    paths = [EnvVar("HF_HOME", MODELS_DIR, "chart")]
    return resolve_env(stack_env, paths, hami, own_env, genesis, app_env)


def build(r: Sized, own: Callable[[Head], Own]) -> EngineSpec:
    """One engine's spec: `own` gives the engine's argv and env; the builder adds what every engine has.

    argv = own args, the stack's args, the app's `extra_args`; env = stack env, HF_HOME, the HAMi limit,
    own env, Genesis flags, the app's env (a later assignment of a name replaces an earlier one).
    """
    head = Head(r, app_weight(r))
    mine = own(head)
    stack = r.stack
    args = list(mine.args) + given_args(r)
    env, overridden = engine_env(r, mine.env)
    return EngineSpec(image=stack.image, command=command(r), args=tuple(args), env=env, overridden=overridden,
                      port=stack.port, health_path=stack.health_path, downloads=tuple(head.downloads), mounts=mounts(r))
