"""An engine's argv read back into catalog fields: what `catalog import` shares between the families' readers.

Each family's module (`generator/engines/<family>.py`) holds its `Launcher` (engines/interface.py), whose `read`
turns the argv its builder writes back into `Mapped` fields, with these helpers. The engine modules write, in order:
the model, its served name, host and port, the context, the KV cache type, the speculative decoding in the stack's
spelling, the vision projector, the stack's shared args and the app's `extra_args`. Reading takes the first
occurrence of each flag the catalog models (the one the engine module wrote, when the chart is ours), the stack's
shared args (as one run when they are contiguous, else group by group), and keeps every other token, in order, in
`extra_args`.

Spellings come from the stack's flag table when the catalog has one (aliases such as `-c` for `--ctx-size`, which
flags take a value); without one, from the family's `Syntax` (its few aliases, each listed in the catalog's flag
tables: catalog/flags/llamacpp-b8740.yaml, vllm-nightly.yaml).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from generator.core import Problem
from generator.schema import Stack


@dataclass(frozen=True)
class Origin:
    where: str
    line: int | None

    def __str__(self) -> str:
        return f"{self.where}:{self.line}" if self.line else self.where


@dataclass(frozen=True)
class Token:
    text: str
    origin: Origin
    vars: tuple[str, ...] = ()  # env variables expanded into it


class _Flag(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def takes_value(self) -> bool: ...


class _TableSyntax(Protocol):
    @property
    def equals_values(self) -> bool: ...

    @property
    def underscores(self) -> bool: ...


class Table(Protocol):
    """A flag table (generator/flags/tables.py `FlagTable`) as far as the reader asks it."""

    @property
    def syntax(self) -> _TableSyntax: ...

    def lookup(self, spelling: str) -> _Flag | None: ...


@dataclass(frozen=True)
class Syntax:
    """How the family's argv is spelt where the catalog has no flag table for it: aliases of the flags the reader
    takes (`-c` for `--ctx-size`), `--flag=value` read as two tokens (argparse), `--flag_name` as `--flag-name`."""

    aliases: Mapping[str, str] = field(default_factory=dict)
    equals: bool = False
    underscores: bool = False


class Spelling:
    """Flag spellings of one engine: canonical names, and whether a flag takes a value (from its flag table, else
    from the family's `Syntax`)."""

    def __init__(self, syntax: Syntax, table: Table | None):
        self.aliases = syntax.aliases
        self.table = table
        self.equals = syntax.equals if table is None else table.syntax.equals_values
        self.underscores = syntax.underscores if table is None else table.syntax.underscores

    def canonical(self, spelling: str) -> str:
        head = spelling
        if self.underscores and head.startswith("--"):
            head = "--" + head[2:].replace("_", "-")
        if self.table is not None:
            flag = self.table.lookup(head)
            if flag is not None and not (head.startswith("--no-") and not flag.name.startswith("--no-")):
                return flag.name
        return self.aliases.get(head, head)

    def takes_value(self, spelling: str, following: str | None) -> bool:
        if self.table is not None:
            flag = self.table.lookup(self.canonical(spelling))
            if flag is not None:
                return flag.takes_value
        return following is not None and not is_flag(following)


def is_flag(text: str) -> bool:
    return text.startswith("-") and len(text) > 1 and not text[1].isdigit() and text != "--"


@dataclass
class Reader:
    """A cursor over the argv: flags are taken (consumed) as the catalog maps them; the rest are kept."""

    tokens: list[Token]
    spell: Spelling
    taken: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        split: list[Token] = []
        for token in self.tokens:  # `--flag=value` (argparse engines) reads as two tokens
            if self.spell.equals and token.text.startswith("--") and "=" in token.text:
                head, value = token.text.split("=", 1)
                split += [Token(head, token.origin, token.vars), Token(value, token.origin, token.vars)]
            else:
                split.append(token)
        self.tokens = split
        self.taken = [False] * len(split)

    def _index(self, names: tuple[str, ...], start: int = 0) -> int | None:
        wanted = {self.spell.canonical(n) for n in names}
        for i in range(start, len(self.tokens)):
            text = self.tokens[i].text
            if not self.taken[i] and is_flag(text) and self.spell.canonical(text) in wanted:
                return i
        return None

    def value(self, *names: str) -> tuple[str, Origin] | None:
        """Take the first `--flag value` of these spellings; None when absent."""
        i = self._index(names)
        if i is None or i + 1 >= len(self.tokens) or self.taken[i + 1]:
            return None
        self.taken[i] = self.taken[i + 1] = True
        return self.tokens[i + 1].text, self.tokens[i].origin

    def peek(self, *names: str) -> str | None:
        i = self._index(names)
        return self.tokens[i + 1].text if i is not None and i + 1 < len(self.tokens) else None

    def put_back(self, *names: str) -> None:
        """Undo the last `value()` of these names (a value the catalog cannot hold stays an extra arg)."""
        wanted = {self.spell.canonical(n) for n in names}
        for i in range(len(self.tokens) - 1, -1, -1):
            if self.taken[i] and is_flag(self.tokens[i].text) and self.spell.canonical(self.tokens[i].text) in wanted:
                self.taken[i] = False
                if i + 1 < len(self.tokens):
                    self.taken[i + 1] = False
                return

    def positional(self) -> tuple[str, Origin] | None:
        """The first token when it is not a flag (vLLM's model, Lucebox's target)."""
        if self.tokens and not self.taken[0] and not is_flag(self.tokens[0].text):
            self.taken[0] = True
            return self.tokens[0].text, self.tokens[0].origin
        return None

    def groups(self, args: tuple[str, ...]) -> list[tuple[str, ...]]:
        """A stack's args as (flag, value?) groups."""
        out: list[tuple[str, ...]] = []
        i = 0
        while i < len(args):
            if is_flag(args[i]) and i + 1 < len(args) and not is_flag(args[i + 1]) \
                    and self.spell.takes_value(args[i], args[i + 1]):
                out.append((args[i], args[i + 1]))
                i += 2
            else:
                out.append((args[i],))
                i += 1
        return out

    def take_run(self, args: tuple[str, ...]) -> bool:
        """Take `args` when they appear as one contiguous run of free tokens (as the catalog renders them)."""
        n = len(args)
        if not n:
            return True
        for start in range(len(self.tokens) - n + 1):
            if all(not self.taken[start + k] and self.tokens[start + k].text == args[k] for k in range(n)):
                for k in range(n):
                    self.taken[start + k] = True
                return True
        return False

    def take_group(self, group: tuple[str, ...]) -> bool:
        """Take one (flag, value?) group anywhere, spelling aliases allowed."""
        start = 0
        while True:
            i = self._index((group[0],), start)
            if i is None:
                return False
            if len(group) == 1:
                nxt = self.tokens[i + 1].text if i + 1 < len(self.tokens) else None
                if nxt is None or is_flag(nxt) or not self.spell.takes_value(self.tokens[i].text, nxt):
                    self.taken[i] = True
                    return True
            elif i + 1 < len(self.tokens) and not self.taken[i + 1] and self.tokens[i + 1].text == group[1]:
                self.taken[i] = self.taken[i + 1] = True
                return True
            start = i + 1

    def rest(self) -> list[Token]:
        return [t for t, taken in zip(self.tokens, self.taken, strict=True) if not taken]


@dataclass
class Mapped:
    """What the argv says, in catalog terms."""

    fields: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, Origin] = field(default_factory=dict)
    model_repo: tuple[str, Origin] | None = None  # vLLM: a Hugging Face repo id
    model_revision: str | None = None
    model_path: tuple[str, Origin] | None = None  # llama.cpp / Lucebox: a file path
    hf_repo: tuple[str, Origin] | None = None  # llama.cpp -hf repo[:quant]
    hf_file: str | None = None
    drafter_repo: str | None = None  # vLLM speculative-config model
    drafter_path: tuple[str, Origin] | None = None
    mmproj_path: tuple[str, Origin] | None = None
    host: str | None = None
    port: int | None = None
    stack_args_missing: list[str] = field(default_factory=list)
    extra: list[Token] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)


def positive_int(text: str) -> int | None:
    return int(text) if text.isdigit() and int(text) > 0 else None


def common(reader: Reader, out: Mapped) -> None:
    host = reader.value("--host")
    if host is not None:
        if host[0] == "0.0.0.0":
            out.host = host[0]
        else:
            reader.put_back("--host")
            out.notes.append(Problem(str(host[1]), None, None,
                                     f"--host {host[0]}: the catalog always listens on 0.0.0.0; kept in extra_args"))
    port = reader.peek("--port")
    if port is not None and port.isdigit():
        out.port = int(port)


def take_port(reader: Reader, out: Mapped, stack: Stack | None) -> None:
    if out.port is not None and stack is not None and out.port == stack.port:
        reader.value("--port")


def stack_args(reader: Reader, out: Mapped, stack: Stack | None) -> None:
    if stack is None or not stack.args:
        return
    if reader.take_run(stack.args):
        return
    for group in reader.groups(stack.args):
        if not reader.take_group(group):
            out.stack_args_missing.append(" ".join(group))


def _find_spelling(reader: Reader, spelling: tuple[str, ...]
                   ) -> tuple[list[tuple[int, int | None]], dict[str, tuple[str, Origin]]] | None:
    """Where the argv spells a stack's speculative method: (flag index, value index) of each group, and the
    values of its `{tokens}` / `{drafter}` placeholders; None when a group is missing."""
    groups = reader.groups(tuple(a if a not in ("{tokens}", "{drafter}") else "PLACEHOLDER" for a in spelling))
    # the groups of the real spelling, with placeholders in value position
    real: list[tuple[str, ...]] = []
    k = 0
    for group in groups:
        real.append(tuple(spelling[k:k + len(group)]))
        k += len(group)
    found: list[tuple[int, int | None]] = []
    captured: dict[str, tuple[str, Origin]] = {}
    for group in real:
        i = _group_index(reader, group, captured)
        if i is None:
            return None
        found.append((i, i + 1 if len(group) > 1 else None))
    return found, captured


def _group_index(reader: Reader, group: tuple[str, ...], captured: dict[str, tuple[str, Origin]]) -> int | None:
    """The index of the first `flag` of `group` whose value matches (a placeholder takes any value, captured)."""
    i = reader._index((group[0],))
    while i is not None:
        if len(group) == 1:
            break
        value = reader.tokens[i + 1].text if i + 1 < len(reader.tokens) and not reader.taken[i + 1] else None
        if value is not None and (group[1] in ("{tokens}", "{drafter}") or value == group[1]):
            if group[1] in ("{tokens}", "{drafter}"):
                captured[group[1]] = (value, reader.tokens[i].origin)
            break
        i = reader._index((group[0],), i + 1)
    return i


def speculative_spelled(reader: Reader, out: Mapped, stack: Stack | None) -> None:
    if stack is None:
        return
    for method, spelling in stack.speculative_args.items():
        if not spelling:
            continue
        match = _find_spelling(reader, spelling)
        if match is None:
            continue
        found, captured = match
        tokens = None
        if "{tokens}" in captured:
            tokens = positive_int(captured["{tokens}"][0])
            if tokens is None:
                continue
        for i, j in found:
            reader.taken[i] = True
            if j is not None:
                reader.taken[j] = True
        spec: dict[str, Any] = {"method": method}
        if tokens is not None:
            spec["tokens"] = tokens
        if "{drafter}" in captured:
            out.drafter_path = captured["{drafter}"]
        out.fields["speculative"] = spec
        out.origins["speculative"] = reader.tokens[found[0][0]].origin
        return


def take_field(reader: Reader, out: Mapped, flag: str, field: str) -> None:
    """`flag`'s value, when the argv has it, becomes the app's `field` (with where it was read)."""
    taken = reader.value(flag)
    if taken is not None:
        out.fields[field] = taken[0]
        out.origins[field] = taken[1]


def take_context(reader: Reader, out: Mapped, flag: str, why_not: str) -> None:
    """The context length from `flag`; a value that is not a plain token count stays in extra_args, with a note."""
    ctx = reader.value(flag)
    if ctx is None:
        return
    if positive_int(ctx[0]) is not None:
        out.fields["context_length"] = int(ctx[0])
        out.origins["context_length"] = ctx[1]
        return
    reader.put_back(flag)
    out.notes.append(Problem(str(ctx[1]), None, None, f"{flag} {ctx[0]}: {why_not}; kept in extra_args"))


def server_fields(reader: Reader, stack: Stack | None, model: tuple[str, Origin] | None, context_flag: str,
                   fraction_flag: str, *, whole: bool) -> Mapped:
    """What vLLM and SGLang launchers share: the model and its revision, served name, port, context, KV type and
    the fraction of the device the engine takes (`whole`: 1.0 allowed, vLLM's utilization; SGLang's
    mem_fraction_static stays below 1). A fraction out of range is left in extra_args."""
    out = Mapped()
    if model is not None:
        out.model_repo = model
    revision = reader.value("--revision")
    if revision is not None:
        out.model_revision = revision[0]
    take_field(reader, out, "--served-model-name", "served_name")
    common(reader, out)
    take_port(reader, out, stack)
    take_context(reader, out, context_flag, "not a plain token count")
    take_field(reader, out, "--kv-cache-dtype", "kv_cache_type")
    fraction = reader.value(fraction_flag)
    if fraction is not None:
        try:
            value = float(fraction[0])
        except ValueError:
            value = -1.0
        if 0 < value < 1 or whole and value == 1:
            out.fields["gpu_memory_utilization"] = value
            out.origins["gpu_memory_utilization"] = fraction[1]
        else:
            reader.put_back(fraction_flag)
    return out


@dataclass(frozen=True)
class Launcher:
    """How `catalog import` (generator/importer/) recognises a container that runs this engine and reads its argv.

    read: the argv after the launcher back into catalog fields (helpers in engines/readback.py);
    context_flag: the flag the context length is passed with (import says it is missing);
    program: the program's base name that runs the server (`.match`ed: llama.cpp's builds name it `llama-server*`);
    subcommand: the word after `program` that serves (`vllm serve`; None: the program itself serves);
    shapes: whole launcher prefixes that run it whatever the program is called (`python3 -m sglang.launch_server`),
    tried before any `program`;
    recognise: why a container is this engine's server where no catalog stack has its image and launcher (import
    reports it as unsupported; None: only `program` and `shapes` say so);
    syntax: the argv's spelling where the catalog has no flag table; chat_template_flag: the flag that points the
    server at a chat template file (None: import does not read one back);
    own_speculative: the argv spells speculative decoding itself (vLLM's `--speculative-config`), not in the stack's
    `speculative_args`; kv_env: env variables that hold the KV cache types (Lucebox's dflash_server);
    upstream_images: image prefixes of the engine's own publisher (a drafted stack's fork is `upstream`);
    entrypoint: (image pattern, program words) of images whose entrypoint runs the server (`vllm serve`), for a
    chart that sets no command.
    """

    read: Callable[[list[Token], Spelling, Stack | None], Mapped]
    context_flag: str
    program: re.Pattern[str] | None = None
    subcommand: str | None = None
    shapes: tuple[tuple[str, ...], ...] = ()
    recognise: Callable[[str, str, str], str | None] | None = None
    syntax: Syntax = Syntax()
    chat_template_flag: str | None = None
    own_speculative: bool = False
    kv_env: tuple[str, ...] = ()
    upstream_images: tuple[str, ...] = ()
    entrypoint: tuple[re.Pattern[str], str] | None = None

    def shape(self, argv: list[str]) -> tuple[str, ...] | None:
        """The launcher shape `argv` starts with, or None."""
        words = tuple(argv)
        return next((s for s in self.shapes if words[: len(s)] == s), None)

    def program_words(self, argv: list[str]) -> int | None:
        """How many words of `argv` (which starts with this engine's program) launch it: the program, and its
        subcommand where it has one; None when the subcommand is not there (`vllm` with no `serve`)."""
        if self.subcommand is None:
            return 1
        return 2 if len(argv) > 1 and argv[1] == self.subcommand else None

    def runs(self, program: str) -> bool:
        """Whether `program` (a path or name) is this engine's server program."""
        return self.program is not None and self.program.match(posixpath.basename(program.strip("\"'"))) is not None


__all__ = ["Launcher", "Mapped", "Origin", "Reader", "Spelling", "Syntax", "Table", "Token", "common", "is_flag",
           "positive_int", "server_fields", "speculative_spelled", "stack_args", "take_context", "take_field",
           "take_port"]
