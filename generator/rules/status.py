"""Status rules: a deprecated app says why and points at an active replacement."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule


@rule("STA001", "warning", "a deprecated app is reported with its reason and replacement",
      "Deprecated apps stay in the market until their replacement passed its smoke inference; maintainers must see "
      "them and why", "docs/domain.md#crash-rules (deprecated and removed apps); ARCHITECTURE.md habit 10")
def deprecated(ctx: AppContext) -> Iterable[Finding]:
    app = ctx.app
    if app.status == "deprecated":
        target = f"; replaced by {app.replaced_by}" if app.replaced_by else ""
        reason = (app.reason or "").rstrip(". ")
        yield ctx.finding("STA001", "warning", f"deprecated: {reason}{target}",
                          f"prune it once {app.replaced_by or 'its replacement'} passed `catalog smoke`", "status")


@rule("STA002", "error", "replaced_by names an active app",
      "Users are sent to the replacement; a deprecated or removed replacement leaves them nowhere",
      "docs/domain.md#crash-rules (prune only once the replacement passed its smoke inference)")
def replacement_active(ctx: AppContext) -> Iterable[Finding]:
    target = ctx.app.replaced_by
    if target is None:
        return
    other = ctx.catalog.apps.get(target)
    if other is not None and other.app.status != "active":
        why = (other.app.reason or "").rstrip(". ")
        yield ctx.finding("STA002", "error", f"replaced_by {target} is {other.app.status} itself ({why})",
                          f"point replaced_by at an active app (what replaced {target}: "
                          f"{other.app.replaced_by or 'none'})", "replaced_by")
