"""The outside world behind narrow classes, built once by the CLI and passed in.

    git.Git                 git, the program (versions/gitbase.py, publish/gitmarket.py, check/pr.py)
    helm.Helm               the Helm engine: lint, render, package, repo index; `.registry()` the OCI client
    kube.Kube               the Kubernetes API: Services, Pods, port-forward (smoke/kube_forward.py)
    github.GitHubApi        the GitHub REST API (publish/github.py)

The model is chart-testing's `pkg/tool` (github.com/helm/chart-testing: small structs wrapping exec of
git and helm, built once in `pkg/chart/chart.go`'s NewTesting). Each adapter translates its library's
exceptions into the error tree where it calls them (ToolError, RemoteError, FileSystemError,
MissingDependency), as httpx's `map_exceptions` does (httpx/_transports/default.py), and every network
call has a total deadline from its start (deadline.py: DeadlineExceeded, a RemoteError).
This package imports nothing heavy at import time: each adapter imports its library when first used.
"""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["BUILD_COST", "CappedRenderer", "ContainerView", "DEFAULT_API", "DEFAULT_HEAD_CAP",
           "DEFAULT_REGISTRY_TIMEOUT_S", "Deadline", "DeadlineExceeded", "EnvEntry", "Git", "GitHubApi", "Helm",
           "HelmFailure", "HelmRegistry", "HfApi", "Kube", "LlamaServer", "Oac", "PodView", "VCS", "build_server",
           "cache_folder", "display"]

if TYPE_CHECKING:
    from .llama import BUILD_COST as BUILD_COST
    from .helm import CappedRenderer as CappedRenderer
    from .kube import ContainerView as ContainerView
    from .github import DEFAULT_API as DEFAULT_API
    from .hf import DEFAULT_HEAD_CAP as DEFAULT_HEAD_CAP
    from .helm import DEFAULT_REGISTRY_TIMEOUT_S as DEFAULT_REGISTRY_TIMEOUT_S
    from .deadline import Deadline as Deadline
    from .deadline import DeadlineExceeded as DeadlineExceeded
    from .kube import EnvEntry as EnvEntry
    from .git import Git as Git
    from .github import GitHubApi as GitHubApi
    from .helm import Helm as Helm
    from .helm import HelmFailure as HelmFailure
    from .helm import HelmRegistry as HelmRegistry
    from .hf import HfApi as HfApi
    from .kube import Kube as Kube
    from .llama import LlamaServer as LlamaServer
    from .oac import Oac as Oac
    from .kube import PodView as PodView
    from .git import VCS as VCS
    from .llama import build_server as build_server
    from .llama import cache_folder as cache_folder
    from .hf import display as display

_FACE: dict[str, str] = {"BUILD_COST": "llama", "CappedRenderer": "helm", "ContainerView": "kube",
                         "DEFAULT_API": "github", "DEFAULT_HEAD_CAP": "hf", "DEFAULT_REGISTRY_TIMEOUT_S": "helm",
                         "Deadline": "deadline", "DeadlineExceeded": "deadline", "EnvEntry": "kube", "Git": "git",
                         "GitHubApi": "github", "Helm": "helm", "HelmFailure": "helm", "HelmRegistry": "helm",
                         "HfApi": "hf", "Kube": "kube", "LlamaServer": "llama", "Oac": "oac", "PodView": "kube",
                         "VCS": "git", "build_server": "llama", "cache_folder": "llama", "display": "hf"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
