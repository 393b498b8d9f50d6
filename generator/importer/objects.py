"""Typed reads of a Kubernetes object as Helm rendered it (a container, a pod spec, a probe).

A chart someone else wrote may hold any shape: a field of another shape than Kubernetes gives it reads as absent
(an empty list or mapping), so the reader reports what it finds and never crashes on it.
"""

from __future__ import annotations

from collections.abc import Mapping


def items(obj: Mapping[str, object], key: str) -> list[object]:
    """`obj[key]` when it is a list, else an empty one."""
    value = obj.get(key)
    return value if isinstance(value, list) else []


def maps(obj: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    """The mappings of the list `obj[key]` (volumeMounts, ports, envFrom entries)."""
    return [v for v in items(obj, key) if isinstance(v, dict)]


def section(obj: Mapping[str, object], key: str) -> Mapping[str, object]:
    """`obj[key]` when it is a mapping, else an empty one."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


__all__ = ["items", "maps", "section"]
