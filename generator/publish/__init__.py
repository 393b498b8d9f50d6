"""`catalog publish`: one adapter per kind of target, one loop (core.run) for all of them.

    git:PATH_OR_URL[#BRANCH]   gitmarket.GitMarketTarget   a market repo (beclab/apps layout), one PR per app
    oci://HOST/PATH            oci.OciTarget               an OCI registry (Helm charts as OCI artifacts)
    dir:PATH                   helmdir.HelmDirTarget       a Helm repository folder (packages + index.yaml)
    market:DIR                 market.MarketTarget         the src/*.json files of an Olares Market Source worker
"""

from __future__ import annotations

from pathlib import Path

from generator.publish.secrets import PublishError


def make_target(spec: str, *, plain_http: bool = False, registry_config: Path | None = None,
                github_api: str | None = None, pr_repo: str | None = None, draft: bool = True):
    """The adapter for a TARGET string; PublishError when it is not one of the three forms."""
    if spec.startswith("git:"):
        from generator.publish.github import DEFAULT_API, check_repo
        from generator.publish.gitmarket import GitMarketTarget
        from generator.publish.secrets import github_token

        return GitMarketTarget(spec[len("git:"):], token=github_token(), github_api=github_api or DEFAULT_API,
                               pr_repo=check_repo(pr_repo) if pr_repo else None, draft=draft)
    if spec.startswith("oci://"):
        from generator.publish.oci import OciTarget

        return OciTarget(spec, plain_http=plain_http, registry_config=registry_config)
    if spec.startswith("dir:"):
        from generator.publish.helmdir import HelmDirTarget

        return HelmDirTarget(Path(spec[len("dir:"):]).expanduser())
    if spec.startswith("market:"):
        from generator.publish.market import MarketTarget

        return MarketTarget(Path(spec[len("market:"):]).expanduser())
    raise PublishError(f"--to {spec!r}: expected git:PATH_OR_URL[#BRANCH], oci://HOST/PATH, dir:PATH or market:DIR")


__all__ = ["PublishError", "make_target"]
