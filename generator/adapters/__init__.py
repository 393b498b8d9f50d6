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
