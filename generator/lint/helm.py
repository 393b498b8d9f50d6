"""Lint and render a chart folder with the Helm engine, through the Helm adapter (generator/adapters/helm.py).

The adapter is the only module that imports helm_python; it is imported lazily so `catalog --help`
stays fast.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from generator.adapters import Helm
from generator.core import translate_os_error

KUBE_VERSION = "v1.30.0"
_SAFE_DIR = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


@dataclass(frozen=True)
class Doc:
    """One rendered Kubernetes document and the template it came from."""

    source: str  # chart-relative template path, e.g. templates/deployment.yaml
    body: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        return str((self.body.get("metadata") or {}).get("name", ""))

    @property
    def namespace(self) -> str | None:
        ns = (self.body.get("metadata") or {}).get("namespace")
        return None if ns in (None, "") else str(ns)

    @property
    def label(self) -> str:
        return f"{self.kind or '?'}/{self.name or '?'}"


@contextlib.contextmanager
def chart_folder(name: str, tree: dict[str, str]) -> Iterator[Path]:
    """Write the tree to a temporary `<name>/` folder (Helm loads charts from disk) and remove it after."""
    root = Path(tempfile.mkdtemp(prefix="catalog-lint-"))
    folder = root / (name if _SAFE_DIR.match(name) and name not in (".", "..") else "chart")
    try:
        for rel, text in tree.items():
            path = folder / rel
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            except OSError as exc:  # a full disk: the message names the path (`write` errors carry none)
                raise translate_os_error(exc, path, "write") from exc
        folder.mkdir(exist_ok=True)
        yield folder
    finally:
        shutil.rmtree(root, ignore_errors=True)


def lint_errors(folder: Path, values: dict[str, Any], *, engine: Helm | None = None) -> list[tuple[str, str]]:
    """(path, message) of every severity-3 message of `helm lint --strict` (`engine`: the Helm adapter)."""
    report = (engine or Helm()).lint(folder, values, kube_version=KUBE_VERSION, strict=True)
    found = [(m.path, m.message) for m in report.messages if m.severity == 3]
    seen = {message for _, message in found}
    # a chart Helm cannot even open (no Chart.yaml) reports only in `errors`, with no message
    return found + [("", e) for e in report.errors if e not in seen]


def render(folder: Path, values: dict[str, Any], *, name: str, namespace: str,
           engine: Helm | None = None) -> dict[str, str]:
    """{chart-relative template path: text}; raises the adapter's HelmFailure when the engine fails."""
    out = (engine or Helm()).render(folder, values, name=name, namespace=namespace)
    prefix = f"{folder.name}/"
    return {(k[len(prefix):] if k.startswith(prefix) else k): v for k, v in sorted(out.items())}


def yaml_loader() -> Any:
    """PyYAML's safe loader (libyaml when built with it): YAML 1.1, as Go's yaml reads charts; an alias or nesting
    past 64 levels is refused before anything is constructed (yamlio/loader.py `UntrustedLoader`): Helm's output of
    a stranger's chart is input from outside."""
    from generator.yamlio import UntrustedLoader

    return UntrustedLoader


def documents(rendered: dict[str, str]) -> tuple[list[Doc], list[tuple[str, str]]]:
    """Parse rendered templates; returns (docs, [(source, parse error)])."""
    import yaml

    loader = yaml_loader()
    docs: list[Doc] = []
    errors: list[tuple[str, str]] = []
    for source, text in rendered.items():
        if not source.endswith((".yaml", ".yml")) or Path(source).name.startswith("_"):
            continue  # NOTES.txt, helpers
        try:
            parsed = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
        except yaml.YAMLError as exc:
            errors.append((source, f"rendered output is not YAML: {exc}".replace("\n", " ")))
            continue
        for body in parsed:
            if isinstance(body, dict):
                docs.append(Doc(source, body))
            else:
                errors.append((source, f"a rendered document is a {type(body).__name__}, not a Kubernetes object"))
    return docs, errors
