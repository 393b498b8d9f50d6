"""Read catalog YAML files, keep line numbers, and turn validation errors into `file:line: field: message`."""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from ruamel.yaml import YAML
from ruamel.yaml import nodes as ruamel_nodes
from ruamel.yaml.error import MarkedYAMLError as RuamelMarkedError
from ruamel.yaml.error import YAMLError as RuamelYAMLError
from ruamel.yaml.resolver import implicit_resolvers as RUAMEL_RESOLVERS
from yaml.error import MarkedYAMLError, YAMLError
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError as YAMLReaderError

from generator.core import InputError, Problem, translate_os_error
from generator.core import read_sized
from generator.yamlio.resolve import CachedScalarResolve

T = TypeVar("T", bound=BaseModel)
Path_ = tuple[str | int, ...]


@dataclass
class Document:
    """One parsed YAML file: plain data plus the line of every key and item."""

    path: Path
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, loc: Path_) -> int:
        """The line of `loc`, or of its nearest ancestor that has one."""
        for cut in range(len(loc), -1, -1):
            if loc[:cut] in self.lines:
                return self.lines[loc[:cut]]
        return 1


class _Loader(CachedScalarResolve, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml composes the nodes (parser and composer in C, ~4x faster than ruamel's Python composer) and
    resolves plain scalars with YAML 1.2's core schema, taken from ruamel.yaml's own table: `yes`, `on`,
    `NO` are strings, `0o17` is an int, as ruamel.yaml reads them (a `%YAML 1.1` directive changes nothing)."""


_Loader.yaml_implicit_resolvers = {}
for _versions, _tag, _regexp, _first in RUAMEL_RESOLVERS:
    if (1, 2) in _versions and _tag != "tag:yaml.org,2002:value":  # `=` (a YAML 1.1 type ruamel cannot build)
        _Loader.add_implicit_resolver(_tag, _regexp, _first)


@lru_cache(maxsize=1)
def _constructor() -> Any:
    # ruamel.yaml's YAML 1.2 constructor builds the few non-string scalars (ints, floats, bools, dates,
    # explicit tags), so values are exactly what ruamel.yaml would load.
    return YAML(typ="safe").constructor


_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BOOLS = {"true": True, "false": False}


class _Refused(MarkedYAMLError):
    """Valid YAML the catalog refuses (duplicate or merge keys, a tagged value that does not fit its tag)."""


def _scalar(node: ScalarNode) -> Any:
    if node.tag == _STR:  # most scalars: the resolver already said "string", nothing to construct
        return node.value
    if node.tag == _INT and node.value.isdigit() and node.value.isascii():  # the common int: plain digits
        return int(node.value)
    if node.tag == _BOOL and node.value in _BOOLS:  # the common bools, as ruamel's bool_values map them
        return _BOOLS[node.value]
    if node.tag == _FLOAT and _plain_decimal(node.value):  # `0.9`, `-1.5`: ruamel returns float() of the text too
        return float(node.value)
    if node.tag == _TIMESTAMP and _plain_date(node.value):  # `2026-12-01`: ruamel builds date(year, month, day) too
        try:
            return dt.date(int(node.value[:4]), int(node.value[5:7]), int(node.value[8:]))
        except ValueError as exc:  # `2026-02-30`: the same refusal as the constructor's below
            raise _Refused(None, None, f"{node.value!r} is not a valid !!timestamp ({exc})", node.start_mark) from exc
    if node.tag == _MERGE:
        raise _Refused(None, None, "merge key `<<` is not supported (write its keys out)", node.start_mark)
    twin = ruamel_nodes.ScalarNode(node.tag, node.value, start_mark=node.start_mark, end_mark=node.end_mark,
                                   style=node.style)
    try:
        value = _constructor().construct_object(twin, deep=True)
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. `!!int x`: an explicit tag the text does not fit
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        raise _Refused(None, None, f"{node.value!r} is not a valid {tag} ({exc})", node.start_mark) from exc
    if isinstance(value, dt.datetime):
        return value.date() if (value.hour, value.minute, value.second) == (0, 0, 0) else value
    return value


def _plain_date(text: str) -> bool:
    """`YYYY-MM-DD`, every digit written (the catalog's dates); other timestamps go through ruamel's constructor."""
    return len(text) == 10 and text[4] == text[7] == "-" and (digits := text[:4] + text[5:7] + text[8:]).isdigit() \
        and digits.isascii()


def _plain_decimal(text: str) -> bool:
    """`[-]digits.digits` (either digits may be empty, not both): no sign but `-`, no `_`, exponent or `.inf`."""
    whole, dot, fraction = text.removeprefix("-").partition(".")
    digits = whole + fraction
    return bool(dot) and bool(digits) and digits.isdigit() and digits.isascii()


def _plain(node: Node, loc: Path_, lines: dict[Path_, int]) -> Any:
    """Plain Python values from composed nodes (mappings -> dict, sequences -> tuple), recording 1-based lines."""
    if len(loc) >= MAX_DEPTH and isinstance(node, (MappingNode, SequenceNode)):
        raise _Refused(None, None, f"nested more than {MAX_DEPTH} levels deep; a catalog file never needs that",
                       node.start_mark)
    if isinstance(node, MappingNode):
        out: dict[Any, Any] = {}
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node) if isinstance(key_node, ScalarNode) else str(key_node.value)
            key = key if isinstance(key, (int, bool)) else str(key)
            if key in out:  # YAML 1.2 §3.2.1.1: keys are unique; never "the last one wins"
                raise _Refused(None, None, f"duplicate key {key!r} (line {first[key]} and line "
                                           f"{key_node.start_mark.line + 1}): keep one", key_node.start_mark)
            first[key] = key_node.start_mark.line + 1
            child = (*loc, str(key))
            lines[child] = key_node.start_mark.line + 1
            out[key] = _plain(value_node, child, lines)
        return out
    if isinstance(node, SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            child = (*loc, index)
            lines[child] = item.start_mark.line + 1
            items.append(_plain(item, child, lines))
        return tuple(items)  # the models are immutable: sequences are tuples
    return _scalar(cast(ScalarNode, node))  # the composer builds only mapping, sequence and scalar nodes


MAX_FILE_BYTES = 16 * 2**20  # any YAML file the tool reads (ledgers and releases.yaml grow with history)
MAX_DEPTH = 64  # nesting levels; a catalog file nests about 6 deep, libyaml itself stops at 1000


def read_document(path: Path, display: str | None = None, *, max_bytes: int = MAX_FILE_BYTES) -> Document:
    """Parse one YAML file; every refusal is an InputError `file:line: ...`.

    Only a regular file is read (a FIFO or a device would block or never end), at most `max_bytes` of it.
    """
    name = display or str(path)
    return parse_document(read_bytes(path, name, max_bytes=max_bytes), name, path)


def read_bytes(path: Path, name: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, at most `max_bytes` (InputError otherwise); never blocks on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise translate_os_error(exc, name, "read") from exc
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError([Problem(name, None, None, "not a regular file; a catalog file is plain YAML text")])
        data = read_sized(fh, info.st_size, max_bytes)
    if len(data) > max_bytes:
        raise InputError([Problem(name, 1, None, f"the file is larger than {_size(max_bytes)}, the cap for this "
                                                 "file; a catalog file this large is a mistake (or an attack): "
                                                 "split or shorten it")])
    return data


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"


def parse_document(raw: bytes | str, display: str, path: Path | None = None) -> Document:
    """Parse YAML text (or UTF-8 bytes) held in memory, as `read_document` parses a file: nothing is
    written anywhere, so an edit can be checked before it is saved."""
    name = display
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise InputError([Problem(name, line, None, f"not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                        "save the file as UTF-8")]) from exc
    else:
        text = raw
    bad = None if isinstance(raw, bytes) and _clean_bytes(raw) else _control().search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        raise InputError([Problem(name, line, None, f"control character {ord(bad.group()):#04x} at column {column} "
                                                    "(a NUL byte or another binary byte); catalog files are text: "
                                                    "remove it")])
    try:
        data, lines = _parsed(text)
    except (MarkedYAMLError, RuamelMarkedError) as exc:
        mark = exc.problem_mark or exc.context_mark
        what = (exc.problem or exc.context or "invalid YAML").strip()
        raise InputError([Problem(name, mark.line + 1 if mark else None, None,
                                  f"YAML syntax error: {what}; fix the YAML syntax")]) from exc
    except YAMLReaderError as exc:  # a character YAML does not allow (the C reader names its position)
        raise InputError([Problem(name, text.count("\n", 0, max(exc.position, 0)) + 1, None,
                                  f"YAML error: {exc.reason}; remove the character")]) from exc
    except (YAMLError, RuamelYAMLError) as exc:  # unmarked: e.g. a control character (ReaderError)
        position = getattr(exc, "position", None)  # ReaderError: the character's index in the text
        at = text[:position].count("\n") + 1 if isinstance(position, int) else None
        raise InputError([Problem(name, at, None, f"YAML error: {_first_line(exc)}; fix the YAML")]) from exc
    except RecursionError as exc:  # `_plain` walks the nodes recursively: an alias inside itself, or deep nesting
        raise InputError([Problem(name, None, None, "YAML nested too deeply, or an alias (`*name`) that refers to "
                                  "the node containing it; write the values out")]) from exc
    return Document(path=path if path is not None else Path(display), data=data, lines=lines)


# What libyaml's reader refuses anyway (it allows TAB, LF, CR, NEL and printable text), found first so that
# the message names the line and column: C0 controls but TAB/LF/CR, DEL, C1 controls but NEL, surrogates
# and the two non-characters U+FFFE/U+FFFF (YAML 1.2 spec §5.1 "c-printable").
_CONTROL = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"


@lru_cache(maxsize=1)
def _control() -> re.Pattern[str]:
    """_CONTROL compiled on first use: only a text `_clean_bytes` cannot clear needs it."""
    return re.compile(_CONTROL)


# The bytes of UTF-8 text that never start a character _CONTROL refuses: every byte but the C0 controls (TAB, LF
# and CR stay) and DEL. C1 controls are encoded \xc2\x80-\xc2\x9f and U+FFFE/U+FFFF \xef\xbf\xbe/\xef\xbf\xbf;
# strict UTF-8 decoding refuses surrogates.
_TEXT_BYTES = bytes(b for b in range(256) if b in (9, 10, 13) or 0x20 <= b != 0x7f)


def _clean_bytes(raw: bytes) -> bool:
    """True when UTF-8 `raw` holds nothing _CONTROL would find (a C pass over the bytes instead of a regex scan
    of the text); False means "maybe": the regex then finds the character and its position."""
    return not raw.translate(None, _TEXT_BYTES) and b"\xc2" not in raw and b"\xef\xbf" not in raw


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


_CACHE_SIZE = 512
_cache: dict[str, tuple[Any, dict[Path_, int]] | None] = {}  # text -> parsed, or None: seen once


def _parsed(text: str) -> tuple[Any, dict[Path_, int]]:
    """Plain data and line numbers of a YAML text, the caller's own. A text seen before (catalog copies, repeated
    loads in one process) is parsed once more the second time, then kept and copied: a text read only once (every
    file of one command) is neither copied nor kept."""
    if text in _cache:
        kept = _cache[text]
        if kept is None:
            kept = _cache[text] = _parse(text)
        return _copied(kept[0]), dict(kept[1])
    if len(_cache) >= _CACHE_SIZE:
        _cache.clear()
    _cache[text] = None
    return _parse(text)


def _parse(text: str) -> tuple[Any, dict[Path_, int]]:
    lines: dict[Path_, int] = {(): 1}
    try:
        node = yaml.compose(text, Loader=_Loader)
    except (YAMLError, RecursionError):
        if "*" in text:  # an alias refused comes first, as if the text had been scanned for aliases before composing
            _refuse_aliases(text)
        raise
    # An alias is refused (_refuse_aliases). It needs `*`, and an anchor `&` to refer to: without one the composer
    # has already refused it ("found undefined alias"). With both, an alias is a node composed twice into the tree.
    if node is not None and "*" in text and "&" in text and _shares_nodes(node):
        _refuse_aliases(text)
        raise _Refused(None, None, "an alias (`*name`) is not supported in catalog files (write the value out)",
                       node.start_mark)
    return (None if node is None else _plain(node, (), lines)), lines


def _shares_nodes(root: Node) -> bool:
    """Whether a node occurs twice in the composed tree (what the composer makes of an alias), or inside itself."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                stack += (key, value)
        elif isinstance(node, SequenceNode):
            stack += node.value
    return False


def _tree_problem(root: Node) -> tuple[str, Any] | None:
    """(what, mark) when the composed graph is not a tree of at most MAX_DEPTH levels: a node reached twice (an alias:
    the composer shares the anchor's node, so constructing or walking it copies the anchor's whole value each time)
    or nested deeper. One pass, each node visited once: linear in the text however the aliases nest."""
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            return (f"an alias (`*name`) of the value at line {node.start_mark.line + 1} is not supported "
                    "(each alias copies its anchor: a few lines of nested aliases expand to gigabytes); write the "
                    "value out", node.start_mark)
        seen.add(id(node))
        if isinstance(node, (MappingNode, SequenceNode)):
            if depth >= MAX_DEPTH:
                return f"nested more than {MAX_DEPTH} levels deep", node.start_mark
            children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else node.value
            stack += ((child, depth + 1) for child in children)
    return None


class UntrustedLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (YAML 1.1 scalars, as Go's YAML reads charts; libyaml when built with it) for YAML
    from outside the catalog that is read as a whole: Helm's rendered output (lint/helm.py, importer/helmview.py),
    a chart's root files. Every document is checked before it is constructed: an alias or nesting past MAX_DEPTH
    is a `yaml.MarkedYAMLError` at its line, so neither the constructor nor any later walk of the data
    meets a shared node (issue 40 cause 1: 12 levels of `&aN [*aN-1 x9]` in one ConfigMap took 1.5 GB)."""

    def construct_document(self, node: Node) -> Any:
        found = _tree_problem(node)
        if found is not None:
            raise _Refused(None, None, found[0], found[1])
        return super().construct_document(node)


def load_untrusted(text: str, display: str) -> Any:
    """YAML from outside the catalog (a chart's Chart.yaml, values.yaml, OlaresManifest.yaml in `catalog import`)
    as plain data (mappings as dicts, sequences as lists), with the catalog's own refusals: a duplicate key (both
    lines named: the last one would win silently, where Go's YAML errors), an alias (billion laughs), nesting past
    MAX_DEPTH. YAML 1.1 scalars (`yes` is true), as Go's YAML reads charts. InputError `file:line:`."""
    if "*" in text:
        refuse_aliases(text, display)
    try:
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        return None if node is None else _plain11(node, 0)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = (exc.problem or exc.context or "invalid YAML").strip()
        raise InputError([Problem(display, mark.line + 1 if mark else None, None, f"not YAML: {what}")]) from exc
    except YAMLError as exc:
        raise InputError([Problem(display, None, None, f"not YAML: {_first_line(exc)}")]) from exc
    except RecursionError as exc:
        raise InputError([Problem(display, None, None, "YAML nested too deeply")]) from exc


_SAFE11 = yaml.SafeLoader("")  # PyYAML's YAML 1.1 scalar constructor, used node by node


def _plain11(node: Node, depth: int) -> Any:
    if depth >= MAX_DEPTH and isinstance(node, (MappingNode, SequenceNode)):
        raise _Refused(None, None, f"nested more than {MAX_DEPTH} levels deep", node.start_mark)
    if isinstance(node, MappingNode):
        out: dict[Any, Any] = {}
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                raise _Refused(None, None, "merge key `<<` is not supported (write its keys out)", key_node.start_mark)
            key = _plain11(key_node, depth + 1)
            key = key if isinstance(key, (str, int, float, bool)) or key is None else str(key)
            if key in out:
                raise _Refused(None, None, f"duplicate key {key!r} (line {first[key]} and line "
                                           f"{key_node.start_mark.line + 1}): keep one", key_node.start_mark)
            first[key] = key_node.start_mark.line + 1
            out[key] = _plain11(value_node, depth + 1)
        return out
    if isinstance(node, SequenceNode):
        return [_plain11(item, depth + 1) for item in node.value]
    return _SAFE11.construct_object(node, deep=True)


def refuse_aliases(text: str, display: str) -> None:
    """InputError `file:line:` when the YAML text holds an alias (for readers that parse it otherwise)."""
    if "*" not in text:
        return
    try:
        _refuse_aliases(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise InputError([Problem(display, mark.line + 1 if mark else None, None,
                                  f"{(exc.problem or 'YAML error').strip()}")]) from exc


def _refuse_aliases(text: str) -> None:
    """Aliases are refused: each one copies its anchor's whole value, so a few lines of nested aliases
    ("billion laughs", https://en.wikipedia.org/wiki/Billion_laughs_attack) expand to gigabytes."""
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, AliasEvent):
            raise _Refused(None, None, f"alias *{event.anchor} is not supported in catalog files "
                                       "(write the value out)",
                           event.start_mark)  # type: ignore[arg-type]  # libyaml's C Mark; the stubs name only yaml.error.Mark


def _copied(value: Any) -> Any:
    """A fresh copy of cached plain data (dicts, tuples, immutable scalars): callers own their Document."""
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_copied(v) for v in value)
    return value


def _field(loc: Path_) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def _message(err: ErrorDetails) -> str:
    kind = err["type"]
    msg = err["msg"]
    if kind == "extra_forbidden":
        return "unknown key; remove it or check its spelling"
    if kind == "missing":
        return "required field is missing; add it"
    if kind == "string_pattern_mismatch":
        return f"{_shown(err['input'])} does not match {err['ctx']['pattern']}"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if "input" in err and kind.endswith("_type"):
        msg = f"{msg} (got {type(err['input']).__name__} {_shown(err['input'], 60)})"
    return msg


def _shown(value: Any, limit: int = 200) -> str:
    """The repr of a rejected value, cut to `limit` characters (a value can be megabytes long)."""
    shown = repr(value) if not isinstance(value, str) or len(value) <= limit else repr(value[:limit])
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


class Located(Protocol):
    """What `validation_problems` reads of a document: its data and the line of a field path."""

    @property
    def data(self) -> Any: ...

    def line_of(self, loc: Path_) -> int: ...


def validation_problems(doc: Located, exc: ValidationError, display: str) -> list[Problem]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "tagged-union"))))
        # pydantic appends the literal/union branch names; keep the data path only
        loc = _data_path(doc.data, loc)
        if not loc:
            loc = _named_key(doc.data, loc, err["msg"])
        problems.append(Problem(display, doc.line_of(loc), _field(loc), _message(err)))
    return problems


def _named_key(data: Any, loc: Path_, message: str) -> Path_:
    """A model-level check reports no field: point at the first key of that model its message names."""
    node = data
    for part in loc:
        node = _child(node, part)
    if not isinstance(node, dict):
        return loc
    for word in message.replace("`", " ").replace("'", " ").replace(":", " ").split():
        if word in node:
            return (*loc, word)
    return loc


def _data_path(data: Any, loc: Path_) -> Path_:
    """Trim pydantic's location to the part that exists in the data (drops type-branch names)."""
    out: list[str | int] = []
    node = data
    for part in loc:
        if _holds(node, part):
            node = _child(node, part)
            out.append(part)
        elif isinstance(node, dict):
            out.append(part)  # a missing or extra key: still name it
            break
        else:
            break
    return tuple(out)


def _holds(node: Any, part: str | int) -> bool:
    """Whether the data `node` has a child at `part` (a key of a mapping, an index of a sequence)."""
    if isinstance(node, dict):
        return part in node
    return isinstance(node, (list, tuple)) and isinstance(part, int) and part < len(node)


def _child(node: Any, part: str | int) -> Any:
    """`node[part]` of plain data; None where the data has no such child."""
    return node[part] if _holds(node, part) else None


def load_model(cls: type[T], doc: Document, display: str) -> T:
    if doc.data is None:
        raise InputError([Problem(display, 1, None, f"the file is empty; expected a mapping of {cls.__name__} fields")])
    if not isinstance(doc.data, dict):
        got = "a list" if isinstance(doc.data, (list, tuple)) else f"a {type(doc.data).__name__}"
        raise InputError([Problem(display, 1, None, f"expected a mapping of {cls.__name__} fields, got {got}")])
    try:
        return cls.model_validate(doc.data)
    except ValidationError as exc:
        raise InputError(validation_problems(doc, exc, display)) from exc
