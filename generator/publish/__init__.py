"""`catalog publish`: one adapter per kind of target, one loop (core.run) for all of them.

    git:PATH_OR_URL[#BRANCH]   gitmarket.GitMarketTarget   a market repo (beclab/apps layout), one PR per app
    oci://HOST/PATH            oci.OciTarget               an OCI registry (Helm charts as OCI artifacts)
    dir:PATH                   helmdir.HelmDirTarget       a Helm repository folder (packages + index.yaml)
    market:DIR                 market.MarketTarget         the src/*.json files of an Olares Market Source worker

The targets reach git, the Helm engine and GitHub only through the adapters of generator/adapters/,
which the CLI builds once (`Tools`) and passes in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.adapters import Git
from generator.adapters import GitHubApi
from generator.adapters import Helm
from generator.core import UsageError

if TYPE_CHECKING:
    from generator.publish.gitmarket import GitMarketTarget
    from generator.publish.helmdir import HelmDirTarget
    from generator.publish.market import MarketTarget
    from generator.publish.oci import OciTarget

    AnyTarget = GitMarketTarget | OciTarget | HelmDirTarget | MarketTarget

DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Tools:
    """The adapters a publish run uses; `timeout_s` is the total deadline of each network call."""

    git: Git
    helm: Helm
    github: GitHubApi
    timeout_s: float = DEFAULT_TIMEOUT_S


def make_target(spec: str, tools: Tools, *, plain_http: bool = False, registry_config: Path | None = None,
                pr_repo: str | None = None, draft: bool = True) -> AnyTarget:
    """The adapter for a TARGET string; UsageError when it is not one of the four forms."""
    if spec.startswith("git:"):
        from generator.publish.github import check_repo
        from generator.publish.gitmarket import GitMarketTarget

        return GitMarketTarget(spec[len("git:"):], git=tools.git, github=tools.github,
                               pr_repo=check_repo(pr_repo) if pr_repo else None, draft=draft)
    if spec.startswith("oci://"):
        from generator.publish.oci import OciTarget

        return OciTarget(spec, helm=tools.helm, plain_http=plain_http, registry_config=registry_config,
                         timeout_s=tools.timeout_s)
    if spec.startswith("dir:"):
        from generator.publish.helmdir import HelmDirTarget

        return HelmDirTarget(Path(spec[len("dir:"):]).expanduser(), helm=tools.helm)
    if spec.startswith("market:"):
        from generator.publish.market import MarketTarget

        return MarketTarget(Path(spec[len("market:"):]).expanduser(), helm=tools.helm)
    raise UsageError(f"--to {spec!r}: expected git:PATH_OR_URL[#BRANCH], oci://HOST/PATH, dir:PATH or market:DIR")


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Item", "MarketBuild", "Released", "Result", "Target", "Tools", "build_markets", "format_for",
           "formats_newest_first", "github_token", "items_for", "js_ordered", "make_target", "min_olares",
           "package_bytes", "profile_of", "read_icons", "run", "writable_below", "write_if_changed"]

if TYPE_CHECKING:
    from .core import Item as Item
    from .market import MarketBuild as MarketBuild
    from .market import Released as Released
    from .core import Result as Result
    from .core import Target as Target
    from .market import build_markets as build_markets
    from .market import format_for as format_for
    from .market import formats_newest_first as formats_newest_first
    from .secrets import github_token as github_token
    from .items import items_for as items_for
    from .market_entry import js_ordered as js_ordered
    from .market import min_olares as min_olares
    from .market import package_bytes as package_bytes
    from .market import profile_of as profile_of
    from .market import read_icons as read_icons
    from .core import run as run
    from .market import writable_below as writable_below
    from .market import write_if_changed as write_if_changed

_FACE: dict[str, str] = {"Item": "core", "MarketBuild": "market", "Released": "market", "Result": "core",
                         "Target": "core", "build_markets": "market", "format_for": "market",
                         "formats_newest_first": "market", "github_token": "secrets", "items_for": "items",
                         "js_ordered": "market_entry", "min_olares": "market", "package_bytes": "market",
                         "profile_of": "market", "read_icons": "market", "run": "core", "writable_below": "market",
                         "write_if_changed": "market"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
