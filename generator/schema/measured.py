"""A value an app sets on a measured ground (docs/fit.md "Measured beats modeled"): the app's own `measured` rows
(generator/schema/app.py), and the sync's `measured` grounds (generator/schema/upstream.py `MeasuredGround`)."""

from typing import Annotated

from pydantic import StringConstraints

from generator.schema.common import Note, Strict

# The fields the sync compares, grouped into facets (generator/sync/compare.py FACETS); `env.NAME` and
# `args.--flag` name one variable or one option.
FieldPath = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.*-]{1,120}$")]
Value = Annotated[str, StringConstraints(max_length=2000)]


class Measured(Strict):
    """A value set on a measured ground: what was measured says why it stays (docs/fit.md "Measured beats
    modeled"). `field` is an app field, `env.NAME` or `args.--flag`; `value` as the chart writes it."""

    field: FieldPath
    value: Value
    note: Note  # what was measured
    source: Note  # where the measurement is written down
