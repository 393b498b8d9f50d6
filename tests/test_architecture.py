"""The layout is the architecture: every module sits in a stage package, and data flows one way.

A module may import its own stage and earlier ones, never a later one (function-level imports count too);
no two modules import each other, directly or around a loop. docs/architecture.md describes the stages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.stages import RANK, STAGES

ROOT = Path(__file__).resolve().parent.parent / "generator"

TOP_LEVEL_FILES = {"__init__.py", "__main__.py", "catalog.py"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every generator module `name` imports, at any depth of the file (function-level imports too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("generator"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if not module.startswith("generator"):
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
    found.discard(name)
    return {m for m in found if m in MODULES}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_sits_in_a_known_stage_package():
    flat = sorted(p.name for p in ROOT.glob("*.py") if p.name not in TOP_LEVEL_FILES)
    assert not flat, f"flat modules in generator/: {flat}; put each in its stage package (docs/architecture.md)"
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__")
    unknown = [f for f in folders if f not in RANK]
    assert not unknown, f"unknown stage folders {unknown}: add them to STAGES here and to docs/architecture.md"
    for folder in folders:
        assert (ROOT / folder / "__init__.py").is_file(), f"generator/{folder}/ has no __init__.py"


def test_no_module_imports_a_later_stage():
    wrong = []
    for name, deps in GRAPH.items():
        own = _stage(name)
        if own is None:
            continue
        for dep in deps:
            theirs = _stage(dep)
            if theirs is not None and RANK[theirs] > RANK[own]:
                wrong.append(f"{name} ({own}) imports {dep} ({theirs})")
    assert not wrong, "imports against the flow " + " -> ".join(STAGES) + ":\n" + "\n".join(sorted(wrong))


def _cycle() -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(GRAPH[node]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(GRAPH):
        if node not in state and (found := visit(node)):
            return found
    return None


def _package_edges() -> set[tuple[str, str]]:
    """Edges between a module and a package's own modules, ignoring a package __init__ importing its children."""
    return {(a, b) for a, deps in GRAPH.items() for b in deps if not b.startswith(a + ".")}


def test_no_import_cycle():
    global GRAPH
    saved = GRAPH
    GRAPH = {a: {b for (x, b) in _package_edges() if x == a} for a in saved}
    try:
        cycle = _cycle()
    finally:
        GRAPH = saved
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checker_sees_a_backward_import(tmp_path):
    """The direction rule is live: a fake engines module importing cli is reported."""
    fake = tmp_path / "generator" / "engines" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from generator.cli import app\n")
    MODULES["generator.engines.bad"] = fake
    try:
        deps = _imports("generator.engines.bad", fake)
    finally:
        del MODULES["generator.engines.bad"]
    assert deps == {"generator.cli.app"}
    assert RANK[_stage("generator.cli.app")] > RANK[_stage("generator.engines.bad")]


@pytest.mark.parametrize("stage", STAGES)
def test_docs_architecture_names_every_stage(stage):
    doc = (ROOT.parent / "docs" / "architecture.md").read_text()
    if stage in {"adapters", "importer", "market"} and not (ROOT / stage).exists():
        pytest.skip(f"generator/{stage}/ does not exist yet")
    assert f"`{stage}" in doc, f"docs/architecture.md does not describe the {stage} stage"
