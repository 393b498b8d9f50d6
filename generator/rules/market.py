"""Market rules: what the catalog's market settings (catalog/market.yaml) say about its apps."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
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
                      "catalog/market.yaml)",
                      f"use {icons.base_url}<name>{icons.suffix} for a served name; for an icon of your own, upload it "
                      "and add its name to icons.served, or point icons.base_url in catalog/market.yaml at where your "
                      "icons are served", "icon")


@rule("MKT004", "error", "the app names its market categories (when catalog/market.yaml sets `categories: true`)",
      "the market's worker lists an app under its own taxonomy; the maintainer's validator refuses a chart that has "
      "none ('must retain Worker-only market taxonomy')",
      "github.com/aamsellem/olares-one-market "
      "scripts/validate-manifests-v3.js@b41af142d2f6a087e1a36d659b15c3664c8f4823, "
      "scripts/market-taxonomy.json@59296d35fa0e86b4ee099332ac4937eb9e0f0f1c")
def categories_named(ctx: AppContext) -> Iterable[Finding]:
    if ctx.resolved.market.categories and not ctx.app.categories:
        yield ctx.finding("MKT004", "error", "the app names no market categories (catalog/market.yaml "
                          "`categories: true`)", "add `categories: [LLM Chat]` (the market's labels: LLM Chat, "
                          "AI Agents, Vision, Coding, Audio, ...)", "categories")
