"""The platform's own validator as an oracle: a rendered chart through `oac.Lint` (generator/adapters/oac.py).

OAC001 (error): the validator refused the chart; its message is the finding's. Where no validator is here, nothing
is found and `why_not_run()` says so: `catalog check` prints that plainly, never a silent pass. The rules of
generator/lint/olares.py port oac's rules; a disagreement between the two is fixed in ours, citing the oac rule
(tests/test_oac_vectors.py holds oac's own test vectors).
"""

from __future__ import annotations

from functools import cache

from generator.adapters import Oac
from generator.core import Finding
from generator.lint import helm as _helm
from generator.lint.registry import register

RULE = "OAC001"
SOURCE = ("beclab/Olares framework/oac oac.Lint with WithAutoOwnerScenarios, as `olares-cli chart lint` runs it "
          "(beclab/Olares@59eeacf065df5619e9836f94f56b7d3e6b60f184 cli/cmd/ctl/chart/lint.go)")
register(RULE, "the platform's own chart validator (oac.Lint) accepts the chart",
         "Olares' Market ingest and `olares-cli chart lint` run it; a chart it refuses is not installable",
         SOURCE)


@cache
def validator() -> Oac | str:
    """The validator found once per process, or why there is none."""
    return Oac.find()


def why_not_run() -> str | None:
    """None when the platform's validator runs; else a sentence for `catalog check` to print."""
    found = validator()
    return None if isinstance(found, Oac) else f"the platform's validator (oac) did not run: {found}"


def oac_findings(name: str, tree: dict[str, str]) -> list[Finding]:
    """The validator's refusal of the chart as a finding; empty when it passed or did not run."""
    found = validator()
    if not isinstance(found, Oac):
        return []
    with _helm.chart_folder(name, tree) as folder:
        verdict = found.lint(folder)
    if verdict.error is None:
        return []
    message = verdict.error.replace(str(folder), name)
    return [Finding(RULE, "error", name, f"{found.label}: {message}",
                    "fix the chart as the platform's validator says, and port the rule to generator/lint/olares.py",
                    name, None)]


__all__ = ["RULE", "oac_findings", "validator", "why_not_run"]
