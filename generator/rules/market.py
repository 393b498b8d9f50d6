"""Market rules: what the catalog's market settings (catalog/market.yaml) say about its apps."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core.findings import Finding
from generator.rules import AppContext, rule


@rule("MKT001", "warning", "the app's icon is one the market serves (when catalog/market.yaml lists its icons)",
      "Olares shows the icon URL as given: one the market does not serve leaves a blank tile in the store",
      "catalog/market.yaml `icons` (the maintainer's market: the icon URLs of its manifests); Olares manifest "
      "metadata.icon")
def icon_served(ctx: AppContext) -> Iterable[Finding]:
    icons = ctx.resolved.market.icons
    if icons is None or icons.serves(ctx.app.icon):
        return
    same_host = ctx.app.icon.startswith(icons.base_url)
    where = "is not among the icons the market serves" if same_host else f"is not under {icons.base_url}"
    yield ctx.finding("MKT001", "warning", f"icon {ctx.app.icon} {where} ({len(icons.served)} listed in "
                      "catalog/market.yaml)", f"use one of {icons.base_url}<name>{icons.suffix} for a served name, or "
                      "upload the icon and add its name to icons.served", "icon")
