"""Chart rules of the shared app form (docs/forms.md): a chart that declares itself shared is shared completely.

Olares' spec (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e docs/developer/develop/package/manifest.md
"shared"): "When `options.shared: true`: `apiVersion` must be set to `'v3'`; `onlyAdmin` must be set to `true`";
"sharedEntrances": the internal address a shared application provides to the other applications of the cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.lint.registry import Issue, chart_rule
from generator.lint.view import ChartView

MANIFEST = "OlaresManifest.yaml"
SPEC = ("beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e docs/developer/develop/package/manifest.md "
        "'shared', 'sharedEntrances'")


def _map(node: Any, key: str) -> dict[str, Any]:
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


def _line(view: ChartView, needle: str) -> int | None:
    for number, line in enumerate(view.tree.get(MANIFEST, "").splitlines(), 1):
        if line.strip().startswith(needle):
            return number
    return None


@chart_rule("SHARED001", "a shared app (options.shared: true) is apiVersion v3 with spec.onlyAdmin: true and a "
            "sharedEntrances entry; a store of the shared form renders only such apps",
            "Olares installs a shared app once, for the cluster, under the admin: it refuses one that is not v3 or "
            "not onlyAdmin, and Router reaches an app through its shared entrance",
            SPEC)
def shared_complete(view: ChartView) -> Iterator[Issue]:
    if view.form != "shared":
        return  # the single form refuses any shared flag (OLARES023)
    manifest = view.manifest
    shared = _map(manifest, "options").get("shared") is True
    if not shared:
        yield Issue("the store's form is shared but options.shared is not true", "render the chart again "
                    "(catalog render): the shared form writes options.shared, onlyAdmin and sharedEntrances", MANIFEST)
        return
    if manifest.get("apiVersion") != "v3":
        yield Issue(f"options.shared is true but apiVersion is {manifest.get('apiVersion')!r}", "write apiVersion: v3 "
                    "(the olares-v3 profile)", MANIFEST, _line(view, "apiVersion:"))
    if _map(manifest, "spec").get("onlyAdmin") is not True:
        yield Issue("options.shared is true but spec.onlyAdmin is not true", "write spec.onlyAdmin: true (a shared "
                    "app is installed by the admin)", MANIFEST, _line(view, "spec:"))
    if not manifest.get("sharedEntrances"):
        yield Issue("options.shared is true but there is no sharedEntrances entry", "declare the shared entrance "
                    "(host: a Service of the chart reaching the engine, port 0, invisible, authLevel internal)",
                    MANIFEST, _line(view, "options:"))
