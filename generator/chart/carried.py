"""The app's own facts that no Kubernetes object or manifest field of its chart holds, carried in the chart so that
`catalog import` rebuilds the app from the chart alone (issue 42: a chart of this tool's making round-trips;
docs/import.md "This tool's own charts").

What is carried: the app's own `device` (a chart's `nvidia` envelope fits several cards), the market's own
`categories` (the manifest's `metadata.categories` is Olares' `[AI]`), the
app's further `devices:` (a store that does not target a device renders no mode for it), the `gpu_room` the fit
sizes within, what was measured: `measured` grounds (a value kept over the fit, such as the BeeLlama apps' 30000m
belt), `calibration` rows (SGLang sizes its request count from the measured weights) and `benchmarks`; and `stated`,
the GPU memory fields the app states rather than leaves to the fit (the chart's number reads the same either way;
a stated one stays stated when the fit later sizes another). Each but the device is written only when the app
sets it.

Where: a comment block at the end of values.yaml, the file the renderer already heads with a comment. Helm and Olares
read values.yaml as YAML and skip comments, so the block is no value, no template and no platform field: the block is
the YAML of those fields with `# ` before each line, under one marker line. The YAML is the catalog's own emitter's
(generator/yamlio/yamlout.py): a character a reader would take for a line break (NEL, LS, PS, CR) or a control
character is written escaped in a double-quoted string, so no text of the catalog can end a comment line. Same app,
same bytes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from generator.core import tuples
from generator.core import InputError, Problem
from generator.schema import App
from generator.schema import Benchmark, DeviceTarget, GpuRoom, MarketCategory
from generator.schema import Calibration
from generator.schema import MAX_ITEMS, Id, Strict
from generator.schema import Measured
from generator.yamlio import yamlout
from generator.yamlio import load_untrusted

FIELDS = ("device", "categories", "devices", "gpu_room", "calibration", "measured", "benchmarks")
SIZED = ("gpu_memory_mib", "gpu_memory_utilization")  # the fields the fit fills in (generator/fit/sizing.py)
MARKER = "# catalog: the app's facts no chart field holds, read back by `catalog import` (docs/import.md)"
_HINT = ("restore the block as `catalog render` writes it (re-render the app), or delete the block and its marker "
         "line to import the chart without it")


class Carried(Strict):
    """The carried fields of one app, as the App model types them."""

    device: Id | None = None
    categories: Annotated[tuple[MarketCategory, ...], Field(max_length=8)] = ()
    devices: Annotated[tuple[DeviceTarget, ...], Field(max_length=MAX_ITEMS)] = ()
    gpu_room: GpuRoom | None = None
    calibration: Annotated[tuple[Calibration, ...], Field(max_length=MAX_ITEMS)] = ()
    measured: Annotated[tuple[Measured, ...], Field(max_length=MAX_ITEMS)] = ()
    benchmarks: Annotated[tuple[Benchmark, ...], Field(max_length=MAX_ITEMS)] = ()
    stated: tuple[Literal["gpu_memory_mib", "gpu_memory_utilization"], ...] = ()  # not an app field

    def app_fields(self) -> dict[str, object]:
        """The fields set, as an app file writes them (plain lists and mappings, dates as dates)."""
        out: dict[str, object] = {}
        for name in FIELDS:
            value = getattr(self, name)
            if isinstance(value, tuple):
                value = [v.model_dump(mode="python", exclude_defaults=True) if isinstance(v, Strict) else v
                         for v in value]
            elif isinstance(value, Strict):
                value = value.model_dump(mode="python", exclude_defaults=True)
            if value:
                out[name] = _lists(value)
        return out


def _lists(value: Any) -> Any:
    """Tuples as lists, as the app file's reader gives them."""
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value


def block(app: App, sized: tuple[str, ...] = ()) -> str:
    """The comment block for values.yaml of the planned `app`; `sized`: the fields the fit filled in
    (generator/catalog.py `Resolved.sized`)."""
    data = Carried.model_validate({name: getattr(app, name) for name in FIELDS}).app_fields()
    stated = [f for f in SIZED if getattr(app, f) is not None and f not in sized]
    if stated:
        data["stated"] = stated
    body = yamlout.dump(data)
    lines = [MARKER] + [f"# {line}" if line else "#" for line in body.rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


def read_block(text: str, where: str) -> tuple[Carried, int] | None:
    """(the carried fields, the marker's line) of a values.yaml `text`; None when it has no block. A block that
    does not read back is an InputError naming `where` and the line."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.rstrip() == MARKER), None)
    if start is None:
        return None
    body: list[str] = []
    for offset, line in enumerate(lines[start + 1:], start + 2):
        if line == "" and all(rest == "" for rest in lines[offset - 1:]):
            break  # the file's final newline
        if line != "#" and not line.startswith("# "):
            raise InputError([Problem(where, offset, None, "the catalog block ends before the end of the file: "
                                                           f"every line after line {start + 1} is a `# ` comment; "
                                                           + _HINT)])
        body.append(line[2:])
    # blank lines in place of the lines above the block: a problem's line is its line in values.yaml
    data = load_untrusted("\n" * (start + 1) + "\n".join(body) + "\n", where)
    if not isinstance(data, dict):
        raise InputError([Problem(where, start + 1, None, "the catalog block is not a mapping of app fields; "
                                                          + _HINT)])
    try:
        return Carried.model_validate(tuples(data)), start + 1
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise InputError([Problem(where, start + 1, None, f"the catalog block's {at}: {first['msg']}; "
                                                          + _HINT)]) from exc


__all__ = ["FIELDS", "MARKER", "SIZED", "Carried", "block", "read_block"]
