"""What one chart's import gave: the `Imported` result, the app fields an import sets, and how its
`unmapped` entries sort.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypedDict

from generator.core import Data
from generator.core import Problem
from generator.importer import programs
from generator.schema import App

APP_KEYS = tuple(App.model_fields)
CHART_FIELDS = ("name", "title", "description", "full_description", "icon", "owners", "model", "quantization",
                "stack", "device", "context_length", "served_name", "kv_cache_type", "kv_cache_type_v", "speculative",
                "vision", "mmproj", "audio", "chat_template", "slot_save", "python_packages",
                "genesis_patches", "gpu_memory_mib", "gpu_memory_utilization", "resources", "env",
                "extra_args", "version", "upgrade_description", "unmapped", "form")
"""The app fields an import sets (the fields a chart determines, plus `unmapped`); `--update` changes only
these. Status, benchmarks, calibration, probe and the deprecation fields are not in a chart."""


class ImportedJson(TypedDict):
    """One chart's entry of `catalog import --json` (`apps`), in its key order (docs/import.md)."""

    path: str
    name: str | None
    status: str
    profile: str | None
    engine: str | None
    stack: str | None
    stack_draft: bool
    model: str | None
    model_draft: bool
    unsupported: str | None
    missing: list[str]
    unmapped: list[str]
    kept: list[str]
    notes: list[str]
    problems: list[str]
    app: dict[str, Data] | None


@dataclass
class Imported:
    label: str
    name: str | None = None
    status: str = "error"  # ok, draft, unsupported, error
    profile: str | None = None
    engine: str | None = None
    stack: str | None = None
    stack_draft: bool = False
    model: str | None = None
    model_draft: bool = False
    app: dict[str, Data] | None = None  # the app file's data, in field order
    unmapped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unsupported: str | None = None
    problems: list[Problem] = field(default_factory=list)
    launcher: list[tuple[int | None, str]] = field(default_factory=list)  # (line, text) run before the engine
    gpu_memory_from: tuple[str, str] | None = None  # (figure, file:line) gpu_memory_mib was taken from
    carried: tuple[str, ...] = ()  # app fields the chart's catalog block sets (importer/carry.py); `--update` too
    app_notes: list[str] = field(default_factory=list)  # notes the written app file carries in its header

    def as_dict(self) -> ImportedJson:
        return {"path": self.label, "name": self.name, "status": self.status, "profile": self.profile,
                "engine": self.engine, "stack": self.stack, "stack_draft": self.stack_draft, "model": self.model,
                "model_draft": self.model_draft, "unsupported": self.unsupported, "missing": self.missing,
                "unmapped": self.unmapped, "kept": self.kept, "notes": self.notes,
                "problems": [str(p) for p in self.problems], "app": self.app}


def _unsupported(result: Imported, found: programs.Unsupported) -> Imported:
    result.status = "unsupported"
    result.unsupported = f"{found.kind}: {found.server} (recognised by {found.why})"
    result.unmapped, result.kept, result.app = [], [], None
    return result


def _where_key(entry: str) -> tuple[str, int]:
    match = re.match(r"^(.*?):([0-9]+): ", entry)
    return (match.group(1), int(match.group(2))) if match else (entry.split(": ", 1)[0], 0)


__all__ = ["APP_KEYS", "CHART_FIELDS", "Imported", "ImportedJson"]
