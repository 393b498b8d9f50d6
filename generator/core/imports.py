"""Optional Python modules, imported where they are used (so `catalog --help` stays fast and a missing extra
only matters to the command that needs it).

Every lazy import of a module from an optional extra goes through `require`, so a missing module is a
`MissingDependency` naming the exact `pip install` command (exit 2), never a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from generator.core.errors import missing_module


def require(module: str, extra: str | None = None) -> ModuleType:
    """`module` imported; MissingDependency with `pip install 'olares-llm-catalog[extra]'` when it is not installed.

    `module` may be dotted (`kubernetes.stream`). The error names the top-level package Python could not import
    (`ImportError.name`): the package itself, or one of its own dependencies, installed by the same extra.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_module((exc.name or module).partition(".")[0], extra) from exc


__all__ = ["require"]
