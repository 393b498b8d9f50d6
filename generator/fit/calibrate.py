"""Boot logs -> calibration rows: what the engines print about memory at boot, read back as measured figures.

Each engine family reads its own lines (its module's `BootReader`, generator/engines/bootlog.py, which cites the
format strings of the engine's source at the pinned version: vLLM in generator/engines/vllm.py, llama-server in
generator/engines/llamacpp.py, SGLang in generator/engines/sglang.py); the shared types are generator/engines/
bootlog.py's. `parse()` runs every registered family's reader over each line of a log into typed `Reading`s,
`rows_of()` turns them into `Calibration` rows of the family the log is of, with their provenance. Nothing here
writes: `generator/cli/calibrate.py` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Literal, Protocol

from generator.catalog import Resolved
from generator.core import InputError, Problem
from generator.core import safe_line
from generator.engines import MAX_DIGITS, BadFigure, BootReader, Parsed, Provenance, Reading, Row, noted
from generator.engines import FAMILIES, Family
from generator.engines.family import family
from generator.fit.ledger import Pool
from generator.schema import Calibration


def readers() -> list[tuple[Family, BootReader]]:
    """The registered families whose boot logs `catalog calibrate` reads, in the registry's order."""
    return [(name, boot) for name in FAMILIES if (boot := family(name).boot) is not None]


def parse(text: str | Iterable[str], where: str = "the log") -> Parsed:
    """Every memory figure a boot log (its text, or its lines) holds, with the engine it came from. A number that is
    no figure (309 digits, above 2^40) is an InputError at its line; a figure of 0 records nothing and is skipped."""
    out = Parsed(readings=[], models=[])
    boots = [boot for _, boot in readers()]
    lines = text.splitlines() if isinstance(text, str) else text
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        try:
            for boot in boots:  # each family's own boot-log lines
                boot.read(out, line, number)
        except BadFigure as exc:
            raise InputError([Problem(where, number, None, f"{safe_line(exc.text, 60)} is not a memory or token "
                                      f"figure (more than {MAX_DIGITS} digits, or above 2^40); give the engine's "
                                      "own boot log")]) from None
    return out


def needs(name: str) -> str:
    """What a boot log of family `name` must hold for `catalog calibrate`, in words (for a family whose lines it does
    not read: what any family's log would hold)."""
    boot = family(Family(name)).boot if name in FAMILIES else None
    return boot.needs if boot is not None else " / ".join(b.needs for _, b in readers())


def rows_of(parsed: Parsed, p: Provenance) -> list[Row]:
    """The rows of the engine the log is of (none for a log of no engine)."""
    if parsed.engine is None:
        return []
    boot = family(Family(parsed.engine)).boot
    assert boot is not None, f"a {parsed.engine} log is read by its family's BootReader"
    return boot.rows(parsed, p)


def with_rows(existing: tuple[Calibration, ...], new: list[Calibration]) -> tuple[Calibration, ...]:
    """`existing` with `new` added; a new boot of the same image replaces the older rows of the same measure."""
    replaced = {(c.measure, c.image, c.device) for c in new}
    kept = tuple(c for c in existing if (c.measure, c.image, c.device) not in replaced)
    return kept + tuple(new)


def dated(rows: list[Row], when: date) -> list[Row]:
    return [Row(r.target, r.row if r.row.date else r.row.model_copy(update={"date": when})) for r in rows]




# ---- where a part's figure comes from ----------------------------------------------------------------------

Basis = Literal["measured", "calibrated", "computed", "assumed"]
_ASSUMED_COMPONENTS = ("activations (profile peak)", "CUDA graphs")
_ASSUMED_NOTES = ("assumption", "not modelled", "not in the catalog")
_CALIBRATED_NOTES = ("fitted", "probe", ", measured", "; measured", "(measured", "measured)", "measured on")


def basis_of(component: str, note: str) -> Basis:
    """measured: the figure is a row measured for this app or model; calibrated: a formula or constant whose
    coefficients were measured (real-shape probes, calibration rows scaling the estimate); computed: arithmetic on
    the catalog's facts; assumed: neither measured nor derived (docs/fit.md)."""
    text = note.lower()
    if component.startswith("calibration:"):
        return "calibrated"
    if text.startswith(("measured:", "measured for this app")):
        return "measured"
    if component.startswith(_ASSUMED_COMPONENTS) or any(k in text for k in _ASSUMED_NOTES):
        return "assumed"
    if any(k in text for k in _CALIBRATED_NOTES):
        return "calibrated"
    return "computed"


# ---- what the rows change -----------------------------------------------------------------------------------

class HasPools(Protocol):
    """A fit (generator/fit/estimate.py `Fit`) as far as `kv_pool` reads it."""

    @property
    def pools(self) -> tuple[Pool, ...]: ...


def kv_pool(fit: HasPools) -> str:
    """The pool one request's KV is drawn from: vLLM's budget (or its pinned KV pool), llama.cpp's cap."""
    keys = [p.key for p in fit.pools]
    return next(k for k in ("kv", "budget", "cap") if k in keys)


def largest_context(r: Resolved, upper: int | None = None) -> int:
    """The largest context (tokens) at which the app's estimate still fits the pool its KV comes from, under the
    app's cap (the fit's, sized at the app's own context, when it leaves gpu_memory_mib out); 0 if none."""
    from dataclasses import replace as dc_replace

    from generator.engines import Value, decided
    from generator.fit.estimate import estimate
    from generator.fit.sizing import sized

    r = sized(r)
    s = decided(r)
    pool = kv_pool(estimate(r, s))

    def fits(tokens: int) -> bool:
        return estimate(r, dc_replace(s, context=Value(tokens))).margin(pool) >= 0

    low, high = 0, upper or r.model.architecture.max_context
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


__all__ = ["Basis", "InputError", "Parsed", "Provenance", "Reading", "Row", "basis_of", "dated", "kv_pool",
           "largest_context", "needs", "noted", "parse", "readers", "rows_of", "with_rows"]
