"""Scalar tag resolution, answered once per distinct scalar.

PyYAML's loaders ask their resolver about every scalar and its emitter asks twice; catalog files and charts
repeat the same keys and values, and each answer is a regex walk in Python.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import ScalarNode

_LIMIT = 8192  # distinct scalars remembered per class; past it the memo starts over


class CachedScalarResolve:
    """Mixin placed before a PyYAML Loader or Dumper class: each subclass memoises its own scalar tags.

    The answer depends only on the value, `implicit` and the class's implicit-resolver table (we register no
    path resolvers), so the table must be complete before the class resolves anything.
    """

    _tags: dict[tuple[str, Any], str] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._tags = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)  # type: ignore[misc]
        key = (value, implicit)
        tag = self._tags.get(key)
        if tag is None:
            if len(self._tags) >= _LIMIT:
                self._tags.clear()
            tag = self._tags[key] = super().resolve(kind, value, implicit)  # type: ignore[misc]
        return tag
