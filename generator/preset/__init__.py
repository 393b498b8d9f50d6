"""`catalog preset`: the env values a user sets on one of Olares' own engine bases for an app of the catalog."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Preset", "base_for", "build_preset", "flag_table", "load_base", "page_preset"]

if TYPE_CHECKING:
    from .build import Preset as Preset
    from .build import base_for as base_for
    from .build import build_preset as build_preset
    from .bases import flag_table as flag_table
    from .bases import load_base as load_base
    from .build import page_preset as page_preset

_FACE: dict[str, str] = {"Preset": "build", "base_for": "build", "build_preset": "build", "flag_table": "bases",
                         "load_base": "bases", "page_preset": "build"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
