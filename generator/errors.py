"""The error tree the CLI turns into messages and exit codes (in one place: cli.py)."""

from __future__ import annotations

from dataclasses import dataclass


class CatalogError(Exception):
    """A problem the user can fix; carries one or more `file:line: field: message` lines."""

    def __init__(self, problems: list["Problem"] | str):
        if isinstance(problems, str):
            problems = [Problem(None, None, None, problems)]
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True)
class Problem:
    file: str | None
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


class UsageError(CatalogError):
    """Bad command-line use (exit code 2)."""
