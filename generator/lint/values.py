"""The values Olares injects when it renders a chart (docs/domain.md#hami).

The base mirrors the OAC lint placeholders (beclab/Olares framework/oac/internal/helmrender/values.go
`BuildValues`) plus what app-service adds at install: the userspace paths, `.Values.GPU.Type`/`.gpu`,
`.Values.workloads.<name>.replicaCount` and `.Values.olaresEnv`.
"""

from __future__ import annotations

from typing import Any

OWNER = "admin"  # owner == admin: v3 installs are admin-only (docs/domain.md#hami C)
ZONE = "admin.olares.local"
OAC_NAMESPACE = "app-namespace"  # OAC's render namespace (internal/resources/namespace.go)


def _entrance_domains(manifest: dict[str, Any]) -> dict[str, str]:
    names = [e.get("name") for key in ("entrances", "sharedEntrances") for e in manifest.get(key) or ()
             if isinstance(e, dict)]
    return {str(n): f"{n}.{ZONE}" for n in names if n}


def _userspace(name: str) -> dict[str, str]:
    return {
        "appCache": f"/olares/userdata/Cache/{name}",
        "appData": f"/olares/rootfs/userspace/pvc/Data/{name}",
        "userData": "/olares/rootfs/userspace/pvc/Home",
        "appCommon": "/olares/userdata/Common",
    }


def workload_names(manifest: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Workloads Olares scales: the manifest's workloadReplicas keys and values.yaml's workloads keys."""
    names = set(manifest.get("workloadReplicas") or {}) | set(values.get("workloads") or {})
    return sorted(str(n) for n in names)


def olares_values(name: str, manifest: dict[str, Any], values: dict[str, Any], *, replicas: int = 1,
                  gpu_type: str = "nvidia", olares_env: dict[str, str] | None = None) -> dict[str, Any]:
    """The values of one install scenario; chart defaults (values.yaml) are merged below them by Helm."""
    return {
        "bfl": {"username": OWNER},
        "admin": OWNER,
        "isAdmin": True,
        "user": {"zone": ZONE},
        "domain": _entrance_domains(manifest),
        "schedule": {"nodeName": "node"},
        "userspace": _userspace(name),
        "os": {"appKey": "appKey", "appSecret": "appSecret"},
        "dep": {}, "svcs": {}, "cluster": {"arch": "amd64"},
        "oidc": {"client": {}, "issuer": "issuer"},
        "GPU": {"Type": gpu_type}, "gpu": gpu_type,
        "olaresEnv": dict(olares_env or {}),
        "workloads": {w: {"replicaCount": replicas} for w in workload_names(manifest, values)},
    }


def filled_env(manifest: dict[str, Any]) -> dict[str, str]:
    """A placeholder for every manifest env, so templates guarded on an env (a Secret) render too."""
    out = {}
    for env in manifest.get("envs") or ():
        if isinstance(env, dict) and env.get("envName"):
            out[str(env["envName"])] = f"lint-placeholder-{str(env['envName']).lower()}"
    return out
