"""Shared helpers of the rule modules: the app's effective settings and fit (memoized per app), and
findings that point at the catalog line a resolved flag or env var came from."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from generator.engines import Flag
from generator.catalog import display_path
from generator.engines import EnvVar
from generator.core import CatalogError
from generator.core import Finding, Severity
from generator.fit import Fit
from generator.fit.estimate import estimate
from generator.yamlio import Document, read_document
from generator.engines import AnySettings
from generator.rules import AppContext

# Arg/EnvVar origins written by the engine modules -> the app field they come from.
APP_FIELDS = {
    "app.kv_cache_type": ("kv_cache_type",), "app.context_length": ("context_length",),
    "app.gpu_memory_utilization": ("gpu_memory_utilization",), "app.speculative": ("speculative",),
    "app.served_name": ("served_name",), "app.vision": ("vision",), "app.gpu_memory_mib": ("gpu_memory_mib",),
    "app.model + app.quantization": ("quantization",), "model weights revision": ("quantization",),
    "app.audio": ("audio",), "app.chat_template": ("chat_template",), "app.slot_save": ("slot_save",),
}


def settings(ctx: AppContext) -> AnySettings:
    """The app's effective settings, read once by the chart plan (`ChartSpec.settings`)."""
    return ctx.chart.settings


def fit(ctx: AppContext) -> Fit:
    found = ctx.cache.fit
    if found is None:
        found = ctx.cache.fit = estimate(ctx.resolved, settings(ctx))
    return found


@lru_cache(maxsize=64)
def _stack_doc(path: str) -> Document:
    return read_document(Path(path), display_path(Path(path)))


def _stack_place(ctx: AppContext, *loc: str | int) -> tuple[str, int]:
    path = ctx.catalog.root / "stacks" / f"{ctx.resolved.stack.id}.yaml"
    try:
        doc = _stack_doc(str(path))
    except (OSError, CatalogError):  # the stack file loaded once already; a vanished file only loses the line
        return display_path(path), 1
    return display_path(path), doc.line_of(tuple(loc))


def flag_place(ctx: AppContext, flag: Flag) -> tuple[str, int]:
    r = ctx.resolved
    if flag.origin == "app.extra_args":
        return r.file, r.line("extra_args", flag.offset)
    if flag.origin.startswith("stack "):
        return _stack_place(ctx, "port") if flag.origin.endswith(" port") else _stack_place(ctx, "args", flag.offset)
    return r.file, r.line(*APP_FIELDS.get(flag.origin, ()))


def env_place(ctx: AppContext, var: EnvVar) -> tuple[str, int]:
    r = ctx.resolved
    if var.origin == "app.env":
        return r.file, r.line("env", var.name)
    if var.origin.startswith("genesis "):
        pid = var.origin.split(" ", 1)[1]
        index = next((i for i, p in enumerate(r.app.genesis_patches) if p.lower() == pid.lower()), None)
        return r.file, r.line("genesis_patches", index) if index is not None else r.line("genesis_patches")
    if var.origin.startswith("stack "):
        return _stack_place(ctx, "env", var.name)
    return r.file, r.line(*APP_FIELDS.get(var.origin, ()))


def at_flag(ctx: AppContext, rule: str, severity: Severity, flag: Flag, message: str, fix: str) -> Finding:
    file, line = flag_place(ctx, flag)
    return Finding(rule, severity, ctx.app.name, message, fix, file, line)


def at_env(ctx: AppContext, rule: str, severity: Severity, var: EnvVar, message: str, fix: str) -> Finding:
    file, line = env_place(ctx, var)
    return Finding(rule, severity, ctx.app.name, message, fix, file, line)


def env_where(var: EnvVar) -> str:
    return f"from {var.origin.removeprefix('app.')}"


__all__ = ["at_env", "at_flag", "env_place", "env_where", "fit", "flag_place", "settings"]
