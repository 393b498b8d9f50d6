"""The error tree, findings, the rule registry, atomic writes, optional imports, text escaping and redaction.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["CatalogChoice", "CatalogError", "Data", "ExternalError", "FileSystemError", "Finding", "FindingsError",
           "InputError", "Lazy", "MASK", "Maker", "MissingDependency", "Once", "Problem", "RULES", "RemoteError",
           "Rule", "Severity", "Stage", "ToolError", "UsageError", "atomic_write_text", "build_script",
           "choose_catalog", "credentials", "diskcache", "embedded_catalog", "has_errors", "inside_package",
           "iter_lines", "journal", "literal_secret", "lock", "markup", "missing_module", "plural", "printable",
           "read_regular_file", "read_sized", "require", "safe_line", "safe_url", "secret_forms", "secret_name",
           "secrets_in", "split_userinfo", "templates_dir", "translate_os_error", "tuples", "writable"]

if TYPE_CHECKING:
    from .locate import CatalogChoice as CatalogChoice
    from .errors import CatalogError as CatalogError
    from .data import Data as Data
    from .errors import ExternalError as ExternalError
    from .errors import FileSystemError as FileSystemError
    from .findings import Finding as Finding
    from .errors import FindingsError as FindingsError
    from .errors import InputError as InputError
    from .lazy import Lazy as Lazy
    from .redact import MASK as MASK
    from .lazy import Maker as Maker
    from .errors import MissingDependency as MissingDependency
    from .lazy import Once as Once
    from .errors import Problem as Problem
    from .ruleset import RULES as RULES
    from .errors import RemoteError as RemoteError
    from .ruleset import Rule as Rule
    from .findings import Severity as Severity
    from .ruleset import Stage as Stage
    from .errors import ToolError as ToolError
    from .errors import UsageError as UsageError
    from .fileio import atomic_write_text as atomic_write_text
    from .locate import build_script as build_script
    from .locate import choose_catalog as choose_catalog
    from .redact import credentials as credentials
    from . import diskcache as diskcache
    from .locate import embedded_catalog as embedded_catalog
    from .findings import has_errors as has_errors
    from .locate import inside_package as inside_package
    from .bounded import iter_lines as iter_lines
    from .fileio import journal as journal
    from .redact import literal_secret as literal_secret
    from . import lock as lock
    from .terminal import markup as markup
    from .errors import missing_module as missing_module
    from .text import plural as plural
    from .terminal import printable as printable
    from .bounded import read_regular_file as read_regular_file
    from .bounded import read_sized as read_sized
    from .imports import require as require
    from .text import safe_line as safe_line
    from .redact import safe_url as safe_url
    from .redact import secret_forms as secret_forms
    from .redact import secret_name as secret_name
    from .redact import secrets_in as secrets_in
    from .redact import split_userinfo as split_userinfo
    from .locate import templates_dir as templates_dir
    from .errors import translate_os_error as translate_os_error
    from .data import tuples as tuples
    from .fileio import writable as writable

_FACE: dict[str, str] = {"CatalogChoice": "locate", "CatalogError": "errors", "Data": "data",
                         "ExternalError": "errors", "FileSystemError": "errors", "Finding": "findings",
                         "FindingsError": "errors", "InputError": "errors", "Lazy": "lazy", "MASK": "redact",
                         "Maker": "lazy", "MissingDependency": "errors", "Once": "lazy", "Problem": "errors",
                         "RULES": "ruleset", "RemoteError": "errors", "Rule": "ruleset", "Severity": "findings",
                         "Stage": "ruleset", "ToolError": "errors", "UsageError": "errors",
                         "atomic_write_text": "fileio", "build_script": "locate", "choose_catalog": "locate",
                         "credentials": "redact", "diskcache": "diskcache", "embedded_catalog": "locate",
                         "has_errors": "findings", "inside_package": "locate", "iter_lines": "bounded",
                         "journal": "fileio", "literal_secret": "redact", "lock": "lock", "markup": "terminal",
                         "missing_module": "errors", "plural": "text", "printable": "terminal",
                         "read_regular_file": "bounded", "read_sized": "bounded", "require": "imports",
                         "safe_line": "text", "safe_url": "redact", "secret_forms": "redact",
                         "secret_name": "redact", "secrets_in": "redact", "split_userinfo": "redact",
                         "templates_dir": "locate", "translate_os_error": "errors", "tuples": "data",
                         "writable": "fileio"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
