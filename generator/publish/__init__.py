"""`catalog publish`: one adapter per kind of target, one loop (core.run) for all of them.

    git:PATH_OR_URL[#BRANCH]   gitmarket.GitMarketTarget   a market repo (beclab/apps layout), one PR per app
    oci://HOST/PATH            oci.OciTarget               an OCI registry (Helm charts as OCI artifacts)
    dir:PATH                   helmdir.HelmDirTarget       a Helm repository folder (packages + index.yaml)

The targets reach git, the Helm engine and GitHub only through the adapters of generator/adapters/,
which the CLI builds once (`Tools`) and passes in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.adapters.git import Git
from generator.adapters.github import GitHubApi
from generator.adapters.helm import Helm
from generator.core.errors import UsageError

if TYPE_CHECKING:
    from generator.publish.gitmarket import GitMarketTarget
    from generator.publish.helmdir import HelmDirTarget
    from generator.publish.oci import OciTarget

    AnyTarget = GitMarketTarget | OciTarget | HelmDirTarget

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
    """The adapter for a TARGET string; UsageError when it is not one of the three forms."""
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
    raise UsageError(f"--to {spec!r}: expected git:PATH_OR_URL[#BRANCH], oci://HOST/PATH or dir:PATH")


__all__ = ["DEFAULT_TIMEOUT_S", "Tools", "make_target"]
