"""Which Genesis patches a resolved env turns on, and which Genesis env names the registry does not know.

Genesis reads `GENESIS_ENABLE_<ID>` / `SNDR_ENABLE_<ID>` (opt-in patches), `*_LEGACY_<ID>` (legacy patches,
default-on) and `*_DISABLE_<ID>` (opt-out); when both prefixes are set, SNDR wins (docs/domain.md).
Truthy values: the registry's `truthy` list.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.engines.base import EnvVar
from generator.schema import GenesisPatch, GenesisRegistry

PREFIXES = ("GENESIS_", "SNDR_")


@dataclass(frozen=True)
class PatchState:
    patch: GenesisPatch
    on: bool
    var: EnvVar | None  # the variable that decided; None = the registry default

    @property
    def why(self) -> str:
        if self.var is None:
            return "default on" if self.on else "off (not set)"
        return f"{self.var.name}={self.var.value} (from {self.var.origin.removeprefix('app.')})"


def is_genesis_name(name: str) -> bool:
    return name.startswith(PREFIXES)


def disable_names(patch: GenesisPatch) -> tuple[str, str]:
    return (f"SNDR_DISABLE_{patch.id.upper()}", f"GENESIS_DISABLE_{patch.id.upper()}")


def _deciding(names: tuple[str, ...], env: dict[str, EnvVar]) -> EnvVar | None:
    """The variable that decides among synonyms: an SNDR_ name wins over a GENESIS_ one."""
    present = [env[n] for n in names if n in env]
    sndr = [v for v in present if v.name.startswith("SNDR_")]
    chosen = sndr or present
    return chosen[-1] if chosen else None


def patch_state(registry: GenesisRegistry, patch: GenesisPatch, env: dict[str, EnvVar]) -> PatchState:
    truthy = {t.lower() for t in registry.truthy}
    disabled = _deciding(disable_names(patch), env)
    if disabled is not None and disabled.value.strip().lower() in truthy:
        return PatchState(patch, False, disabled)
    toggle = _deciding(patch.env_names, env)
    if toggle is None:
        return PatchState(patch, patch.default_on, None)
    return PatchState(patch, toggle.value.strip().lower() in truthy, toggle)


def patch_states(registry: GenesisRegistry, env_vars: tuple[EnvVar, ...]) -> dict[str, PatchState]:
    env = {e.name: e for e in env_vars}
    return {p.id: patch_state(registry, p, env) for p in registry.patches}


def known_names(registry: GenesisRegistry) -> set[str]:
    names = set(registry.tunables)
    for patch in registry.patches:
        names.update(patch.env_names)
        names.update(disable_names(patch))
    return names


def unknown_vars(registry: GenesisRegistry, env_vars: tuple[EnvVar, ...]) -> list[EnvVar]:
    known = known_names(registry)
    return [e for e in env_vars if is_genesis_name(e.name) and e.name not in known]


def suggestion(registry: GenesisRegistry, name: str) -> str | None:
    """The registry name of the same patch id (`GENESIS_ENABLE_P65` -> the P65 env name), else a close name."""
    import difflib

    for patch in sorted(registry.patches, key=lambda p: -len(p.id)):
        for prefix in ("GENESIS_ENABLE_", "SNDR_ENABLE_", "GENESIS_LEGACY_", "SNDR_LEGACY_"):
            rest = name.removeprefix(prefix)
            if rest != name and (rest.upper() == patch.id.upper() or rest.upper().startswith(patch.id.upper() + "_")):
                return patch.env
    close = difflib.get_close_matches(name, sorted(known_names(registry)), n=1, cutoff=0.75)
    return close[0] if close else None


__all__ = ["PREFIXES", "PatchState", "is_genesis_name", "known_names", "patch_states", "suggestion", "unknown_vars"]
