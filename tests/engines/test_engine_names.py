"""Engine names stay inside the engine modules: code outside generator/engines/ (and the schema that declares the
names) does not compare a value against an engine or family name ("vllm", "llamacpp", "lucebox", "sglang"); it asks
the family (generator/engines/family.py) or the family's settings type. The files below did so before the registry
existed; each may only lose such comparisons, never gain one, and no other file may start."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from generator.engines.family import Family

ROOT = Path(__file__).resolve().parents[2] / "generator"
NAMES = set(get_args(Family))
ALLOWED_DIRS = {"engines", "schema"}  # the engine modules and the declaration of the names

# Comparisons counted when this test was added (issue 26); lower a count when you move one
# behind the engine interface.
EXCEPTIONS = {
    "catalog.py": 5,
    "cli/calibrate.py": 1,
    "fit/memory.py": 2,
    "fit/probe.py": 2,
    "fit/roofline.py": 2,
    "flags/check.py": 2,
    "importer/argv.py": 2,
    "importer/build.py": 10,
    "rules/consistency.py": 1,
    "rules/engine.py": 4,
    "rules/fit.py": 1,
    "smoke/identity.py": 9,
    "smoke/run.py": 1,
}


def _comparisons(path: Path) -> int:
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                count += sum(1 for sub in ast.walk(side) if isinstance(sub, ast.Constant) and sub.value in NAMES)
    return count


def test_no_new_engine_name_comparisons_outside_the_engine_modules():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.split("/", 1)[0] in ALLOWED_DIRS:
            continue
        count = _comparisons(path)
        if count:
            found[rel] = count
    grown = {f: n for f, n in found.items() if n > EXCEPTIONS.get(f, 0)}
    assert not grown, (f"engine-name comparisons outside generator/engines/: {grown} (allowed: "
                       f"{ {f: EXCEPTIONS.get(f, 0) for f in grown} }); dispatch through engines/family.py instead")


def test_the_counter_sees_a_comparison(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text('def f(s):\n    return s.engine == "sglang" or s.fork in ("lucebox",)\n', encoding="utf-8")
    assert _comparisons(sample) == 2
