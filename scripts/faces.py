"""Package faces: other packages import a package of generator/ only through its `__init__.py`.

Run from the repository root: `python scripts/faces.py` rewrites the tree, `--check` only says what it would change
(exit 1 if anything), `--report` lists the faces and the imports that name a submodule as a module object.

1. Every `from generator.P.mod import name` in generator/ of a package P other than the importer's own (module level
   or inside a function: each import stays where it is, with its names, aliases and comments) becomes
   `from generator.P import name`. Imports inside one package stay as written. generator/catalog.py is a package
   of its own (its face is the module itself).
2. Each package's `__init__.py` gets its face, written after its own code: `__all__` (the names other code imports
   from the package, sorted: generator/'s other packages, and tests/, scripts/ and bench/ where they import from the
   package itself), a `TYPE_CHECKING` block that shows mypy each name's real definition, and a PEP 562 `__getattr__`
   over a static name -> submodule table that imports the submodule on first use and keeps the value. Importing a
   face imports none of its submodules. A name the package's own code defines (or imports at run time) is not in
   the table.

Where a face finds a name: the inner imports being rewritten, the table it wrote last time, the `__init__.py`'s
own code. A name is followed through re-exports inside its package to the module that defines it. A submodule
imported as a module object (`from generator.yamlio import yamlout`, then `yamlout.dump`) is a name of the face
that stands for the whole submodule. A name that is also the name of a submodule of its package
(`generator.chart.plan`'s `plan`) cannot be on the face, since the import system sets the package's attribute to
the submodule when it loads: it stays imported from its module, and the other names of its statement go to the
face (the statement splits in two where it sits on a line of its own; `--report` lists what stays). Two different
objects may not share a public name: that stops the script with the file and line, writing nothing.

Deterministic and idempotent (pure `ast` reads and text edits): a second run changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "generator"
READERS = ("tests", "scripts", "bench")  # code outside generator/ whose face imports count, never rewritten
MARK = "# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part)."
HEAD = "from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)"


class FaceError(Exception):
    pass


@dataclass(frozen=True)
class Use:
    """One name imported from another package: `from {module} import {name}` at path:line."""

    path: Path
    line: int
    package: str  # the package imported from (its folder name)
    module: str  # the module the import names: `generator.P` (the face) or `generator.P.mod` (inside)
    name: str


def packages() -> list[str]:
    return sorted(p.name for p in GEN.iterdir() if (p / "__init__.py").is_file())


def submodules(package: str) -> set[str]:
    return {p.stem for p in (GEN / package).glob("*.py") if p.name != "__init__.py"}


def own_package(path: Path) -> str:
    """The package a file of generator/ belongs to; a top-level module (catalog.py) is its own."""
    parts = path.relative_to(GEN).parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts and ".venv" not in p.parts)


def _cross(path: Path, tree: ast.AST, own: str | None, pkgs: set[str]) -> list[tuple[ast.ImportFrom, str]]:
    """The `from generator.P... import` statements of another package P, with P."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and own is not None:
            for alias in node.names:
                if alias.name.startswith("generator.") and alias.name.split(".")[1] in pkgs - {own}:
                    raise FaceError(f"{path}:{node.lineno}: `import {alias.name}`: write `from ... import name`")
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("generator."):
            continue
        if node.level:
            continue  # relative: inside its own package
        package = node.module.split(".")[1]  # type: ignore[union-attr]
        if package in pkgs and package != own:
            out.append((node, package))
    return sorted(out, key=lambda item: (item[0].lineno, item[0].col_offset))


# ---------------------------------------------------------------- reading a package's __init__.py


@dataclass
class Init:
    path: Path
    docstring: str  # the source text of the docstring statement, or ""
    code: str  # the package's own code: everything but the docstring, the face's parts and `__all__`
    table: dict[str, str]  # the face's table as last written: name -> submodule
    reexports: dict[str, str]  # names its own code imported from a submodule only to pass them on: name -> submodule


def _split_generated(text: str) -> tuple[str, str]:
    """(the file less the face's parts, the face's part)."""
    at = text.find(MARK)
    tail = text[at:] if at >= 0 else ""
    body = text[:at] if at >= 0 else text
    body = "".join(line for line in body.splitlines(keepends=True) if line.rstrip("\n") != HEAD)
    return body, tail


def _table_of(tail: str) -> dict[str, str]:
    if not tail:
        return {}
    for node in ast.parse(tail).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "_FACE":
            value = ast.literal_eval(node.value)  # type: ignore[arg-type]
            return dict(value)
    return {}


def read_init(package: str, text: str | None = None) -> Init:
    path = GEN / package / "__init__.py"
    body, tail = _split_generated(path.read_text() if text is None else text)
    tree = ast.parse(body)
    lines = body.splitlines(keepends=True)
    docstring = ""
    drop: list[tuple[int, int]] = []
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        docstring = "".join(lines[first.lineno - 1:first.end_lineno])
        drop.append((first.lineno, first.end_lineno or first.lineno))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                drop.append((node.lineno, node.end_lineno or node.lineno))
    kept = [line for n, line in enumerate(lines, 1) if not any(a <= n <= b for a, b in drop)]
    code, reexports = _unshare(package, "".join(kept))
    code = re.sub(r"\n{3,}", "\n\n\n", code).strip("\n")
    return Init(path, docstring.strip("\n"), code, _table_of(tail), reexports)


def _unshare(package: str, code: str) -> tuple[str, dict[str, str]]:
    """The package's own code less the names it imports from its submodules and never uses itself (they were there
    to be passed on: the face loads them when asked), and those names -> their submodules. An import with a
    comment on its lines stays as written."""
    tree = ast.parse(code)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    lines = code.splitlines(keepends=True)
    out: dict[str, str] = {}
    for node in reversed(tree.body):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        parts = node.module.split(".")
        if len(parts) != 3 or parts[:2] != ["generator", package] or parts[2] not in submodules(package):
            continue
        first, last = node.lineno - 1, node.end_lineno or node.lineno
        if any("#" in line for line in lines[first:last]):
            continue
        keep = [a for a in node.names if (a.asname or a.name) in used]
        if len(keep) == len(node.names):
            continue
        for alias in node.names:
            if alias not in keep and alias.asname in (None, alias.name):
                out[alias.name] = _defining(package, parts[2], alias.name)
        names = [a.name if a.asname is None else f"{a.name} as {a.asname}" for a in keep]
        text = [_wrap(f"from {node.module} import (", names, ")", 116) + "\n"] if keep else []
        if text and len(names) == 1 or text and "\n" not in text[0].rstrip("\n"):
            text = [f"from {node.module} import {', '.join(names)}\n"]
        lines[first:last] = text
    return "".join(lines), out


def _bound(code: str) -> tuple[set[str], bool]:
    """Names the package's own code binds at run time (not under TYPE_CHECKING), and whether it imports
    TYPE_CHECKING."""
    names: set[str] = set()
    typing = False
    for node in ast.parse(code).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "typing":
            typing = typing or any(a.name == "TYPE_CHECKING" and a.asname is None for a in node.names)
        for sub in ast.walk(node):
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if sub is node:
                    names.add(sub.name)
            elif isinstance(sub, ast.Import | ast.ImportFrom) and sub is node:
                names.update((a.asname or a.name).split(".")[0] for a in sub.names)
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return names, typing


# ---------------------------------------------------------------- where a public name lives


def _defining(package: str, module: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The submodule of `package` that defines `name`, following re-exports from `module` inside the package."""
    if module in seen:
        return module
    tree = ast.parse((GEN / package / f"{module}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            alias = next(a for a in node.names if (a.asname or a.name) == name)
            if alias.name != name:
                return module
            source = node.module or ""
            if node.level == 1 and source in submodules(package):
                return _defining(package, source, name, seen | {module})
            parts = source.split(".")
            if len(parts) == 3 and parts[:2] == ["generator", package] and parts[2] in submodules(package):
                return _defining(package, parts[2], name, seen | {module})
    return module


@dataclass
class Face:
    package: str
    names: list[str]  # __all__
    table: dict[str, str]  # name -> submodule, for the names its own code does not bind


def _readers_names(pkgs: set[str]) -> dict[str, set[str]]:
    """Names tests/, scripts/ and bench/ import from a face (they may also reach inside, or name a submodule as a
    module object: neither is counted), and the console script of pyproject.toml."""
    out: dict[str, set[str]] = defaultdict(set)
    for folder in READERS:
        for path in _sources(ROOT / folder):
            try:
                tree = ast.parse(path.read_text())
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    parts = node.module.split(".")
                    if len(parts) == 2 and parts[0] == "generator" and parts[1] in pkgs:
                        out[parts[1]].update(a.name for a in node.names if a.name != "*")
    for match in re.finditer(r'"generator\.(\w+):(\w+)"', (ROOT / "pyproject.toml").read_text()):
        if match.group(1) in pkgs:
            out[match.group(1)].add(match.group(2))
    return out


def _home(use: Use, init: Init, bound: set[str]) -> str | None:
    """The submodule a used name lives in (None: the package's own code binds it)."""
    subs = submodules(use.package)
    if use.module.count(".") >= 2:
        return _defining(use.package, use.module.split(".")[2], use.name)
    if use.name in subs:
        return use.name  # the submodule itself, as a module object
    for known in (init.table, init.reexports):
        if use.name in known:
            return known[use.name]
    if use.name in bound:
        return None
    raise FaceError(f"{use.path.relative_to(ROOT)}:{use.line}: generator.{use.package} has no public name "
                    f"{use.name!r}; import it from its module once and run scripts/faces.py")


def plan_faces(uses: list[Use], pkgs: list[str], inits: dict[str, Init]) -> dict[str, Face]:
    wanted: dict[str, dict[str, list[Use]]] = {p: defaultdict(list) for p in pkgs}
    for use in uses:
        wanted[use.package][use.name].append(use)
    faces = {}
    readers = _readers_names(set(pkgs))
    for package in pkgs:
        init, subs = inits[package], submodules(package)
        bound = _bound(init.code)[0] if init.code else set()
        table: dict[str, str] = {}
        for name, where in sorted(wanted[package].items()):
            homes = {home for use in where if (home := _home(use, init, bound)) is not None}
            if name in subs and homes - {name}:
                raise FaceError(f"generator/{package}/: the public name {name!r} is also a submodule's name; rename "
                                f"one ({', '.join(f'{u.path.relative_to(ROOT)}:{u.line}' for u in where)})")
            if len(homes) > 1:
                raise FaceError(f"generator/{package}/: {name!r} is defined in {sorted(homes)}; rename one")
            if homes and name not in bound:
                table[name] = homes.pop()
        known = {**init.reexports, **init.table}
        extra = {n for n in readers.get(package, set()) if (n in bound or n in known) and n not in subs}
        for name in extra - set(table) - bound:
            table[name] = known.get(name, name)
        names = sorted(set(wanted[package]) | extra)
        faces[package] = Face(package, names, dict(sorted(table.items())))
    return faces


# ---------------------------------------------------------------- writing


def render_init(init: Init, face: Face) -> str:
    code = init.code
    parts = [init.docstring] if init.docstring else []
    future, rest = [], code
    if code:
        tree = ast.parse(code)
        lines = code.splitlines(keepends=True)
        cut = 0
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                cut = node.end_lineno or node.lineno
            else:
                break
        future, rest = ["".join(lines[:cut]).strip("\n")] if cut else [], "".join(lines[cut:]).strip("\n")
    _, typing = _bound(code) if code else (set(), False)
    parts += future
    if face.table and not typing:
        parts.append(HEAD)
    if rest:
        parts.append(rest)
    text = "\n\n".join(p for p in parts if p)
    return text.rstrip("\n") + "\n\n\n" + _face_text(face) + "\n"


def _face_text(face: Face) -> str:
    width = 116
    out = [MARK]
    out.append(_wrap("__all__ = [", [f'"{n}"' for n in face.names], "]", width))
    if face.table:
        out.append("")
        out.append("if TYPE_CHECKING:")
        for name, module in face.table.items():
            if name == module:
                out.append(f"    from . import {name} as {name}")
            else:
                out.append(f"    from .{module} import {name} as {name}")
        out.append("")
        out.append(_wrap("_FACE: dict[str, str] = {", [f'"{n}": "{m}"' for n, m in face.table.items()], "}", width))
        out.append("")
        out.append("if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use")
        out.append("    from generator import face as _face")
        out.append("")
        out.append("    __getattr__ = _face(globals(), _FACE)")
    return "\n".join(out)


def _wrap(opening: str, items: list[str], closing: str, width: int) -> str:
    one = opening + ", ".join(items) + closing
    if len(one) <= width:
        return one
    lines, line = [], opening
    indent = " " * len(opening)
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else closing)
        if len(line) + len(piece.rstrip()) > width and line.strip() != opening.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return "\n".join(lines)


def _names(aliases: list[ast.alias]) -> str:
    return ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in aliases)


def rewrite_file(path: Path, nodes: list[tuple[ast.ImportFrom, str]]) -> str:
    """The file with each inner import of another package turned to its face: only the module's name changes, or
    (an import that also names a submodule's name) the statement splits in two on its line's place."""
    lines = path.read_text().splitlines(keepends=True)
    for node, package in nodes:
        if node.module == f"generator.{package}":
            continue
        i = node.lineno - 1
        head, tail = lines[i][:node.col_offset], lines[i][node.col_offset:]
        same = [a for a in node.names if a.name in submodules(package)]
        if same:
            rest = lines[i][node.end_col_offset or 0:]
            others = [a for a in node.names if a not in same]
            lines[i] = (f"{head}from generator.{package} import {_names(others)}{rest.rstrip(chr(10))}\n"
                        f"{head}from {node.module} import {_names(same)}\n")
            continue
        pattern = re.compile(r"from(\s+)" + re.escape(node.module or "") + r"(?=[\s(\\])")
        new, count = pattern.subn(rf"from\g<1>generator.{package}", tail, count=1)
        if count != 1:
            raise FaceError(f"{path.relative_to(ROOT)}:{node.lineno}: cannot read this import's module on its line")
        lines[i] = head + new
    return "".join(lines)


def kept_inside(node: ast.ImportFrom, package: str, line: str) -> bool:
    """An import from inside a package of a name that is also one of the package's submodules' names
    (`from generator.chart.plan import plan`) stays on its module: the face cannot hold such a name (the import
    system sets the package's attribute to the submodule). Its other names go to the face (the statement splits
    in two) where it sits on one line of its own."""
    if (node.module or "").count(".") < 2:
        return False
    same = [a for a in node.names if a.name in submodules(package)]
    alone = node.lineno == node.end_lineno and not line[:node.col_offset].strip()
    return bool(same) and (len(same) == len(node.names) or not alone)


def scan(pkgs: list[str]) -> tuple[list[Use], dict[Path, list[tuple[ast.ImportFrom, str]]]]:
    uses, edits = [], {}
    for path in _sources(GEN):
        own = own_package(path)
        text = path.read_text()
        lines = text.splitlines()
        nodes = [(n, p) for n, p in _cross(path, ast.parse(text), own, set(pkgs))
                 if not kept_inside(n, p, lines[n.lineno - 1])]
        if nodes:
            edits[path] = nodes
        for node, package in nodes:
            uses.extend(Use(path, node.lineno, package, node.module or "", a.name) for a in node.names
                        if node.module == f"generator.{package}" or a.name not in submodules(package))
    return uses, edits


def planned() -> dict[Path, str]:
    """Every file the script would write, with its new text (only those that change)."""
    pkgs = packages()
    uses, edits = scan(pkgs)
    texts = {path: rewrite_file(path, nodes) for path, nodes in edits.items()}
    inits = {p: read_init(p, texts.get(GEN / p / "__init__.py")) for p in pkgs}
    for package, face in plan_faces(uses, pkgs, inits).items():
        texts[inits[package].path] = render_init(inits[package], face)
    out = {path: text for path, text in texts.items() if text != path.read_text()}
    for path, text in out.items():
        ast.parse(text, str(path))
    return out


def report() -> str:
    pkgs = packages()
    uses, _ = scan(pkgs)
    faces = plan_faces(uses, pkgs, {p: read_init(p) for p in pkgs})
    inner = sum(1 for u in uses if u.module.count(".") >= 2)
    modules = sorted({(u.path.relative_to(ROOT), u.line, u.package, u.name) for u in uses
                      if u.module.count(".") == 1 and u.name in submodules(u.package)})
    lines = [f"{len(uses)} names imported across packages, {inner} of them from inside a package"]
    for package, face in faces.items():
        lines.append(f"  {package}: {len(face.names)} public names, {len(face.table)} loaded lazily")
    kept = []
    for path in _sources(GEN):
        text = path.read_text()
        for node, package in _cross(path, ast.parse(text), own_package(path), set(pkgs)):
            if kept_inside(node, package, text.splitlines()[node.lineno - 1]):
                kept.append(f"  {path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {_names(node.names)}")
    lines.append(f"{len(kept)} imports stay on their module (a public name that is also a submodule's name):")
    lines += kept
    lines.append(f"{len(modules)} imports name a submodule as a module object:")
    lines += [f"  {path}:{line}: generator.{package} {name}" for path, line, package, name in modules]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if the tree is not faced")
    parser.add_argument("--report", action="store_true", help="the faces and the module-object imports")
    args = parser.parse_args(argv)
    try:
        if args.report:
            print(report())
            return 0
        changes = planned()
    except FaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in sorted(changes):
        print(("would rewrite " if args.check else "rewrote ") + str(path.relative_to(ROOT)))
        if not args.check:
            path.write_text(changes[path])
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    sys.exit(main())
