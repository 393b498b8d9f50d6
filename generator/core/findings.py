"""A finding of a rule or a lint: what is wrong, how bad, how to fix it, and where."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from generator.core.data import Data

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    rule: str  # e.g. HAMI001, FLAG002, OLARES004
    severity: Severity
    app: str
    message: str
    fix: str = ""
    file: str | None = None  # catalog file (or chart file) the finding points at
    line: int | None = None

    def as_dict(self) -> dict[str, Data]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{where}{self.rule} {self.severity}: {self.message}.{fix}"


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)
