"""Kubernetes schema validation of rendered documents, with the schemas loaded once per process.

`kubernetes_validate.utils.validate` re-reads the 1.3 MB `_definitions.json` on every call (~30 ms,
docs/testing.md §3). This module validates against the same strict JSON schemas the package ships, with
the same version choice and the same `referencing` registry, but builds each validator once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from generator.core import require

KUBE_VERSION = "1.30.0"


@dataclass(frozen=True)
class SchemaError:
    path: str  # dotted path in the document, e.g. spec.template.spec.containers.0.resources
    message: str


class UnknownKind(Exception):
    """No schema for this apiVersion/kind in the pinned Kubernetes version (a CRD, or a typo)."""


@lru_cache(maxsize=4)
def _schema_dir(version: str) -> Path:
    kvu = require("kubernetes_validate.utils", "lint")

    wanted = kvu.major_minor(version)
    chosen = [v for v in kvu.all_versions() if kvu.major_minor(v) <= wanted][-1]
    return Path(str(kvu.__file__)).resolve().parent / "kubernetes-json-schema" / f"v{chosen}-local-strict"


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=4)
def _registry(version: str) -> Any:
    referencing = require("referencing", "lint")

    definitions = referencing.Resource.from_contents(_read(_schema_dir(version) / "_definitions.json"))
    return definitions @ referencing.Registry()


def _schema_file(api_version: str, kind: str, version: str) -> Path:
    import re

    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # rbac.authorization.k8s.io/v1 -> rbac-v1
    return _schema_dir(version) / f"{kind.lower()}-{group}.json"


@lru_cache(maxsize=128)
def _validator(api_version: str, kind: str, version: str) -> Any:
    jsonschema = require("jsonschema", "lint")
    referencing = require("referencing", "lint")

    path = _schema_file(api_version, kind, version)
    if not path.is_file():
        raise UnknownKind(f"no Kubernetes {version} schema for kind {kind} in {api_version}")
    schema = _read(path)
    registry = referencing.Resource.from_contents(schema) @ _registry(version)
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def validate(doc: dict[str, Any], version: str = KUBE_VERSION) -> list[SchemaError]:
    """Every strict-schema error of one document (kubernetes-validate reports only the first)."""
    validator = _validator(str(doc.get("apiVersion", "")), str(doc.get("kind", "")), version)
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    return [SchemaError(".".join(str(p) for p in e.absolute_path) or "(document)", e.message) for e in errors]
