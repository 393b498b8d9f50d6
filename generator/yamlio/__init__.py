"""YAML in with line numbers, deterministic YAML out, and the one scalar resolver.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Document", "MAX_FILE_BYTES", "UntrustedLoader", "chartdata", "dump", "load", "load_model",
           "load_untrusted", "parse_document", "read_bytes", "read_document", "refuse_aliases",
           "validation_problems", "yamlout"]

if TYPE_CHECKING:
    from .loader import Document as Document
    from .loader import MAX_FILE_BYTES as MAX_FILE_BYTES
    from .loader import UntrustedLoader as UntrustedLoader
    from . import chartdata as chartdata
    from .yamlout import dump as dump
    from .yamlout import load as load
    from .loader import load_model as load_model
    from .loader import load_untrusted as load_untrusted
    from .loader import parse_document as parse_document
    from .loader import read_bytes as read_bytes
    from .loader import read_document as read_document
    from .loader import refuse_aliases as refuse_aliases
    from .loader import validation_problems as validation_problems
    from . import yamlout as yamlout

_FACE: dict[str, str] = {"Document": "loader", "MAX_FILE_BYTES": "loader", "UntrustedLoader": "loader",
                         "chartdata": "chartdata", "dump": "yamlout", "load": "yamlout", "load_model": "loader",
                         "load_untrusted": "loader", "parse_document": "loader", "read_bytes": "loader",
                         "read_document": "loader", "refuse_aliases": "loader", "validation_problems": "loader",
                         "yamlout": "yamlout"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
