"""`oci://HOST/PATH`: push Helm packages to an OCI registry with the Helm engine's registry client.

Credentials: CATALOG_REGISTRY_USERNAME / CATALOG_REGISTRY_PASSWORD (a login whose credentials file is
private to the run and deleted afterwards), or `--registry-config FILE` (docker-config-style JSON, e.g.
written by `helm registry login`), else Helm's default registry config. Plain HTTP only with
`--plain-http`. The client is the Helm adapter's (generator/adapters/helm.py): each registry call runs
in its worker process under a total deadline (`--timeout`), so a registry that accepts and never answers
ends the run with a message instead of holding it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from generator.adapters import DEFAULT_REGISTRY_TIMEOUT_S, Helm, HelmFailure, HelmRegistry
from generator.core import ToolError, UsageError
from generator.versions import content_hash
from generator.publish.core import Decision, Item, refuse_other_content
from generator.publish.package import package, tree_of_package
from generator.publish.secrets import Redactor, registry_login

_NOT_FOUND = ("status code 404", "name unknown", "NAME_UNKNOWN")  # the repository does not exist yet


class OciTarget:
    def __init__(self, ref: str, *, helm: Helm, plain_http: bool = False, registry_config: Path | None = None,
                 timeout_s: float = DEFAULT_REGISTRY_TIMEOUT_S):
        if not ref.startswith("oci://") or "/" not in ref[len("oci://"):].strip("/"):
            raise UsageError(f"{ref}: an OCI target is oci://HOST/PATH (e.g. oci://registry.example.com/charts)")
        self.ref = ref.rstrip("/")
        self.host = self.ref[len("oci://"):].split("/", 1)[0]
        self.label = self.ref
        self.helm = helm
        self.plain_http = plain_http
        self.registry_config = registry_config
        self.timeout_s = timeout_s
        self.redact = Redactor()
        self.client: HelmRegistry | None = None
        self.work: Path | None = None

    def _failed(self, message: str, exc: HelmFailure) -> ToolError:
        return ToolError(self.redact(f"{message}: {' '.join(exc.detail.split())}{self._hint(exc.detail)}"))

    def open(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="catalog-oci-"))
        login = registry_login()
        if self.registry_config is not None and not self.registry_config.is_file():
            raise UsageError(f"--registry-config {self.registry_config}: no such file")
        creds = self.registry_config or (self.work / "registry-credentials.json" if login else None)
        self.client = self.helm.registry(plain_http=self.plain_http, credentials_file=creds, timeout_s=self.timeout_s,
                                         redact=self.redact)
        if login:
            user, password = login
            self.redact.add(password, user)
            try:
                self.client.login(self.host, user, password)
            except HelmFailure as exc:
                raise self._failed(f"login to {self.host} as {user} failed", exc) from None

    def _registry(self) -> HelmRegistry:
        if self.client is None:
            raise ToolError(f"{self.label}: the registry client is not open")
        return self.client

    def _tags(self, app: str) -> list[str]:
        try:
            return self._registry().tags(f"{self.ref}/{app}")
        except HelmFailure as exc:
            if any(mark in exc.detail for mark in _NOT_FOUND):
                return []
            raise self._failed(f"{self.ref}/{app}: cannot list tags", exc) from None

    @staticmethod
    def _hint(text: str) -> str:
        if "server gave HTTP response to HTTPS client" in text:
            return " (a plain-HTTP registry: add --plain-http)"
        if "credential" in text or "401" in text:
            return " (set CATALOG_REGISTRY_USERNAME/CATALOG_REGISTRY_PASSWORD or --registry-config)"
        return ""

    def decide(self, item: Item) -> Decision:
        if item.version not in self._tags(item.app):
            return Decision("publish", f"new tag {item.app}:{item.version}")
        assert self.work is not None
        dest = self.work / "pulled" / item.app
        dest.mkdir(parents=True, exist_ok=True)
        try:
            self._registry().pull(f"{self.ref}/{item.app}", item.version, dest)
        except HelmFailure as exc:
            raise self._failed(f"pull {item.app}:{item.version} from {self.ref} failed", exc) from None
        pulled = next(dest.glob("*.tgz"), None)
        if pulled is None:
            raise ToolError(f"{self.ref}/{item.app}:{item.version}: pull gave no package")
        theirs = content_hash(tree_of_package(pulled, f"{self.ref}/{item.app}:{item.version}"))
        if theirs != item.content:
            return refuse_other_content(item, self.ref, theirs)
        return Decision("skipped", f"{item.app}:{item.version} already has this content")

    def publish(self, item: Item, decision: Decision) -> str:
        assert self.work is not None
        tgz = package(item.tree, item.app, item.version, item.date, self.work / item.app, helm=self.helm)
        try:
            self._registry().push(tgz, self.ref)
        except HelmFailure as exc:
            raise self._failed(f"push {item.app}:{item.version} to {self.ref} failed", exc) from None
        return f"pushed {self.ref}/{item.app}:{item.version}"

    def finish(self, published: list[Item]) -> None:
        return None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
