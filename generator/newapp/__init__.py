"""`catalog new`: a model file's header (GGUF, or a Hugging Face repository's config.json) -> a catalog model with
its recorded real shape, and a fit-sized app on it (docs/new-model.md)."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Request", "new_app"]

if TYPE_CHECKING:
    from .build import Request as Request
    from .build import new_app as new_app

_FACE: dict[str, str] = {"Request": "build", "new_app": "build"}

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
