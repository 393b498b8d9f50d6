"""Flag tables per pinned engine image (data in catalog/flags/) and the check of an argv against them.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["ArgvChecker", "FlagTable", "FlagTables", "Issue", "Token", "check_env", "tokens"]

if TYPE_CHECKING:
    from .check import ArgvChecker as ArgvChecker
    from .tables import FlagTable as FlagTable
    from .tables import FlagTables as FlagTables
    from .check import Issue as Issue
    from .check import Token as Token
    from .check import check_env as check_env
    from .check import tokens as tokens

_FACE: dict[str, str] = {"ArgvChecker": "check", "FlagTable": "tables", "FlagTables": "tables", "Issue": "check",
                         "Token": "check", "check_env": "check", "tokens": "check"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
