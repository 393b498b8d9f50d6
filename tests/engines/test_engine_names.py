"""Engine names and settings classes stay inside the engine modules: code outside generator/engines/ (and the schema
that holds the registry, generator/schema/engines.py) names no engine or family in a string literal and tests no
settings class with isinstance; it asks the stack's family (generator/engines/family.py `family_for`, the
`EngineFamily` of generator/engines/interface.py) or the methods of the family's settings (generator/engines/values.py
`Settings`: KV slot bytes, conv state bytes, flash attention, the utilization budget, the rules' hooks …).

EXCEPTIONS names what is left and why; none may start. A memory model's name (`EngineFamily.fit`, the module
generator/fit/<fit>.py) is spelt like its family's, so a table keyed by it counts here too."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from generator.schema.engines import ENGINES, FAMILIES

ROOT = Path(__file__).resolve().parents[2] / "generator"
NAMES = set(FAMILIES) | set(ENGINES)
ALLOWED_DIRS = {"engines", "schema"}  # the engine modules and the registry of the names

# Nothing left (issue 35 counted 22 isinstance checks in 8 files; issue 26 52 comparisons): the speed model keys its
# fitted values by the families' `fit` names in data (generator/fit/speed_fitted.json), not in code. A file allowed
# here would name its count.
LITERALS: dict[str, int] = {}
ISINSTANCE: dict[str, int] = {}


def _literals(tree: ast.AST) -> int:
    """String constants that are exactly an engine or family name (a comparison, a dict key, an argument …)."""
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in NAMES)


def _settings_tests(tree: ast.AST) -> int:
    """isinstance calls whose class (or any class of a tuple or union) is named `...Settings`."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2:
            names = [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node.args[1])
                     if isinstance(n, ast.Name | ast.Attribute)]
            count += any(name.endswith("Settings") for name in names)
    return count


@cache
def _outside() -> dict[str, ast.AST]:
    return {path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(ROOT.rglob("*.py")) if path.relative_to(ROOT).parts[0] not in ALLOWED_DIRS}


def _grown(counter, allowed: dict[str, int]) -> dict[str, int]:  # type: ignore[no-untyped-def]
    found = {rel: n for rel, tree in _outside().items() if (n := counter(tree))}
    return {f: n for f, n in found.items() if n > allowed.get(f, 0)}


def test_no_engine_name_literal_outside_the_engine_modules():
    grown = _grown(_literals, LITERALS)
    assert not grown, (f"engine-name literals outside generator/engines/: {grown} (allowed: "
                       f"{ {f: LITERALS.get(f, 0) for f in grown} }); ask the family (engines/family.py family_for)")


def test_no_settings_class_test_outside_the_engine_modules():
    grown = _grown(_settings_tests, ISINSTANCE)
    assert not grown, (f"isinstance on a Settings class outside generator/engines/: {grown}; ask the settings' own "
                       "method or property (generator/engines/values.py Settings), adding one there if none answers")


def test_the_counters_see_what_they_count():
    literals = ast.parse('def f(s):\n    return s.engine == "sglang" or s.fork in ("lucebox",) or {"vllm": 1}\n')
    assert _literals(literals) == 3
    tests = ast.parse("def f(s):\n    a = isinstance(s, VllmSettings)\n    b = isinstance(s, m.LlamaCppSettings)\n"
                      "    c = isinstance(s, VllmSettings | SglangSettings)\n    d = isinstance(s, int)\n")
    assert _settings_tests(tests) == 3


def test_the_exceptions_are_still_needed():
    """An exception that is no longer used is dropped, so that it cannot hide a new one."""
    trees = _outside()
    unused = [f for f in LITERALS if not _literals(trees[f])] + [f for f in ISINSTANCE if not _settings_tests(trees[f])]
    assert not unused, f"exceptions no longer needed: {unused}; drop them from LITERALS / ISINSTANCE"
