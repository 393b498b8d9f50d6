"""`oci://HOST/PATH`: push Helm packages to an OCI registry with the Helm engine (helm_python).

Credentials: CATALOG_REGISTRY_USERNAME / CATALOG_REGISTRY_PASSWORD (a login whose credentials file is
private to the run and deleted afterwards), or `--registry-config FILE` (docker-config-style JSON, e.g.
written by `helm registry login`), else Helm's default registry config. Plain HTTP only with
`--plain-http`.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from generator.versions.state import content_hash
from generator.publish.core import Decision, Item, refuse_other_content
from generator.publish.package import package, tree_of_package
from generator.publish.secrets import PublishError, Redactor, registry_login

_NOT_FOUND = ("status code 404", "name unknown", "NAME_UNKNOWN")  # the repository does not exist yet


class OciTarget:
    def __init__(self, ref: str, *, plain_http: bool = False, registry_config: Path | None = None):
        if not ref.startswith("oci://") or "/" not in ref[len("oci://"):].strip("/"):
            raise PublishError(f"{ref}: an OCI target is oci://HOST/PATH (e.g. oci://registry.example.com/charts)")
        self.ref = ref.rstrip("/")
        self.host = self.ref[len("oci://"):].split("/", 1)[0]
        self.label = self.ref
        self.plain_http = plain_http
        self.registry_config = registry_config
        self.redact = Redactor()
        self.client = None
        self.work: Path | None = None

    def open(self) -> None:
        import helm_python as helm

        self.work = Path(tempfile.mkdtemp(prefix="catalog-oci-"))
        login = registry_login()
        if self.registry_config is not None and not self.registry_config.is_file():
            raise PublishError(f"--registry-config {self.registry_config}: no such file")
        creds = self.registry_config or (self.work / "registry-credentials.json" if login else None)
        self.client = helm.RegistryClient(plain_http=self.plain_http, credentials_file=str(creds) if creds else None)
        if login:
            user, password = login
            self.redact.add(password, user)
            try:
                self.client.login(self.host, user, password, plain_http=self.plain_http)
            except Exception as exc:
                raise self.redact.error(f"login to {self.host} as {user} failed: {exc}") from None

    def _tags(self, app: str) -> list[str]:
        try:
            return list(self.client.tags(f"{self.ref}/{app}"))
        except Exception as exc:
            if any(mark in str(exc) for mark in _NOT_FOUND):
                return []
            raise self.redact.error(f"{self.ref}/{app}: cannot list tags: {exc}{self._hint(exc)}") from None

    def _hint(self, exc: Exception) -> str:
        text = str(exc)
        if "server gave HTTP response to HTTPS client" in text:
            return " (a plain-HTTP registry: add --plain-http)"
        if "credential" in text or "401" in text:
            return " (set CATALOG_REGISTRY_USERNAME/CATALOG_REGISTRY_PASSWORD or --registry-config)"
        return ""

    def decide(self, item: Item) -> Decision:
        if item.version not in self._tags(item.app):
            return Decision("publish", f"new tag {item.app}:{item.version}")
        dest = self.work / "pulled" / item.app
        dest.mkdir(parents=True, exist_ok=True)
        self.client.pull(f"{self.ref}/{item.app}", version=item.version, destination=str(dest))
        pulled = next(dest.glob("*.tgz"), None)
        if pulled is None:
            raise PublishError(f"{self.ref}/{item.app}:{item.version}: pull gave no package")
        theirs = content_hash(tree_of_package(pulled))
        if theirs != item.content:
            return refuse_other_content(item, self.ref, theirs)
        return Decision("skipped", f"{item.app}:{item.version} already has this content")

    def publish(self, item: Item, decision: Decision) -> str:
        tgz = package(item.tree, item.app, item.version, item.date, self.work / item.app)
        try:
            self.client.push(str(tgz), self.ref)
        except Exception as exc:
            raise self.redact.error(f"push {item.app}:{item.version} to {self.ref} failed: {exc}{self._hint(exc)}") from None
        return f"pushed {self.ref}/{item.app}:{item.version}"

    def finish(self, published: list[Item]) -> None:
        return None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
