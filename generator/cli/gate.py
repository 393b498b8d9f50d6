"""The check gate of `catalog bump` and `catalog publish`: what `catalog check` fails is not versioned or shipped.

Both commands run the same check as `catalog check APP` (the crash rules, the memory fit and the chart lint) on
the apps they are about to write or publish. An app with an error is refused, with its findings on stderr, and
nothing is written for it; `--force` takes it anyway and says so on stderr, loudly, app by app.
"""


import sys
from dataclasses import dataclass
from pathlib import Path

from generator.cli.app import default_out, load_catalog
from generator.core import plural, safe_line

SHOWN = 5  # findings printed per refused app (`catalog check APP` prints them all)


@dataclass(frozen=True)
class Gate:
    """The apps `catalog check` fails, each with its first error lines."""

    failing: dict[str, list[str]]

    def __bool__(self) -> bool:
        return bool(self.failing)


def check_gate(catalog: Path | None, names: list[str], *, drift: bool = False) -> Gate:
    """`catalog check` on `names` (rules and chart lint), as the check command runs it; with `drift` (publish), a
    committed chart that differs from a fresh render fails too (DRIFT001): publishing would ship the fresh render,
    not the chart that was reviewed."""
    if not names:
        return Gate({})
    from generator.adapters import Helm
    from generator.check import check_all

    cat = load_catalog(catalog)
    chosen = [cat.apps[name] for name in names if name in cat.apps]
    results = check_all(cat, chosen, lint=True, charts=default_out(catalog), helm=Helm(), drift=drift)
    failing = {}
    for result in results:
        if result.ok:
            continue
        errors = [f for f in result.findings if f.severity == "error"]
        failing[result.app] = [safe_line(f"{f.rule} {f.message}", 300) + (f" ({f.file}:{f.line})" if f.file else "")
                               for f in errors[:SHOWN]] + ([f"... and {len(errors) - SHOWN} more"]
                                                          if len(errors) > SHOWN else [])
    return Gate(failing)


def enforce(gate: Gate, *, command: str, force: bool) -> set[str]:
    """Say what the gate found on stderr; the apps refused (none with --force, which is said loudly)."""
    if not gate:
        return set()
    for app, lines in gate.failing.items():
        if force:
            print(f"WARNING: --force: `catalog {command}` goes on with {app} although `catalog check {app}` fails:",
                  file=sys.stderr)
        else:
            print(f"{app}: refused: `catalog check {app}` fails:", file=sys.stderr)
        for line in lines:
            print(f"    {line}", file=sys.stderr)
    if force:
        print(f"WARNING: --force: {plural(len(gate.failing), 'app')} that fail `catalog check` "
              f"{'are' if len(gate.failing) != 1 else 'is'} {'bumped' if command == 'bump' else 'published'} "
              "anyway", file=sys.stderr)
        return set()
    print(f"{plural(len(gate.failing), 'app')} refused: fix what `catalog check` reports, or pass --force to "
          f"{command} anyway", file=sys.stderr)
    return set(gate.failing)
