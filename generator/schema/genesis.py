"""The Genesis (Sandermage) vLLM runtime patch registry."""

from __future__ import annotations

from pydantic import Field

from generator.schema.common import EnvName, Id, Sources, Strict


class GenesisPatch(Strict):
    id: str = Field(pattern=r"^P[N]?[0-9]+[A-Za-z]?$")
    env: EnvName  # canonical name the pinned Genesis image reads
    aliases: tuple[EnvName, ...] = ()  # other names that toggle the same patch
    purpose: str
    default_on: bool = False
    requires: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    superseded_by: str | None = None  # upstream PR that made it unnecessary
    sources: Sources

    @property
    def env_names(self) -> tuple[str, ...]:
        return (self.env, *self.aliases)


class GenesisRegistry(Strict):
    version: str
    truthy: tuple[str, ...] = ("1", "true", "yes", "on")
    patches: tuple[GenesisPatch, ...]
    tunables: tuple[EnvName, ...] = ()  # Genesis env names that are settings, not patch toggles
    sources: Sources

    def patch(self, patch_id: str) -> GenesisPatch | None:
        return next((p for p in self.patches if p.id.lower() == patch_id.lower()), None)

    def by_env(self, name: str) -> GenesisPatch | None:
        return next((p for p in self.patches if name in p.env_names), None)


__all__ = ["GenesisPatch", "GenesisRegistry", "Id"]
