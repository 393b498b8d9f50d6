"""Secret rules: no literal secret in the catalog, nor in the engine's argv and env a chart renders from it.

A committed catalog is public, and every value of an app's `env`, `args` or `extra_args` is published in the
chart's values.yaml (and printed by `explain`). The check runs once at load time on every catalog file
(generator/catalog.py `secret_problems`, an InputError at `file:line`, so no command renders or prints the
value), and again here on the engine's final argv and env, so `catalog check` names the rule and its fix. The
patterns are the redactor's (generator/core/redact.py `secrets_in`).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.core import secrets_in
from generator.rules import AppContext, rule

OLARES_WAY = ("remove it: the chart gives the engine HF_TOKEN from the Olares env its manifest declares under `envs` "
              "(OLARES_USER_HUGGINGFACE_TOKEN, OLARES_SYSTEM_HUGGINGFACE_TOKEN in olares-v3), which each user sets in "
              "Olares; any other secret belongs in a Kubernetes Secret of the cluster")
SRC = ("Olares OlaresManifest reference, `envs` (https://docs.olares.com/developer/develop/package/manifest.html); "
       "Kubernetes Secrets (https://kubernetes.io/docs/concepts/configuration/secret/)")


@rule("SEC001", "error", "no literal secret in the catalog or the engine's argv and env",
      "A token in the catalog is committed, printed by `explain` and published in the chart's values.yaml for "
      "anyone who installs it", SRC)
def no_literal_secret(ctx: AppContext) -> Iterable[Finding]:
    engine = ctx.engine
    for loc, what in secrets_in({"env": {e.name: e.value for e in engine.env}}):
        yield ctx.finding("SEC001", "error", f"the engine env {loc[1]} holds {what}", OLARES_WAY, "env")
    for _, what in secrets_in({"args": list(engine.argv)}):
        yield ctx.finding("SEC001", "error", f"the engine argv holds {what}", OLARES_WAY, "args")
