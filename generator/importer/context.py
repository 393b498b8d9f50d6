"""The reading context of one chart (`_Ctx`: the rendered chart, its line lookups, the result being
filled and what is already mapped) and the engine family lookups every mapping step shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.chart import PROFILES, Profile
from generator.engines import Family
from generator.engines.family import family
from generator.engines import Launcher
from generator.importer.helmview import Rendered, env_mark, marked_envs
from generator.importer.objects import maps
from generator.importer.workload import Origin, Token
from generator.importer.podenv import Lines
from generator.importer.writes import Written
from generator.schema import Declared
from generator.importer.result import Imported

HAMI_ENV = "CUDA_DEVICE_MEMORY_LIMIT_0"


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


def _launcher(name: str) -> Launcher:
    """The family's launcher part (engines/readback.py `Launcher`): only families that have one are imported."""
    launcher = family(Family(name)).launcher
    assert launcher is not None, f"family {name} has no Launcher (generator/engines/{name}.py)"
    return launcher


def _declared(name: str) -> Declared:
    return family(Family(name)).declared


def _env_default(ctx: _Ctx, text: str) -> tuple[str, str] | None:
    """(env, its manifest default) of a value that is one whole manifest env (`<olaresEnv:NAME>`), else None."""
    names = marked_envs(text)
    if len(names) != 1 or text.strip() != env_mark(names[0]):
        return None
    for env in maps(ctx.r.manifest, "envs"):
        if env.get("envName") != names[0]:
            continue
        if isinstance(env.get("default"), str | int | float):
            return names[0], str(env["default"])
    return None


# --- the features a chart spells as arguments, volumes and a launcher (generator/engines/base.py) ------------

def _take(tokens: list[Token], flag: str) -> tuple[str, Origin, int, int] | None:
    """(value, origin, start, count) of the first `flag VALUE` / `flag=VALUE` in `tokens`."""
    for index, token in enumerate(tokens):
        if token.text == flag and index + 1 < len(tokens):
            return tokens[index + 1].text, token.origin, index, 2
        if token.text.startswith(flag + "="):
            return token.text.split("=", 1)[1], token.origin, index, 1
    return None


__all__ = ["HAMI_ENV"]
