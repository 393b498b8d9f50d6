"""Plain data: what the YAML emitter (generator/yamlio/yamlout.py) and `json.dumps` take.

Stages hand each other typed objects; a typed object turns into `Data` only where it is written out
(`to_data()` / `as_dict()` at the YAML or JSON boundary). Mappings keep their insertion order.
"""

from __future__ import annotations

from typing import TypeAlias

Data: TypeAlias = "dict[str, Data] | list[Data] | str | int | float | bool | None"

__all__ = ["Data"]
