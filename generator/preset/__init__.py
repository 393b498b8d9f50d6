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
