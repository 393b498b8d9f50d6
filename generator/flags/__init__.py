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

if not TYPE_CHECKING:
    def __getattr__(name: str) -> object:
        """PEP 562: load a public name from its submodule on first use, then keep it here."""
        try:
            module = _FACE[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = __import__(f"{__name__}.{module}", fromlist=(name,))  # the submodule
        if name != module:
            value = getattr(value, name)
        globals()[name] = value
        return value
