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

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
