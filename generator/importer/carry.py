"""The app facts a chart of this tool's making carries in values.yaml's closing comment block (generator/chart/
carried.py): its market categories, GPU room and what was measured (`measured`, `calibration`, `benchmarks`) come
back into the imported app as they were written, so a measured value returns as measured, with its note, never as
the fit's number (docs/fit.md "Measured beats modeled"; docs/import.md "This tool's own charts")."""

from __future__ import annotations

from generator.chart import FIELDS, read_block
from generator.importer.source import ChartFiles

VALUES = "values.yaml"


def carried(files: ChartFiles) -> tuple[dict[str, object], tuple[str, ...], int] | None:
    """(the carried app fields, the GPU memory fields the app states, the block's line in values.yaml) of the
    chart; None when it carries no block.
    A block that does not read back raises InputError (`values.yaml:LINE: what, how to fix`)."""
    text = files.text(VALUES)
    if text is None:
        return None
    found = read_block(text, files.where(VALUES))
    if found is None:
        return None
    fields, line = found
    return fields.app_fields(), fields.stated, line


__all__ = ["FIELDS", "VALUES", "carried"]
