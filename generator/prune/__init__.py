"""Which deprecated apps may go (the gate), removing them, and the market's SUSPEND / REMOVE change.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["AppChanges", "PruneItem", "plan", "prepare", "replacements"]

if TYPE_CHECKING:
    from .apply import AppChanges as AppChanges
    from .gate import PruneItem as PruneItem
    from .gate import plan as plan
    from .apply import prepare as prepare
    from .gate import replacements as replacements

_FACE: dict[str, str] = {"AppChanges": "apply", "PruneItem": "gate", "plan": "gate", "prepare": "apply",
                         "replacements": "gate"}

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
