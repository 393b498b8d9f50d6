"""Generate an SGLang flag table (catalog/flags/sglang-<version>.yaml) from the release wheel's server_args.py.

    python scripts/flags/sglang_flags.py --wheel sglang-0.5.14-cp311-cp311-manylinux_2_34_x86_64.whl \
        --version 0.5.14 --table sglang-0-5-14 --image docker.io/lmsysorg/sglang:v0.5.14-cu130

SGLang v0.5.14 derives its CLI from the `ServerArgs` dataclass: every field annotated `A[T, "help"]` or
`A[T, Arg(...)]` becomes `--field-name` (python/sglang/srt/arg_groups/arg_utils.py `add_cli_args_from_dataclass`:
bool -> store_true, Literal -> choices, List -> nargs "+", Arg.aliases / cli_name / nargs / action), and
`ServerArgs.add_cli_args` adds a few by hand (`parser.add_argument`). This script reads both from the source
text with `ast` (no import of sglang, torch or CUDA), so the table is what that release's parser accepts.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tablewriter import today, write_table  # noqa: E402

SERVER_ARGS = "sglang/srt/server_args.py"
SWITCH_ACTIONS = ("StoreTrue", "StoreConst", "store_true", "store_false", "store_const")


def _name(node: ast.expr) -> str:
    return ast.unparse(node)


def _kwargs(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg}


CONSTANTS: dict[str, list[str]] = {}  # module-level `NAME = [...]` lists of server_args.py (choice lists)


def _literal_list(node: ast.expr | None) -> list[str] | None:
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return CONSTANTS.get(node.id)
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else None


def _flag(names: list[str], *, kind: str, nargs: str, choices: list[str] | None, note: str) -> dict:
    out: dict = {"name": names[0]}
    if names[1:]:
        out["aliases"] = sorted(set(names[1:]))
    out["nargs"] = nargs
    out["type"] = "choice" if choices and nargs != "0" else kind
    if choices and nargs != "0":
        out["choices"] = choices
    out["note"] = note
    return out


def _type_of(text: str) -> str:
    if text in ("int",):
        return "int"
    if text in ("float",):
        return "float"
    if text == "bool":
        return "bool"
    return "str"


def _field_flag(stmt: ast.AnnAssign) -> dict | None:
    """One `name: A[T, meta] = default` field of ServerArgs as a flag; None when it has no CLI."""
    ann = stmt.annotation
    if not (isinstance(ann, ast.Subscript) and _name(ann.value) in ("A", "Annotated")):
        return None
    parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    inner, metas = parts[0], parts[1:]
    meta: dict[str, ast.expr] = {}
    has_meta = False
    for m in metas:
        if isinstance(m, ast.Constant) and isinstance(m.value, str) or isinstance(m, ast.JoinedStr):
            has_meta = True
        elif isinstance(m, ast.Call) and _name(m.func) == "Arg":
            has_meta = True
            meta = _kwargs(m)
    if not has_meta:
        return None
    if "no_cli" in meta and _name(meta["no_cli"]) == "True":
        return None
    assert isinstance(stmt.target, ast.Name)
    field = stmt.target.id
    cli = ast.literal_eval(meta["cli_name"]) if "cli_name" in meta else "--" + field.replace("_", "-")
    names = [cli] + (_literal_list(meta.get("aliases")) or [])
    note = f"ServerArgs.{field}"
    text = _name(inner)
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional["):-1]
    if "action" in meta:
        action = _name(meta["action"])
        switch = any(a in action for a in SWITCH_ACTIONS)
        return _flag(names, kind="bool" if switch else "str", nargs="0" if switch else "1", choices=None, note=note)
    if text.startswith("Literal["):
        values = [str(v) for v in ast.literal_eval("[" + text[len("Literal["):-1] + "]")]
        choices = _literal_list(meta.get("choices")) or values
        return _flag(names, kind="str", nargs="1", choices=choices, note=note)
    nargs = ast.literal_eval(meta["nargs"]) if "nargs" in meta else None
    if (text.startswith(("List[", "list[")) and "type_parser" not in meta) or nargs:
        elem = text[text.index("[") + 1:-1] if "[" in text else "str"
        return _flag(names, kind=_type_of(elem), nargs=nargs or "+", choices=_literal_list(meta.get("choices")),
                     note=note)
    if text == "bool":
        return _flag(names, kind="bool", nargs="0", choices=None, note=note)
    kind = "str" if "type_parser" in meta else _type_of(text)
    return _flag(names, kind=kind, nargs="1", choices=_literal_list(meta.get("choices")), note=note)


def _added_flag(call: ast.Call) -> dict | None:
    """One `parser.add_argument("--x", ...)` of ServerArgs.add_cli_args."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names or not names[0].startswith("-"):
        return None
    kw = _kwargs(call)
    action = _name(kw["action"]) if "action" in kw else ""
    switch = any(a in action for a in SWITCH_ACTIONS) or action == "DeprecatedAction"
    nargs = ast.literal_eval(kw["nargs"]) if "nargs" in kw else ("0" if switch else "1")
    kind = _type_of(_name(kw["type"])) if "type" in kw else ("bool" if switch else "str")
    return _flag(names, kind=kind, nargs=str(nargs), choices=_literal_list(kw.get("choices")),
                 note="ServerArgs.add_cli_args" + (f" ({action})" if action else ""))


def _constants(tree: ast.Module) -> None:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                value = ast.literal_eval(stmt.value)
            except ValueError:
                continue
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                CONSTANTS[stmt.targets[0].id] = value


def _dedupe(found: dict[str, dict]) -> list[dict]:
    """One entry per spelling: a later flag drops the aliases an earlier one has."""
    seen: set[str] = set()
    out = []
    for flag in sorted(found.values(), key=lambda f: f["name"]):
        if flag["name"] in seen:
            continue
        aliases = [s for s in flag.get("aliases", []) if s not in seen]
        flag.pop("aliases", None)
        if aliases:
            flag = {"name": flag["name"], "aliases": aliases, **{k: v for k, v in flag.items() if k != "name"}}
        seen.update([flag["name"], *aliases])
        out.append(flag)
    return out


def flags_of(source: str) -> list[dict]:
    tree = ast.parse(source)
    _constants(tree)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs")
    found: dict[str, dict] = {}
    for stmt in cls.body:
        flag = _field_flag(stmt) if isinstance(stmt, ast.AnnAssign) else None
        if flag:
            found.setdefault(flag["name"], flag)
    add = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args")
    for node in ast.walk(add):
        flag = _added_flag(node) if isinstance(node, ast.Call) and _name(node.func).endswith("add_argument") else None
        if flag:
            found.setdefault(flag["name"], flag)
    return _dedupe(found)


def build(args: argparse.Namespace) -> dict:
    wheel = Path(args.wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read(SERVER_ARGS).decode("utf-8")
    command = (f"python scripts/flags/sglang_flags.py --wheel {wheel.name} --version {args.version} "
               f"--table {args.table} --image {args.image}")
    return {
        "id": args.table, "engine": "sglang", "fork": "upstream", "image": args.image, "version": args.version,
        "provenance": {
            "method": "generated", "generator": "scripts/flags/sglang_flags.py", "command": command,
            "input": f"{wheel.name} (sha256 {digest}) from PyPI: {SERVER_ARGS} (ServerArgs fields and add_cli_args)",
            "date": today(args.date),
            "sources": [{"ref": f"https://pypi.org/project/sglang/{args.version}/",
                         "note": f"release wheel {wheel.name}"},
                        {"ref": f"github.com/sgl-project/sglang@v{args.version} python/{SERVER_ARGS}"}],
        },
        "syntax": {"equals_values": True, "underscores": False, "dotted_json": False},
        "flags": flags_of(source),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, help="the sglang release wheel (pip download sglang==VERSION)")
    parser.add_argument("--version", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--image", required=True)
    parser.add_argument("--date", help="provenance date (default: today)")
    parser.add_argument("--out", default="catalog/flags", help="folder, or - for stdout")
    args = parser.parse_args(argv)
    write_table(build(args), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
