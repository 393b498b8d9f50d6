"""Package faces: other packages import a package of generator/ only through its `__init__.py` (docs/architecture.md).

`scripts/faces.py` rewrites the imports and writes each face: `__all__`, a `TYPE_CHECKING` block for mypy, and a PEP
562 `__getattr__` over a static name -> submodule table (`_FACE`). This test holds the result as
tests/test_architecture.py holds the layers. tests/ itself may import inner modules (tests test internals).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GEN = REPO / "generator"
SCRIPT = REPO / "scripts" / "faces.py"
MARK = "# The face: written by scripts/faces.py"
PACKAGES = sorted(p.name for p in GEN.iterdir() if (p / "__init__.py").is_file())
APPLIED = all(MARK in (GEN / p / "__init__.py").read_text() for p in PACKAGES)
# Until scripts/faces.py has been run on the tree (its last commit), the tree's tests are expected to fail.
applied = pytest.mark.xfail(not APPLIED, reason="scripts/faces.py has not been run on this tree yet", strict=False)


def _submodules(package: str, gen: Path = GEN) -> set[str]:
    return {p.stem for p in (gen / package).glob("*.py") if p.name != "__init__.py"}


def _face(package: str, gen: Path = GEN) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(`__all__`, the `_FACE` table, the TYPE_CHECKING block as name -> submodule) of one package's face."""
    names: list[str] = []
    table: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in ast.parse((gen / package / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names = ast.literal_eval(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "_FACE":
            table = ast.literal_eval(node.value)  # type: ignore[arg-type]
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for sub in node.body:
                if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                    for alias in sub.names:
                        assert alias.asname == alias.name, f"{package}: `{alias.name} as {alias.asname}`"
                        typed[alias.name] = sub.module or alias.name
    return names, table, typed


def _own(path: Path, gen: Path) -> str:
    parts = path.relative_to(gen).parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def violations(gen: Path = GEN) -> list[str]:
    """Every import in `gen` of another package that reaches past its face or names what the face does not list."""
    packages = sorted(p.name for p in gen.iterdir() if (p / "__init__.py").is_file())
    faces = {p: set(_face(p, gen)[0]) for p in packages}
    wrong = []
    for path in sorted(gen.rglob("*.py")):
        own = _own(path, gen)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("generator."):
                continue
            parts = node.module.split(".")  # type: ignore[union-attr]
            package = parts[1]
            if package not in faces or package == own:
                continue
            where = f"{path.relative_to(gen.parent)}:{node.lineno}"
            names = [a.name for a in node.names]
            if len(parts) > 2:
                # the one exception: a name that is also its package's submodule's name cannot be on the face
                if not all(n in _submodules(package, gen) for n in names):
                    wrong.append(f"{where}: from {node.module} import {', '.join(names)}: import from generator.{package}")
                continue
            wrong.extend(f"{where}: generator.{package} does not list {n!r} in __all__" for n in names
                         if n not in faces[package])
    return sorted(wrong)


@applied
def test_every_cross_package_import_goes_through_the_face():
    wrong = violations()
    assert not wrong, "run `python scripts/faces.py` (docs/architecture.md, Faces):\n" + "\n".join(wrong)


def test_the_checker_sees_an_inner_import_and_an_unlisted_name(tmp_path):
    gen = tmp_path / "generator"
    for package in ("alpha", "beta"):
        (gen / package).mkdir(parents=True)
    (gen / "alpha" / "__init__.py").write_text('__all__ = ["thing"]\n')
    (gen / "alpha" / "inner.py").write_text("thing = 1\nother = 2\n")
    (gen / "beta" / "__init__.py").write_text("")
    (gen / "beta" / "user.py").write_text("def f():\n    from generator.alpha.inner import thing\n"
                                          "from generator.alpha import other\nfrom generator.alpha import thing\n")
    wrong = violations(gen)
    assert wrong == ["generator/beta/user.py:2: from generator.alpha.inner import thing: import from generator.alpha",
                     "generator/beta/user.py:3: generator.alpha does not list 'other' in __all__"]


@applied
@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_the_object_its_table_names(package):
    face = importlib.import_module(f"generator.{package}")
    names, table, _ = _face(package)
    assert names == sorted(set(names)), f"generator/{package}/__init__.py: __all__ is not sorted and unique"
    assert list(face.__all__) == names
    for name in names:
        value = getattr(face, name)
        if name in table:
            module = importlib.import_module(f"generator.{package}.{table[name]}")
            assert value is (module if name == table[name] else getattr(module, name)), f"generator.{package}.{name}"
    assert not set(table) - set(names), f"generator/{package}: _FACE loads names __all__ does not list"


@applied
@pytest.mark.parametrize("package", PACKAGES)
def test_the_table_and_the_type_checking_block_agree(package):
    _, table, typed = _face(package)
    assert typed == table
    for name, module in table.items():
        assert module in _submodules(package), f"generator/{package}: {name!r} -> no module {module!r}"


@applied
def test_a_face_alone_imports_none_of_its_submodules():
    """A face with no code of its own loads nothing when imported: its names come on first use."""
    pure = [p for p in PACKAGES if (GEN / p / "__init__.py").read_text().count("\nimport ") == 0
            and all(not line.startswith("from ") or "TYPE_CHECKING" in line
                    for line in (GEN / p / "__init__.py").read_text().splitlines())]
    assert "fit" in pure and "chart" in pure
    code = ("import sys\n" + "".join(f"import generator.{p}\n" for p in pure)
            + "print(sorted(m for m in sys.modules if m.startswith('generator.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == repr(sorted(f"generator.{p}" for p in pure))


@applied
def test_running_the_script_changes_nothing():
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def _load_script(monkeypatch):
    spec = importlib.util.spec_from_file_location("faces_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "faces_script", module)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_script_rewrites_a_small_tree_and_its_face_loads_lazily(tmp_path, monkeypatch):
    """On a tree of its own: the imports keep their place, aliases and comments; a second run changes nothing;
    the face loads its submodule on first use; a name defined twice stops it."""
    gen = tmp_path / "generator"
    files = {
        "__init__.py": (GEN / "__init__.py").read_text(),  # the faces' loader (`face`)
        "alpha/__init__.py": '"""Alpha."""\n',
        "alpha/inner.py": "from generator.alpha.base import Base\n\nTHING = 1\n\n\ndef helper() -> int:\n    return 2\n",
        "alpha/base.py": "class Base:\n    pass\n",
        "alpha/more.py": "VALUE = 3\n",
        "beta/__init__.py": '"""Beta."""\n',
        "beta/user.py": textwrap.dedent("""\
            from generator.alpha.inner import THING as T  # a comment stays
            from generator.alpha.inner import Base
            from generator.alpha import more


            def later() -> int:
                from generator.alpha.inner import helper
                from generator.beta.other import x  # the same package: untouched
                return helper() + T + more.VALUE + x
            """),
        "beta/other.py": "x = 4\n",
    }
    for name, text in files.items():
        (gen / name).parent.mkdir(parents=True, exist_ok=True)
        (gen / name).write_text(text)
    (tmp_path / "pyproject.toml").write_text("")
    script = _load_script(monkeypatch)
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "GEN", gen)
    assert script.main([]) == 0
    user = (gen / "beta" / "user.py").read_text()
    assert user == files["beta/user.py"].replace("generator.alpha.inner", "generator.alpha")
    names, table, typed = _face("alpha", gen)
    assert names == ["Base", "THING", "helper", "more"]
    assert table == typed == {"Base": "base", "THING": "inner", "helper": "inner", "more": "more"}
    assert (gen / "alpha" / "__init__.py").read_text().startswith('"""Alpha."""\n')
    assert script.main(["--check"]) == 0  # idempotent
    code = ("import sys, generator.alpha as a\nassert 'generator.alpha.inner' not in sys.modules\n"
            "from generator.beta.user import later\nprint(later(), a.THING, 'generator.alpha.inner' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["10", "1", "True"]
    (gen / "alpha" / "twin.py").write_text("THING = 5\n")
    (gen / "beta" / "user.py").write_text(user + "from generator.alpha.twin import THING\n")
    assert script.main(["--check"]) == 2  # THING defined in two modules: stopped, nothing written
    assert (gen / "beta" / "user.py").read_text().endswith("from generator.alpha.twin import THING\n")
