"""Lint one rendered chart: the Helm engine, the Kubernetes schemas and Olares' chart rules.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Doc", "OWNER", "documents", "lint_chart", "olares_values", "parse_quantity", "run", "why_not_run"]

if TYPE_CHECKING:
    from .helm import Doc as Doc
    from .values import OWNER as OWNER
    from .helm import documents as documents
    from .run import lint_chart as lint_chart
    from .values import olares_values as olares_values
    from .quantity import parse_quantity as parse_quantity
    from . import run as run
    from .oac import why_not_run as why_not_run

_FACE: dict[str, str] = {"Doc": "helm", "OWNER": "values", "documents": "helm", "lint_chart": "run",
                         "olares_values": "values", "parse_quantity": "quantity", "run": "run",
                         "why_not_run": "oac"}

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
