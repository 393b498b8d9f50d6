"""Process-wide settings of a `catalog` run, applied when the CLI package is imported (before pydantic is).

- A command is a short process that allocates many small objects and frees few cycles (the catalog's pydantic
  models, parsed YAML): CPython's default first-generation threshold (700) collects hundreds of times for nothing.
  Collections stay on (`serve` runs for long), only rarer (docs.python.org/3/library/gc.html#gc.set_threshold).
- The catalog uses no pydantic plugin: without PYDANTIC_DISABLE_PLUGINS pydantic scans every installed
  distribution's entry points at the first model class (docs.pydantic.dev/latest/concepts/plugins/); a value the
  user set wins.
- At exit, everything still alive is frozen (`gc.freeze()`, docs.python.org/3/library/gc.html#gc.freeze) before the
  interpreter shuts down: shutdown runs up to four full collections over every object of the run (the catalog's
  models, the imported modules' functions), about a tenth of a short command's instructions, to free memory the
  process is about to give back anyway. Only the process entry (`entry()` below, the `catalog` script and
  `python -m generator.cli`) does it: `generator.cli.main`, called in-process by tests and scripts, leaves the
  collector as it was. atexit handlers and `weakref.finalize` callbacks (temporary folders) run as before.
"""

import gc
import os

GC_THRESHOLD = (50_000, 20, 20)


def apply() -> None:
    gc.set_threshold(*GC_THRESHOLD)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def before_exit() -> None:
    gc.freeze()


apply()
