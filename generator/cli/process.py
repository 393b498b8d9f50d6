"""Process-wide settings of a `catalog` run, applied when the CLI package is imported (before pydantic is).

- A command is a short process that allocates many small objects and frees few cycles (the catalog's pydantic
  models, parsed YAML): CPython's default first-generation threshold (700) collects hundreds of times for nothing.
  Collections stay on (`serve` runs for long), only rarer (docs.python.org/3/library/gc.html#gc.set_threshold).
- The catalog uses no pydantic plugin: without PYDANTIC_DISABLE_PLUGINS pydantic scans every installed
  distribution's entry points at the first model class (docs.pydantic.dev/latest/concepts/plugins/); a value the
  user set wins.
"""

import gc
import os

GC_THRESHOLD = (50_000, 20, 20)


def apply() -> None:
    gc.set_threshold(*GC_THRESHOLD)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


apply()
