"""`catalog new`: a model file's header (GGUF, or a Hugging Face repository's config.json) -> a catalog model with
its recorded real shape, and a fit-sized app on it (docs/new-model.md)."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Request", "new_app"]

if TYPE_CHECKING:
    from .build import Request as Request
    from .build import new_app as new_app

_FACE: dict[str, str] = {"Request": "build", "new_app": "build"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
