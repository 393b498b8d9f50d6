"""Plain data: what the YAML emitter (generator/yamlio/yamlout.py) and `json.dumps` take.

Stages hand each other typed objects; a typed object turns into `Data` only where it is written out
(`to_data()` / `as_dict()` at the YAML or JSON boundary). Mappings keep their insertion order.
"""

from __future__ import annotations

from typing import Any, TypeAlias

Data: TypeAlias = "dict[str, Data] | list[Data] | str | int | float | bool | None"


def tuples(value: Any) -> Any:
    """`value` with every list a tuple, inside mappings too: what the strict models' tuple fields validate (an app
    built from a chart's plain data, generator/importer/)."""
    if isinstance(value, dict):
        return {k: tuples(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(tuples(v) for v in value)
    return value


__all__ = ["Data", "tuples"]
