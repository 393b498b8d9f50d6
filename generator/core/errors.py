"""The one error tree. The CLI (generator/cli/__init__.py) is the only place that turns it into messages and
exit codes; every other module raises a branch of `CatalogError` and never prints.

    CatalogError                  root; `exit_code` says how the CLI ends
    ├── InputError                a catalog or input file is wrong: `file:line: field: message` lines, exit 1
    ├── UsageError                bad command-line use, exit 2
    ├── FindingsError             the work ran and found problems (failed rules, stale charts), exit 1
    └── ExternalError             the environment failed us, exit 2: a plain message naming the path, tool or server
        ├── FileSystemError       an OSError on a path (permission, full disk, not a folder)
        ├── ToolError             an external program or library (git, Helm, a registry) failed
        ├── MissingDependency     an optional Python module or program is not installed (says how to install it)
        └── RemoteError           a server answered wrongly, not at all, or not before its deadline

Third-party exceptions are translated where an adapter calls them (`translate_os_error`, or the adapter's
own `except` around the one call), as httpx's `map_exceptions` does, so their causes are never flattened
into strings far from where they happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.core.text import safe_line


@dataclass(frozen=True)
class Problem:
    """One `file:line: field: message` line."""

    file: str | None
    line: int | None
    field: str | None
    message: str
    follows: bool = False  # a consequence of a problem listed before it (one error per cause): not counted

    def __str__(self) -> str:
        """One line: file names, YAML keys and values quoted in messages are untrusted (core/text.py)."""
        where = ""
        if self.file:
            where = f"{safe_line(self.file)}:{self.line}: " if self.line else f"{safe_line(self.file)}: "
        field = f"{safe_line(self.field)}: " if self.field else ""
        return f"{where}{field}{safe_line(self.message)}"


class CatalogError(Exception):
    """The root of every error the tool raises on purpose; carries one or more `Problem` lines."""

    exit_code = 1

    def __init__(self, problems: list[Problem] | str):
        if isinstance(problems, str):
            problems = [Problem(None, None, None, problems)]
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class InputError(CatalogError):
    """A catalog file or another input the user gave is wrong (exit 1); nothing was written."""


class UsageError(CatalogError):
    """Bad command-line use (exit 2)."""

    exit_code = 2


class FindingsError(CatalogError):
    """The work ran to the end and found problems the user must fix (exit 1)."""


class ExternalError(CatalogError):
    """The environment failed: a path, a program, a module or a server (exit 2)."""

    exit_code = 2


class FileSystemError(ExternalError):
    """An OSError on a path the tool reads or writes."""


class ToolError(ExternalError):
    """An external program or library (git, Helm, an OCI registry client) failed."""


class MissingDependency(ExternalError):
    """An optional module or program is not installed; the message says how to install it."""


class RemoteError(ExternalError):
    """A server answered wrongly, not at all, or not before its deadline."""


def translate_os_error(exc: OSError, path: Path | str | None = None, doing: str = "") -> FileSystemError:
    """A FileSystemError naming the path and the system's reason (`cannot write /proc/x: Permission denied`)."""
    where = path if path is not None else exc.filename
    reason = exc.strerror or type(exc).__name__
    verb = f"cannot {doing} " if doing else ""
    return FileSystemError(f"{verb}{where}: {reason}" if where is not None else f"{verb.strip()}: {reason}")


def missing_module(module: str, extra: str | None = None) -> MissingDependency:
    """The error for an optional module that is not installed, with the exact pip command."""
    target = f"'olares-llm-catalog[{extra}]'" if extra else module
    return MissingDependency(f"the Python module {module!r} is not installed: pip install {target}")
