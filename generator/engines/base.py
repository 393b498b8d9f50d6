"""What an engine module produces: the container's argv and env, each piece with its origin."""

from __future__ import annotations

import json
from dataclasses import dataclass

from generator.catalog import Resolved
from generator.schema import WeightFile

MODELS_DIR = "/models"


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
class EngineSpec:
    image: str
    command: tuple[str, ...]
    args: tuple[Arg, ...]
    env: tuple[EnvVar, ...]  # resolved: one entry per name, last assignment wins
    overridden: tuple[EnvVar, ...]  # assignments replaced by a later one (for `explain`)
    port: int
    health_path: str
    downloads: tuple[Download, ...]

    @property
    def argv(self) -> list[str]:
        return [token for arg in self.args for token in arg.tokens]

    @property
    def env_map(self) -> dict[str, str]:
        return {e.name: e.value for e in self.env}


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


def common_env(r: Resolved) -> tuple[list[EnvVar], list[EnvVar], list[EnvVar], list[EnvVar]]:
    """Stack env, the HAMi limit, Genesis flags and the app's own env, in that order."""
    stack = [EnvVar(k, v, f"stack {r.stack.id}") for k, v in r.stack.env.items()]
    hami = [EnvVar("CUDA_DEVICE_MEMORY_LIMIT_0", hami_limit(r.app.gpu_memory_mib), "app.gpu_memory_mib")]
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
