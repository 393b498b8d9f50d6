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

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
