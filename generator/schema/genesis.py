"""The Genesis (Sandermage) vLLM runtime patch registry."""

from typing import Annotated

from pydantic import Field

from generator.schema.common import MAX_ITEMS, EnvName, Id, Name, Note, Sources, Strict

Names = Annotated[tuple[Name, ...], Field(max_length=MAX_ITEMS)]


class GenesisPatch(Strict):
    id: str = Field(pattern=r"^P[N]?[0-9]+[A-Za-z]?$")
    env: EnvName  # canonical name the pinned Genesis image reads
    aliases: Annotated[tuple[EnvName, ...], Field(max_length=MAX_ITEMS)] = ()  # other names for the same patch
    purpose: Note
    default_on: bool = False
    requires: Names = ()
    conflicts: Names = ()
    superseded_by: Name | None = None  # upstream PR that made it unnecessary
    sources: Sources

    @property
    def env_names(self) -> tuple[str, ...]:
        return (self.env, *self.aliases)


class GenesisRegistry(Strict):
    version: Name
    truthy: Names = ("1", "true", "yes", "on")
    patches: Annotated[tuple[GenesisPatch, ...], Field(max_length=4096)]
    tunables: Annotated[tuple[EnvName, ...], Field(max_length=MAX_ITEMS)] = ()  # settings, not patch toggles
    sources: Sources

    def patch(self, patch_id: str) -> GenesisPatch | None:
        return next((p for p in self.patches if p.id.lower() == patch_id.lower()), None)

    def by_env(self, name: str) -> GenesisPatch | None:
        return next((p for p in self.patches if name in p.env_names), None)


__all__ = ["GenesisPatch", "GenesisRegistry", "Id"]
