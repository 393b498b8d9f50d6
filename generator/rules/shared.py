"""Shared-form rules (docs/forms.md): the flags the shared form passes the engine are ones its pinned image accepts."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule
from generator.rules.flags import _table


@rule("SHARED002", "error", "in the shared form, the flags the chart adds for a setting (the output limit, --api-key) "
      "are in the stack's flag table",
      "the chart passes them only when a user or Router sets the value: a flag the image lacks would crash the app "
      "then, long after `check` passed",
      "catalog/flags/<table>.yaml (the image's own --help or argument parser, docs/flags.md); "
      "generator/chart/shared.py")
def shared_flags_known(ctx: AppContext) -> Iterable[Finding]:
    bounds = ctx.chart.shared
    if bounds is None:
        return
    table, _ = _table(ctx)
    if table is None:
        return  # FLAG rules already say the stack has no table
    for flag in (bounds.output_flag, bounds.api_key_flag):
        if flag is not None and table.lookup(flag) is None:
            yield ctx.finding("SHARED002", "error", f"the shared form passes {flag} when its setting is set, but "
                              f"{table.id} does not list it", "set `form: single` on the app, or correct the flag "
                              "table from the image's own --help", *(("form",) if ctx.app.form else ()))
