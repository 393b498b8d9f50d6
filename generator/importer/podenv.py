"""A container's environment as the chart renders it (env, envFrom ConfigMaps, secrets, the downward
API), each entry with the chart file and line it came from (`Lines`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.core import Problem
from generator.engines import Origin
from generator.importer.helmview import Rendered, marked_envs
from generator.importer.shellwords import ShellError, k8s_expand
from generator.lint import Doc


@dataclass(frozen=True)
class EnvEntry:
    name: str
    value: str | None  # None: from a Secret or the downward API
    via: str  # "env", "configMap <name>", "secret <name>", "field"
    origin: Origin
    olares: tuple[str, ...] = ()  # the manifest envs its value renders from


class Lines:
    """Line lookups in the chart's source files for rendered values."""

    def __init__(self, rendered: Rendered):
        self.r = rendered

    def find(self, rel: str, *needles: str, after: int = 1) -> int | None:
        return self.r.line(rel, *needles, after=after)

    def origin(self, rel: str, *needles: str, after: int = 1, fallback: int | None = None) -> Origin:
        line = self.find(rel, *needles, after=after) if needles else None
        return Origin(self.r.where(rel), line or fallback)

    def container_anchor(self, doc: Doc, name: str) -> int:
        for needle in (f"name: {name}", f'name: "{name}"', f"name: '{name}'"):
            line = self.find(doc.source, needle)
            if line:
                return line
        return self.find(doc.source, "containers:") or 1

    def value(self, rel: str, text: str, after: int) -> Origin:
        """The line of a rendered list element: in the template after `after`, else in values.yaml."""
        probe = text if "\n" not in text else text.strip().splitlines()[0].strip()
        if probe:
            line = self.find(rel, probe, after=after)
            if line:
                return Origin(self.r.where(rel), line)
            if "values.yaml" in self.r.files.files:
                line = self.find("values.yaml", probe)
                if line:
                    return Origin(self.r.where("values.yaml"), line)
        return Origin(self.r.where(rel), after)


def _configmaps(docs: list[Doc]) -> dict[str, Doc]:
    return {d.name: d for d in docs if d.kind == "ConfigMap"}


def resolve_env(rendered: Rendered, lines: Lines, doc: Doc, container: Mapping[str, object], anchor: int,
                problems: list[Problem]) -> dict[str, EnvEntry]:
    """The container's environment as Kubernetes builds it: envFrom first, then env (which wins)."""
    maps = _configmaps(rendered.docs)
    env: dict[str, EnvEntry] = {}
    env_from, items = container.get("envFrom"), container.get("env")
    for source in env_from if isinstance(env_from, list) else ():
        if isinstance(source, dict):
            _env_from(source, maps, lines, doc, anchor, problems, env)
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or not item.get("name"):
            continue
        name = str(item["name"])
        origin = lines.origin(doc.source, "name:", name, after=anchor, fallback=anchor)
        if "value" in item:
            raw = "" if item["value"] is None else str(item["value"])
            try:
                value, _undefined = k8s_expand(raw, {k: e.value for k, e in env.items() if e.value is not None})
            except ShellError as exc:  # past what exec passes: the value is not known (issue 40 cause 2)
                problems.append(Problem(str(origin), None, None, f"env {name}: {exc}"))
                env[name] = EnvEntry(name, None, "env", origin, ())
                continue
            env[name] = EnvEntry(name, value, "env", origin, tuple(marked_envs(value)))
        else:
            env[name] = _value_from(name, item.get("valueFrom") or {}, maps, origin)
    return env


def _env_from(source: dict[str, Any], maps: dict[str, Doc], lines: Lines, doc: Doc, anchor: int,
              problems: list[Problem], env: dict[str, EnvEntry]) -> None:
    """One `envFrom` entry: a ConfigMap's keys join `env` (with the prefix); a Secret's cannot be known."""
    prefix = str(source.get("prefix") or "")
    ref = source.get("configMapRef") or {}
    if ref:
        cm = maps.get(str(ref.get("name")))
        if cm is None:
            if not ref.get("optional"):
                problems.append(Problem(str(lines.origin(doc.source, "configMapRef", after=anchor)), None, None,
                                        f"envFrom names ConfigMap {ref.get('name')!r}, which the chart does not "
                                        "define; add it or mark it optional"))
            return
        cm_anchor = lines.find(cm.source, f"name: {cm.name}") or lines.find(cm.source, cm.name) or 1
        for key, value in (cm.body.get("data") or {}).items():
            text = "" if value is None else str(value)
            origin = lines.origin(cm.source, f"{key}:", after=cm_anchor, fallback=cm_anchor)
            env[prefix + str(key)] = EnvEntry(prefix + str(key), text, f"configMap {cm.name}", origin,
                                              tuple(marked_envs(text)))
    secret = source.get("secretRef") or {}
    if secret:
        problems.append(Problem(str(lines.origin(doc.source, "secretRef", after=anchor)), None, None,
                                f"envFrom reads Secret {secret.get('name')!r}: its keys cannot be known from the "
                                "chart; list the variables under `env:` instead"))


def _value_from(name: str, source: dict[str, Any], maps: dict[str, Doc], origin: Origin) -> EnvEntry:
    """An `env` item without `value`: a ConfigMap key (known when the chart defines it), a Secret key or a field."""
    if "configMapKeyRef" in source:
        ref = source["configMapKeyRef"] or {}
        cm = maps.get(str(ref.get("name")))
        data = (cm.body.get("data") or {}) if cm else {}
        if str(ref.get("key")) in data:
            text = str(data[str(ref.get("key"))])
            return EnvEntry(name, text, f"configMap {ref.get('name')}", origin, tuple(marked_envs(text)))
        return EnvEntry(name, None, f"configMap {ref.get('name')} (missing)", origin)
    if "secretKeyRef" in source:
        ref = source["secretKeyRef"] or {}
        return EnvEntry(name, None, f"secret {ref.get('name')}/{ref.get('key')}", origin)
    return EnvEntry(name, None, "field", origin)


__all__ = ["EnvEntry", "Lines", "resolve_env"]
