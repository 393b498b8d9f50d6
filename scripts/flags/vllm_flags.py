#!/usr/bin/env python3
"""Generate a vLLM flag table from the real release wheel, without installing vLLM (docs/flags.md).

`vllm serve` builds its parser from dataclasses, so the flags are read statically with `ast`:
- `EngineArgs.add_cli_args` / `AsyncEngineArgs.add_cli_args` (vllm/engine/arg_utils.py): every
  `add_argument("--flag", "-alias", **cfg_kwargs["field"])` call, the field typed in vllm/config/*.py;
- `make_arg_parser` + `FrontendArgs` (vllm/entrypoints/openai/cli_args.py): dataclass fields become
  `--kebab-case` flags; `serve` adds its own (vllm/entrypoints/cli/serve.py).
Field types map to flags the way vLLM's `_compute_kwargs` does: a dataclass -> JSON (its fields become
the allowed JSON keys), bool -> `--x/--no-x`, Literal -> choices (open when the union also has `str`),
list -> one or more values, Enum -> names (case-insensitive when a validator upper-cases them).

    python scripts/flags/vllm_flags.py --version 0.19.1 --table vllm-0-19-1 \
        --image vllm/vllm-openai:v0.19.1-cu130 [--overlay scripts/flags/overlays/X.yaml] [--out catalog/flags]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tablewriter import apply_overlay, cache_dir, today, write_table  # noqa: E402

ENTRY_FILES = ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/cli/serve.py")
TYPE_FILES = ("vllm/v1/attention/backends/registry.py", "vllm/model_executor/layers/quantization/__init__.py")
ENVS_FILE = "vllm/envs.py"
PARSER_FILE = "vllm/utils/argparse_utils.py"  # FlexibleArgumentParser
# Built-in parser registries: (flag, file that registers them, dict of name -> (module, class)).
PARSER_REGISTRIES = (
    ("--reasoning-parser", ("vllm/reasoning/__init__.py",), "_REASONING_PARSERS_TO_REGISTER"),
    ("--tool-call-parser", ("vllm/tool_parsers/__init__.py", "vllm/entrypoints/openai/tool_parsers/__init__.py"),
     "_TOOL_PARSERS_TO_REGISTER"),
)
TYPE_DIRS = ("vllm/config/",)
BUILTIN = {"bool", "int", "float", "str", "dict", "list", "tuple", "set", "Any", "None", "NoneType"}


# ----------------------------------------------------------------------------------------------------
# Reading the wheel
# ----------------------------------------------------------------------------------------------------

def fetch_wheel(version: str, cache: Path) -> Path:
    """The wheel of `vllm==version` in the cache, downloaded once with pip (no dependencies)."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"vllm-{version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        f"vllm=={version}", "-d", str(cache)], check=True, stdout=sys.stderr)
        found = sorted(cache.glob(f"vllm-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip did not produce a vllm {version} wheel in {cache}")
    return found[-1]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_sources(wheel: Path) -> dict[str, ast.Module]:
    with zipfile.ZipFile(wheel) as zf:
        extra = {ENVS_FILE, PARSER_FILE, *(f for _, files, _ in PARSER_REGISTRIES for f in files)}
        names = [n for n in zf.namelist() if n in ENTRY_FILES or n in TYPE_FILES or n in extra
                 or (n.startswith(TYPE_DIRS) and n.endswith(".py"))]
        missing = [n for n in ENTRY_FILES if n not in names]
        if missing:
            raise SystemExit(f"{wheel.name}: missing {', '.join(missing)}; is this a vLLM wheel?")
        return {n: ast.parse(zf.read(n).decode("utf-8"), n) for n in sorted(names)}


# ----------------------------------------------------------------------------------------------------
# Types: Literal aliases, Enums and config dataclasses, indexed by bare name
# ----------------------------------------------------------------------------------------------------

@dataclass
class ClassInfo:
    name: str
    bases: list[str]
    fields: dict[str, ast.expr]
    validators: dict[str, list[ast.FunctionDef]]
    members: list[str] = field(default_factory=list)  # Enum members
    int_values: list[int] = field(default_factory=list)  # the int values of an Enum's members (`PIECEWISE = 1`)
    int_enum: bool = False
    is_dataclass: bool = False
    is_enum: bool = False


def bare(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return bare(node.func)
    return None


def _class_info(node: ast.ClassDef) -> ClassInfo:
    bases = [b for b in (bare(x) for x in node.bases) if b]
    info = ClassInfo(node.name, bases, {}, {})
    info.is_dataclass = any(bare(d) in {"config", "dataclass"} for d in node.decorator_list)
    info.is_enum = any(b.endswith("Enum") for b in bases)
    info.int_enum = "IntEnum" in bases
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            annotation = item.annotation
            if not (isinstance(annotation, ast.Subscript) and bare(annotation.value) in {"ClassVar", "InitVar"}):
                info.fields[item.target.id] = item.annotation
        elif isinstance(item, ast.Assign) and info.is_enum:
            info.members += [t.id for t in item.targets if isinstance(t, ast.Name) and not t.id.startswith("_")]
            value = item.value
            if isinstance(value, ast.Constant) and type(value.value) is int:
                info.int_values.append(value.value)
        elif isinstance(item, ast.FunctionDef):
            for deco in item.decorator_list:
                if isinstance(deco, ast.Call) and bare(deco.func) == "field_validator":
                    for arg in deco.args:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            info.validators.setdefault(arg.value, []).append(item)
    return info


class TypeIndex:
    def __init__(self, modules: dict[str, ast.Module]):
        self.aliases: dict[str, ast.expr] = {}
        self.classes: dict[str, ClassInfo] = {}
        for tree in modules.values():
            for node in tree.body:
                self._index(node)

    def _index(self, node: ast.stmt) -> None:
        if isinstance(node, ast.ClassDef):
            self.classes.setdefault(node.name, _class_info(node))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, (ast.Subscript, ast.BinOp)):
                self.aliases.setdefault(node.targets[0].id, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            if bare(node.annotation) == "TypeAlias":
                self.aliases.setdefault(node.target.id, node.value)
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING: ... else: ...`
            for child in node.body + node.orelse:
                self._index(child)

    def fields(self, cls: str) -> dict[str, ast.expr]:
        info = self.classes.get(cls)
        if info is None:
            return {}
        out: dict[str, ast.expr] = {}
        for base in info.bases:
            out.update(self.fields(base))
        out.update(info.fields)
        return out


@dataclass
class Atoms:
    """A type hint flattened like vLLM's get_type_hints: the set of its alternatives."""

    names: set[str] = field(default_factory=set)  # builtins and unresolved names
    literals: list[str] = field(default_factory=list)
    enums: list[str] = field(default_factory=list)
    dataclasses: list[str] = field(default_factory=list)
    generics: set[str] = field(default_factory=set)  # list, dict, tuple, set origins
    optional: bool = False


def _flatten_constant(node: ast.Constant, index: TypeIndex, atoms: Atoms, depth: int) -> Atoms:
    """`None` makes the type optional; a string is a forward reference (parsed), else a bare name."""
    if node.value is None:
        atoms.optional = True
    elif isinstance(node.value, str):  # a forward reference
        try:
            flatten(ast.parse(node.value, mode="eval").body, index, atoms, depth + 1)
        except SyntaxError:
            atoms.names.add(node.value)
    return atoms


def flatten(node: ast.expr | None, index: TypeIndex, atoms: Atoms | None = None, depth: int = 0) -> Atoms:
    atoms = atoms if atoms is not None else Atoms()
    if node is None or depth > 20:
        return atoms
    if isinstance(node, ast.Constant):
        return _flatten_constant(node, index, atoms, depth)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        flatten(node.left, index, atoms, depth + 1)
        return flatten(node.right, index, atoms, depth + 1)
    if isinstance(node, ast.Subscript):
        return _flatten_subscript(node, index, atoms, depth)
    name = bare(node)
    if name is None:
        return atoms
    if name in index.aliases:
        return flatten(index.aliases[name], index, atoms, depth + 1)
    info = index.classes.get(name)
    if info is not None and info.is_enum:
        atoms.enums.append(name)
    elif info is not None and info.is_dataclass:
        atoms.dataclasses.append(name)
    elif name in {"list", "dict", "tuple", "set", "List", "Dict", "Tuple", "Set", "Sequence", "Mapping"}:
        atoms.generics.add(name.lower())
    else:
        atoms.names.add(name)
    return atoms


def _flatten_subscript(node: ast.Subscript, index: TypeIndex, atoms: Atoms, depth: int) -> Atoms:
    origin = bare(node.value)
    args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if origin == "Literal":
        atoms.literals += literal_values(args, index)
    elif origin == "Annotated":
        flatten(args[0], index, atoms, depth + 1)
    elif origin in {"Union", "Optional"}:
        for arg in args:
            flatten(arg, index, atoms, depth + 1)
        atoms.optional |= origin == "Optional"
    elif origin in {"list", "List", "tuple", "Tuple", "set", "Set", "Sequence", "dict", "Dict", "Mapping"}:
        atoms.generics.add({"sequence": "list", "mapping": "dict"}.get(origin.lower(), origin.lower()))
    else:
        flatten(node.value, index, atoms, depth + 1)
    return atoms


def literal_values(args: list[ast.expr], index: TypeIndex, depth: int = 0) -> list[str]:
    out: list[str] = []
    for arg in args:
        if isinstance(arg, ast.Constant) and arg.value is not None:
            out.append(str(arg.value))
        elif depth < 20 and bare(arg) in index.aliases:
            alias = index.aliases[bare(arg)]
            if isinstance(alias, ast.Subscript) and bare(alias.value) == "Literal":
                inner = alias.slice.elts if isinstance(alias.slice, ast.Tuple) else [alias.slice]
                out += literal_values(inner, index, depth + 1)
    return out


# ----------------------------------------------------------------------------------------------------
# Field -> flag kind (mirrors vllm.engine.arg_utils._compute_kwargs)
# ----------------------------------------------------------------------------------------------------

@dataclass
class Kind:
    type: str = "str"
    nargs: str = "1"
    choices: list[str] = field(default_factory=list)
    strict: bool = True
    case_insensitive: bool = False
    json_class: str | None = None
    boolean_optional: bool = False
    note: str | None = None


def enum_choices(index: TypeIndex, enum: str, owner: ClassInfo | None, field_name: str) -> tuple[list[str], bool]:
    """Member names; strict when the owner's validator maps strings through `Enum[value.upper()]`."""
    info = index.classes[enum]
    choices = list(info.members)
    if info.int_enum:
        choices += [str(i) for i in range(len(info.members))]
    else:
        # a JSON number reaches pydantic as it is (the validators below map only strings) and pydantic takes an Enum
        # member by its value: vllm/config/compilation.py `CUDAGraphMode` (NONE = 0, PIECEWISE = 1, FULL = 2) and
        # `validate_cudagraph_mode_before` (`if isinstance(value, str): return CUDAGraphMode[value.upper()]; return
        # value`) accept `"cudagraph_mode": 1`, which github.com/coynntis/olares-one-market@cb991c8f
        # nemotronlabselastic30bnvfp4one runs on vLLM 0.22.1
        choices += [str(v) for v in info.int_values if str(v) not in choices]
    strict = False
    for fn in (owner.validators.get(field_name, []) if owner else []):
        for node in ast.walk(fn):
            if isinstance(node, ast.Subscript) and bare(node.value) == enum:
                strict = True
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
                choices += [c.value for c in node.comparators
                            if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return choices, strict


def kind_of(annotation: ast.expr, index: TypeIndex, owner: ClassInfo | None, field_name: str) -> Kind:
    atoms = flatten(annotation, index)
    kind = Kind()
    if atoms.dataclasses:
        kind.type, kind.json_class = "json", atoms.dataclasses[0]
    elif "bool" in atoms.names:
        kind.type, kind.nargs, kind.boolean_optional = "bool", "0", True
    elif atoms.literals:
        kind.type, kind.choices = "choice", list(dict.fromkeys(atoms.literals))
        kind.strict = "str" not in atoms.names
    elif atoms.generics & {"tuple", "list", "set"}:
        kind.nargs = "+"
    elif "int" in atoms.names:
        kind.type = "int"
    elif "float" in atoms.names:
        kind.type = "float"
    elif "dict" in atoms.generics:
        kind.type = "json"
    elif atoms.enums:
        kind.type = "choice"
        kind.choices, kind.strict = enum_choices(index, atoms.enums[0], owner, field_name)
        kind.case_insensitive = True
    if atoms.optional and atoms.literals and kind.choices and not kind.boolean_optional:
        kind.choices.append("None")  # argparse's optional_type accepts the string "None" for Literal choices
    return kind


def json_keys(cls: str, index: TypeIndex, renamed: dict[str, dict[str, str]]) -> list[dict]:
    owner = index.classes.get(cls)
    keys = []
    for name, annotation in index.fields(cls).items():
        if name.startswith("_"):
            continue
        kind = kind_of(annotation, index, owner, name)
        entry: dict = {"name": name, "type": "list" if kind.nargs == "+" else kind.type}
        if kind.type == "choice" and kind.choices and kind.strict:
            entry["choices"] = kind.choices
            if kind.case_insensitive:
                entry["case_insensitive"] = True
        if renamed.get(name):
            entry["renamed"] = renamed[name]
        keys.append(entry)
    return keys


# ----------------------------------------------------------------------------------------------------
# add_argument calls
# ----------------------------------------------------------------------------------------------------

@dataclass
class Registration:
    options: list[str]
    kind: Kind
    deprecated: bool = False


class ParserWalker:
    """Collects the flags one parser-building function registers."""

    def __init__(self, index: TypeIndex, renamed: dict[str, dict[str, dict[str, str]]]):
        self.index = index
        self.renamed = renamed
        self.flags: list[dict] = []
        self.positionals: list[str] = []

    def walk_function(self, fn: ast.FunctionDef) -> None:
        bindings: dict[str, str] = {}  # cfg_kwargs -> ConfigClass
        views: dict[str, tuple[str, str]] = {}  # moe_kwargs -> (cfg_kwargs, field)
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
                if isinstance(value, ast.Call) and bare(value.func) == "get_kwargs" and value.args:
                    bindings[target] = bare(value.args[0]) or ""
                elif (ref := _field_ref(value)) is not None:
                    views[target] = ref
        mutations = _mutations(fn, views)
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                self._register(node, bindings, mutations)

    def add_dataclass_fields(self, cls: str, mutations: dict[tuple[str, str], dict]) -> None:
        owner = self.index.classes.get(cls)
        for name, annotation in self.index.fields(cls).items():
            kind = kind_of(annotation, self.index, owner, name)
            _apply_mutation(kind, mutations.get(("*", name), {}))
            extra = mutations.get(("*", name), {}).get("flags", [])
            self._emit(Registration([*extra, "--" + name.replace("_", "-")], kind), cls, name)

    def _register(self, call: ast.Call, bindings: dict[str, str], mutations: dict) -> None:
        options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not options:
            return
        if not options[0].startswith("-"):
            self.positionals.append(options[0])
            return
        kind, cls, field_name = Kind(), None, None
        for kw in call.keywords:
            ref = _kwargs_ref(kw) if kw.arg is None else None
            if ref is not None and ref[0] in bindings:
                cls, field_name = bindings[ref[0]], ref[1]
                annotation = self.index.fields(cls).get(field_name)
                if annotation is not None:
                    kind = kind_of(annotation, self.index, self.index.classes.get(cls), field_name)
                _apply_mutation(kind, mutations.get((ref[0], field_name), {}))
        deprecated = _explicit_kwargs(call, kind)
        self._emit(Registration(options, kind, deprecated), cls, field_name)

    def _emit(self, reg: Registration, cls: str | None, field_name: str | None) -> None:
        longs = [o for o in reg.options if o.startswith("--")]
        name = longs[0] if longs else reg.options[0]
        aliases = [o for o in reg.options if o != name]
        if reg.kind.boolean_optional:
            aliases += ["--no-" + o[2:] for o in longs]
        flag: dict = {"name": name}
        if aliases:
            flag["aliases"] = aliases
        flag["nargs"] = reg.kind.nargs
        flag["type"] = reg.kind.type
        if reg.kind.choices:
            flag["choices"] = reg.kind.choices
            if not reg.kind.strict:
                flag["choices_strict"] = False
            if reg.kind.case_insensitive:
                flag["case_insensitive"] = True
        if reg.kind.json_class:
            flag["json_keys"] = json_keys(reg.kind.json_class, self.index, self.renamed.get(reg.kind.json_class, {}))
        notes = [n for n in (reg.kind.note, "deprecated" if reg.deprecated else None) if n]
        if cls and field_name:
            notes.insert(0, f"{cls}.{field_name}")
        if notes:
            flag["note"] = "; ".join(notes)
        self.flags.append(flag)


def _field_ref(node: ast.expr) -> tuple[str, str] | None:
    """`cfg_kwargs["field"]` -> ("cfg_kwargs", "field")."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant):
        return node.value.id, str(node.slice.value)
    return None


def _kwargs_ref(kw: ast.keyword) -> tuple[str, str] | None:
    """`**cfg["f"]` or `**{**cfg["f"], "default": None}`."""
    if (ref := _field_ref(kw.value)) is not None:
        return ref
    if isinstance(kw.value, ast.Dict):
        for key, value in zip(kw.value.keys, kw.value.values, strict=True):
            if key is None and (ref := _field_ref(value)) is not None:
                return ref
    return None


def _mutations(fn: ast.AST, views: dict[str, tuple[str, str]] | None = None) -> dict[tuple[str, str], dict]:
    """`cfg["field"]["key"] = value`, `del cfg["field"]["key"]` and `+=`, keyed by (cfg, field)."""
    views = views or {}
    out: dict[tuple[str, str], dict] = {}
    for node in ast.walk(fn):
        targets: list[tuple[ast.expr, str, ast.expr | None]] = []
        if isinstance(node, ast.Assign):
            targets = [(t, "set", node.value) for t in node.targets]
        elif isinstance(node, ast.AugAssign):
            targets = [(node.target, "add", node.value)]
        elif isinstance(node, ast.Delete):
            targets = [(t, "del", None) for t in node.targets]
        for target, op, value in targets:
            if not (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)):
                continue
            ref = _field_ref(target.value)
            if ref is None and isinstance(target.value, ast.Name) and target.value.id in views:
                ref = views[target.value.id]
            if ref is not None:
                key = ("*", ref[1]) if ref[0] == "frontend_kwargs" else ref
                out.setdefault(key, {})[str(target.slice.value)] = (op, value)
    return out


def _apply_mutation(kind: Kind, mutation: dict) -> None:
    for key, (op, value) in mutation.items():
        if key == "nargs" and op == "del":
            kind.nargs = "1"
        elif key == "action" and op == "set":
            kind.nargs = "1" if _const(value) == "append" else kind.nargs
        elif key == "type" and op == "set":
            text = ast.unparse(value)
            if "json.loads" in text:
                kind.type, kind.nargs = "json", "1"
            elif isinstance(value, ast.Lambda):
                kind.strict, kind.case_insensitive = False, True
                kind.note = f"value normalised by `{text}` before the choice check"
        elif key == "choices" and op == "add":
            kind.strict = False
            kind.note = "also accepts comma-joined pairs of the choices"
        elif key == "flags" and op == "set":
            pass


def _explicit_kwargs(call: ast.Call, kind: Kind) -> bool:
    deprecated = False
    for kw in call.keywords:
        value = kw.value
        if kw.arg == "action":
            action = _const(value) or bare(value)
            if action in {"store_true", "store_false", "store_const", "count", "BooleanOptionalAction"}:
                kind.nargs, kind.type, kind.choices = "0", "bool", []
                kind.boolean_optional = action == "BooleanOptionalAction"
            elif action == "append":
                kind.nargs = "1"
        elif kw.arg == "nargs":
            kind.nargs = str(_const(value))
        elif kw.arg == "choices" and isinstance(value, (ast.List, ast.Tuple)):
            kind.type, kind.choices = "choice", [str(_const(e)) for e in value.elts]
        elif kw.arg == "type":
            name = bare(value)
            kind.type = {"int": "int", "float": "float", "str": "str"}.get(name or "", kind.type)
            if "json.loads" in ast.unparse(value):
                kind.type = "json"
        elif kw.arg == "deprecated":
            deprecated = bool(_const(value))
    return deprecated


def _const(node: ast.expr | None):
    return node.value if isinstance(node, ast.Constant) else None


# ----------------------------------------------------------------------------------------------------
# The whole `vllm serve` parser
# ----------------------------------------------------------------------------------------------------

def find_function(tree: ast.Module, name: str, cls: str | None = None) -> ast.FunctionDef | None:
    scope = tree.body
    if cls is not None:
        owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        scope = owner.body if owner else []
    return next((n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name), None)


def legacy_renames(modules: dict[str, ast.Module]) -> dict[str, dict[str, dict[str, str]]]:
    """SpeculativeConfig.method: `*_mtp` names that the source rewrites to `mtp` with a deprecation warning."""
    source = ast.unparse(modules.get("vllm/config/speculative.py", ast.Module(body=[], type_ignores=[])))
    if "is deprecated and replaced with mtp" not in source:
        return {}
    index = TypeIndex({"s": modules["vllm/config/speculative.py"]})
    alias = index.aliases.get("MTPModelTypes")
    if alias is None:
        return {}
    names = literal_values(alias.slice.elts if isinstance(alias.slice, ast.Tuple) else [alias.slice], index)
    return {"SpeculativeConfig": {"method": {n: "mtp" for n in names if n != "mtp"}}}


def extract(modules: dict[str, ast.Module]) -> tuple[list[dict], list[str]]:
    index = TypeIndex(modules)
    walker = ParserWalker(index, legacy_renames(modules))
    arg_utils = modules["vllm/engine/arg_utils.py"]
    cli_args = modules["vllm/entrypoints/openai/cli_args.py"]
    serve = modules["vllm/entrypoints/cli/serve.py"]
    for fn in (find_function(cli_args, "make_arg_parser"), find_function(serve, "subparser_init", _serve_class(serve)),
               find_function(arg_utils, "add_cli_args", "EngineArgs"),
               find_function(arg_utils, "add_cli_args", "AsyncEngineArgs")):
        if fn is not None:
            walker.walk_function(fn)
    frontend = "FrontendArgs" if "FrontendArgs" in index.classes else None
    if frontend:
        mutations: dict = {}
        for cls in ("BaseFrontendArgs", "FrontendArgs"):
            fn = find_function(cli_args, "_customize_cli_kwargs", cls)
            if fn is not None:
                mutations.update(_mutations(fn))
        walker.add_dataclass_fields(frontend, mutations)
    return merge(walker.flags), walker.positionals


def _attached(modules: dict[str, ast.Module]) -> dict:
    """FlexibleArgumentParser rewrites `-O3` / `-O=3` / `-O 3` to `--optimization-level 3`."""
    source = ast.unparse(modules.get("vllm/utils/argparse_utils.py", ast.Module(body=[], type_ignores=[])))
    attached = "--optimization-level" in source and 'startswith("-O")' in source.replace("'", '"')
    return {"attached_values": ["-O"]} if attached else {}


def _serve_class(tree: ast.Module) -> str | None:
    return next((n.name for n in tree.body if isinstance(n, ast.ClassDef)
                 and find_function(tree, "subparser_init", n.name)), None)


def merge(flags: list[dict]) -> list[dict]:
    """One entry per canonical name (a flag registered twice keeps its first definition)."""
    out: dict[str, dict] = {}
    taken: set[str] = set()
    for flag in flags:
        spellings = [flag["name"], *flag.get("aliases", [])]
        if flag["name"] in out or any(s in taken for s in spellings):
            continue
        out[flag["name"]] = flag
        taken.update(spellings)
    return sorted(out.values(), key=lambda f: f["name"])


def _dict_keys(tree: ast.Module, variable: str) -> list[str]:
    """String keys of a module-level `variable = {...}` (plain or annotated assignment)."""
    for node in tree.body:
        single = isinstance(node, ast.Assign) and len(node.targets) == 1
        target = node.targets[0] if single else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == variable and isinstance(value, ast.Dict):
            return [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


def add_parser_choices(flags: list[dict], modules: dict[str, ast.Module]) -> None:
    """Built-in reasoning / tool-call parser names, as open choices (plugins may register more)."""
    by_name = {f["name"]: f for f in flags}
    for flag_name, files, variable in PARSER_REGISTRIES:
        names = next((_dict_keys(modules[f], variable) for f in files if f in modules), [])
        flag = by_name.get(flag_name)
        if flag is not None and names:
            flag["type"] = "choice"
            flag["choices"] = names
            flag["choices_strict"] = False
            origin = next(f for f in files if f in modules)
            flag["note"] = "; ".join(filter(None, [flag.get("note"), f"built-in names: {origin} {variable}"]))


def env_vars(modules: dict[str, ast.Module]) -> list[dict]:
    """The VLLM_* variables vllm/envs.py reads (`environment_variables` keys)."""
    tree = modules.get(ENVS_FILE)
    names = _dict_keys(tree, "environment_variables") if tree else []
    return [{"name": n, "source": ENVS_FILE} for n in sorted(set(names))]


# ----------------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------------

def build(args: argparse.Namespace) -> dict:
    wheel = Path(args.wheel) if args.wheel else fetch_wheel(args.version, Path(args.cache))
    modules = read_sources(wheel)
    flags, positionals = extract(modules)
    add_parser_choices(flags, modules)
    attached = _attached(modules)
    for flag in flags:
        if attached and flag["name"] == "--optimization-level":
            flag["aliases"] = [*flag.get("aliases", []), "-O"]
    digest = sha256(wheel)
    table = {
        "id": args.table,
        "engine": "vllm",
        "fork": args.fork,
        "image": args.image,
        "version": args.image_version or args.version,
        "provenance": {
            "method": "generated",
            "generator": "scripts/flags/vllm_flags.py",
            "command": _command(args),
            "input": f"{wheel.name} (sha256 {digest}) from PyPI: {', '.join(ENTRY_FILES)}, vllm/config/*.py, "
                     f"{ENVS_FILE}, parser registries",
            "date": today(args.date),
            **({"approximation": args.approximation} if args.approximation else {}),
            "sources": [{"ref": f"https://pypi.org/project/vllm/{args.version}/",
                         "note": f"release wheel {wheel.name}"}],
        },
        "syntax": {"equals_values": True, "underscores": True, "dotted_json": True,
                   "positionals": len(positionals), **({"positional_name": positionals[0]} if positionals else {}),
                   **attached},
        "flags": flags,
        "env": env_vars(modules),
        "env_prefixes": ["VLLM_"],
    }
    for overlay in args.overlay:
        table = apply_overlay(table, Path(overlay))
    return table


def _command(args: argparse.Namespace) -> str:
    parts = ["python scripts/flags/vllm_flags.py", f"--version {args.version}", f"--table {args.table}",
             f"--image {args.image}"]
    if args.fork != "upstream":
        parts.append(f"--fork {args.fork}")
    if args.image_version:
        parts.append(f"--image-version '{args.image_version}'")
    if args.approximation:
        parts.append("--approximation '...'")
    parts += [f"--overlay {overlay}" for overlay in args.overlay]
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", required=True, help="vLLM release to read (pip version)")
    parser.add_argument("--table", required=True, help="table id = file name under catalog/flags/")
    parser.add_argument("--image", required=True, help="the pinned image this table describes")
    parser.add_argument("--image-version", help="version string of the image when it is not the release")
    parser.add_argument("--fork", default="upstream")
    parser.add_argument("--approximation", help="why this release stands in for the image (provenance)")
    parser.add_argument("--overlay", action="append", default=[],
                        help="curated changes for the image (scripts/flags/overlays/*.yaml); repeat to apply in order")
    parser.add_argument("--wheel", help="use this wheel file instead of downloading")
    parser.add_argument("--cache", default=str(cache_dir() / "vllm-wheels"))
    parser.add_argument("--date", help="provenance date (default: today)")
    parser.add_argument("--out", default="catalog/flags", help="folder to write <table>.yaml into ('-' = stdout)")
    args = parser.parse_args(argv)
    table = build(args)
    write_table(table, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
