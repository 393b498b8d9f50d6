"""Engine names stay inside the engine modules: code outside generator/engines/ (and the schema that holds the registry,
generator/schema/engines.py) does not compare a value against an engine or family name; it asks the stack's family
(generator/engines/family.py `family_for`, the `EngineFamily` of generator/engines/interface.py) or the family's
settings type. No file outside them does (EXCEPTIONS below is empty), and none may start."""

from __future__ import annotations

import ast
from pathlib import Path

from generator.schema.engines import ENGINES, FAMILIES

ROOT = Path(__file__).resolve().parents[2] / "generator"
NAMES = set(FAMILIES) | set(ENGINES)
ALLOWED_DIRS = {"engines", "schema"}  # the engine modules and the registry of the names

# Comparisons left: none (issue 26 counted 52). A stage that needs to know what an engine does asks its family
# (`family_for(stack)`: its declaration's traits, its `Launcher` for import, its `BootReader` for calibrate).
EXCEPTIONS: dict[str, int] = {}


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
