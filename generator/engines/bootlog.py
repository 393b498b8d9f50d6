"""A boot log read line by line: what `catalog calibrate` shares between the engine families' readers.

Each family's module (`generator/engines/<family>.py`) holds its `BootReader` (engines/interface.py): `read` takes
one line of the log into a `Parsed` (typed `Reading`s, the model and engine the log names), `rows` turns the
readings of a log of that engine into `Calibration` rows with their `Provenance`. generator/fit/calibrate.py runs
the readers over a log; nothing here writes: generator/cli/calibrate.py does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Literal

from pydantic import ValidationError

from generator.core import InputError, Problem
from generator.core import safe_line
from generator.schema import Calibration

GIB_MIB = 1024.0
NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"  # one figure of a line, thousands commas allowed


@dataclass(frozen=True)
class Reading:
    """One figure a boot log printed: what, its value, the device or qualifier, and the line it came from."""

    kind: str
    value: float
    line: int
    text: str
    device: str = ""
    context: int | None = None  # tokens the figure refers to (max seq len, cells)
    detail: str = ""  # cache types, layer counts: kept for the row's `what`
    scope: int = 0  # llama.cpp: which llama_context (0 = the target, 1 = an MTP / draft context, ...)


@dataclass
class Parsed:
    engine: str | None = None  # the family whose lines the log holds (generator/schema/engines.py)
    readings: list[Reading] | None = None
    model: str = ""  # the model the log names (vLLM model=..., llama.cpp general.name)
    model_file: str = ""  # llama.cpp: the GGUF it loaded
    version: str = ""
    n_ctx: int | None = None
    ubatch: int | None = None
    kv_type: str = ""
    models: list[tuple[int, str]] | None = None  # every model the log loads, (line, name): one boot has one
    scope: int = -1  # llama.cpp: the llama_context the lines belong to (-1: none constructed yet)

    def named(self) -> list[tuple[int, str]]:
        """The models the log names, each once, in order."""
        seen: dict[str, int] = {}
        for line, name in self.models or []:
            seen.setdefault(name, line)
        return [(line, name) for name, line in seen.items()]

    def all(self, kind: str) -> list[Reading]:
        return [r for r in self.readings or [] if r.kind == kind]

    def first(self, kind: str) -> Reading | None:
        found = self.all(kind)
        return found[0] if found else None


# The largest figure a boot log can print: memory in MiB or GiB, token counts. 1 TiB of MiB (2^20) and 2^24 tokens
# are the schema's own caps (generator/schema/common.py); a figure above 2^40 is no figure of a real boot.
MAX_FIGURE = 2.0**40
MAX_DIGITS = 40  # of one number: `float()` of 309 digits is inf, `int()` of 4301 digits raises


class BadFigure(InputError):
    """A number of the log that is not a figure (too long, not finite, above MAX_FIGURE): fit/calibrate.py
    `parse` catches it and reports the line it is on."""

    def __init__(self, text: str):
        super().__init__(f"{safe_line(text, 60)} is not a figure")
        self.text = text


def figure(text: str) -> float:
    digits = text.replace(",", "")
    if len(digits) > MAX_DIGITS:
        raise BadFigure(text)
    value = float(digits)
    if not math.isfinite(value) or value > MAX_FIGURE:
        raise BadFigure(text)
    return value


def whole(text: str) -> int:
    return int(figure(text))


def add(out: Parsed, reading: Reading) -> None:
    assert out.readings is not None
    if reading.value > 0:  # `0.00 MiB`: nothing measured
        out.readings.append(reading)


@dataclass(frozen=True)
class Provenance:
    source: str  # where the log comes from (a file name, a URL, "stdin")
    image: str | None = None
    device: str | None = None
    cap_mib: int | None = None
    util: float | None = None
    quant: str | None = None
    when: date | None = None


@dataclass(frozen=True)
class Row:
    """A calibration row and where it goes: the app's file or the model's."""

    target: Literal["app", "model"]
    row: Calibration


def cal(measure: str, value_mib: float | None, what: str, p: Provenance, **extra: object) -> Calibration:
    """One row; a figure or a provenance the schema refuses (a negative CUDA context, a 3000-character note) is an
    InputError naming the row's measure and field, never a traceback."""
    fields: dict[str, object] = {"measure": measure, "what": what, "source": p.source, "image": p.image,
                                 "date": p.when}
    if value_mib is not None:
        fields["value_mib"] = round(value_mib, 2)
    fields.update({k: v for k, v in extra.items() if v is not None})
    try:
        return Calibration.model_validate(fields)
    except ValidationError as exc:
        why = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors())
        raise InputError([Problem(p.source, None, None, f"the {measure} row cannot be recorded ({safe_line(why, 300)})"
                                  "; check the log and the options given")]) from None


def noted(rows: list[Row], note: str, p: Provenance) -> list[Row]:
    """The rows with `note` appended to each `what`, validated again (a note can make a `what` too long)."""
    out = []
    for x in rows:
        fields = {k: v for k, v in x.row.model_dump(exclude_none=True).items() if k not in ("what", "measure")}
        value = fields.pop("value_mib", None)
        out.append(Row(x.target, cal(x.row.measure, value, f"{x.row.what}; {note}", p, **fields)))
    return out


@dataclass(frozen=True)
class BootReader:
    """The lines of the engine's boot log that `catalog calibrate` (generator/fit/calibrate.py) reads.

    read: one line of the log into the `Parsed` so far (engines/bootlog.py: its figures, the model and engine it
    names; a line of no interest to this engine leaves it as it was); rows: the readings of a log of this engine as
    calibration rows; needs: what such a log must hold, in words (said when it holds none of it).
    """

    read: Callable[[Parsed, str, int], None]
    rows: Callable[[Parsed, Provenance], list[Row]]
    needs: str


__all__ = ["GIB_MIB", "MAX_DIGITS", "MAX_FIGURE", "NUMBER", "BadFigure", "BootReader", "Parsed", "Provenance",
           "Reading", "Row", "add", "cal", "figure", "noted", "whole"]
