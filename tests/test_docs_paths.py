"""Every module path the docs name exists (issue 35: the README's layout once named 17 modules that were gone).

Reads README.md and docs/*.md as text: paths such as ``generator/fit/sizing.py`` or ``tests/engines/``, dotted
module names such as ``generator.lint.run.lint_chart``, and each backticked ``name.py`` in a row of
docs/architecture.md's stage table (a module of that row's folder). A doc that names a module which was renamed or
removed fails here, with the file and line.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH = re.compile(r"(?<![\w/.-])((?:generator|tests|scripts|bench|templates|tools)/[\w./-]*\w)")
DOTTED = re.compile(r"(?<![\w.])(generator(?:\.[a-z_][a-z0-9_]*)+)")
ROW = re.compile(r"\| `(\w+)` \| `(generator/[\w/.]*)`")


def _lines() -> list[tuple[Path, int, str]]:
    return [(doc, n, line) for doc in DOCS for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)]


def _is_path(text: str) -> bool:
    last = text.rsplit("/", 1)[-1]
    return text.endswith(".py") or "." not in last  # a module or a folder (a data file such as a .yaml is not a module)


def _exists(text: str) -> bool:
    path = ROOT / text
    if path.exists():
        return True
    # a glob such as `tests/test_render_*`: the pattern stops before the `*`, so its stem ends in `_`
    parent, _, stem = text.rpartition("/")
    return stem.endswith("_") and any(p.name.startswith(stem) for p in (ROOT / parent).glob("*"))


def test_every_named_path_exists() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}:{n}: {m.group(1)}"
        for doc, n, line in _lines()
        for m in PATH.finditer(line)
        if _is_path(m.group(1)) and not _exists(m.group(1))
    ]
    assert not missing, "docs name paths that do not exist:\n" + "\n".join(missing)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that is a module; the rest are attributes
        module = ".".join(parts[:cut])
        path = ROOT / Path(*parts[:cut])
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            spec_ok = importlib.util.find_spec(module) is not None
            if not spec_ok:
                return False
            rest = parts[cut:]
            if not rest:
                return True
            source = (path.with_suffix(".py") if path.with_suffix(".py").exists() else path / "__init__.py").read_text()
            return re.search(rf"^(?:def|class|async def)\s+{rest[0]}\b|^{rest[0]}\s*[:=]", source, re.M) is not None
    return False


def test_every_named_module_resolves() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}:{n}: {m.group(1)}"
        for doc, n, line in _lines()
        for m in DOTTED.finditer(line)
        if not _resolves(m.group(1))
    ]
    assert not missing, "docs name modules or functions that do not exist:\n" + "\n".join(missing)


def test_architecture_table_names_modules_of_their_stage() -> None:
    missing = []
    for n, line in enumerate((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines(), 1):
        row = ROW.match(line)
        if not row:
            continue
        folder = ROOT / row.group(2)
        base = folder if folder.is_dir() else folder.parent
        for name in re.findall(r"`([\w/]+\.py)`", line):
            if not any(p.exists() for p in (base / name, ROOT / "generator" / name, ROOT / name)):
                missing.append(f"docs/architecture.md:{n}: stage {row.group(1)}: {name}")
    assert not missing, "the stage table names modules that do not exist:\n" + "\n".join(missing)


def test_the_check_itself_can_fail(tmp_path: Path) -> None:
    assert not _exists("generator/flagtables.py")  # one of the modules the README's old layout named
    assert not _resolves("generator.checking")
    assert _exists("generator/fit/sizing.py") and _resolves("generator.lint.run.lint_chart")
