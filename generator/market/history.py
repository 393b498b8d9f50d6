"""What the store page reads of the smoke ledger, and how it gets it.

The ledger's format belongs to the smoke stage (generator/smoke/ledger.py), which comes after this one, so the
page does not read ledger files itself: the command that starts the page (generator/cli/serve.py, site.py)
passes a `LedgerReader` built on smoke's own reader. One parser of the ledger stays in the project, and the
server calls the reader again at each rebuild, so new smokes appear without a restart.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Verdict = Literal["pass", "regression", "fail", "suspect", "error"]


@dataclass(frozen=True)
class SmokePoint:
    """One smoke of an app: when, which chart version, the warm tokens/s (None when nothing was measured)."""

    when: dt.datetime
    chart_version: str
    tokens_per_s: float | None
    verdict: Verdict
    image: str


LedgerReader = Callable[[Path, str], Sequence[SmokePoint]]  # (catalog root, app) -> smokes, oldest first


def no_ledger(_root: Path, _app: str) -> Sequence[SmokePoint]:
    """A reader for callers without a ledger (every app: no smoke yet)."""
    return ()


__all__ = ["LedgerReader", "SmokePoint", "Verdict", "no_ledger"]
