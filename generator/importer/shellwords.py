"""Kubernetes `$(VAR)` expansion and POSIX sh words: quoting, `$VAR`, `${VAR:-default}`, `"$@"`, and the
bounds every expansion is checked against (importer/shell.py reads whole launcher scripts with it).
"""

from __future__ import annotations

from generator.core import InputError

import re
from collections.abc import Callable
from dataclasses import dataclass, field


# Bounds of what a launcher can pass to exec, checked before and during every expansion (issue 40 cause 2: a chain
# `E{i}="$(E{i-1})$(E{i-1})"` doubles 40 times). Linux refuses a single argument or `NAME=value` env string longer
# than MAX_ARG_STRLEN = 32 pages (torvalds/linux include/uapi/linux/binfmts.h) and argv plus env past ARG_MAX (a
# quarter of the 8 MiB default stack: 2 MiB, fs/exec.c): a longer value could never reach the server.
MAX_ARG_BYTES = 32 * 4096
MAX_ARGV_BYTES = 2 * 2**20


def _kib(n: int) -> str:
    return f"{n // 1024} KiB"


_K8S_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SQ_RUN = re.compile(r"[^']+")
_DQ_RUN = re.compile(r'[^"\\]+')
_PLAIN_RUN = re.compile(r"[^\s;&|<>()`'\"\\$#]+")  # characters split_words copies as they are, taken in one step


def k8s_expand(text: str, env: dict[str, str]) -> tuple[str, list[str]]:
    """(expanded text, names referenced but undefined). ShellError, before the text is built, when the result would
    be longer than MAX_ARG_BYTES (exec could not pass it): each reference adds its value's length, counted as the
    references are met, so a chain of doubling variables stops at the cap instead of at the memory's end."""
    if len(text) > MAX_ARG_BYTES:
        raise ShellError(f"a value of {len(text)} bytes; exec passes at most {_kib(MAX_ARG_BYTES)} per argument "
                         "or env value (Linux MAX_ARG_STRLEN)")
    undefined: list[str] = []
    size = [len(text)]

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name in env:
            size[0] += len(env[name])
            if size[0] > MAX_ARG_BYTES:
                raise ShellError(f"$({name}) expands the value past {_kib(MAX_ARG_BYTES)}, the most exec passes "
                                 "in one argument or env value (Linux MAX_ARG_STRLEN)")
            return env[name]
        undefined.append(name)
        return match.group(0)

    return _K8S_REF.sub(sub, text), undefined


def check_size(text: str, cap: int, what: str) -> None:
    """ShellError before any work when `text` (a script, a line, an argument) is longer than `cap`."""
    if len(text) > cap:
        raise ShellError(f"{what} is {len(text)} bytes, more than {_kib(cap)}: exec or Kubernetes could not "
                         "pass it; refused unread")


class ShellError(InputError):
    """A construct this reader does not expand (the message names it); the importer reports it at the chart's line."""


@dataclass
class Words:
    words: list[str]
    unset: list[str] = field(default_factory=list)  # variables expanded while unset (to "")


def _param(text: str, i: int, env: dict[str, str], unset: list[str]) -> tuple[str, int]:
    """Expand the parameter at text[i] == '$'; returns (value, index after it)."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt == "{":
        end = _closing_brace(text, i + 2)
        if end < 0:
            raise ShellError("an unclosed `${`")
        inner = text[i + 2:end]
        match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*))?", inner, re.DOTALL)
        if not match:
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\[@\]", inner):
                raise ShellError(f"`${{{inner}}}`: an array is read only where it is set outside any block or in an "
                                 "if/case branch the chart decides, and used quoted (\"${NAME[@]}\"); this one is "
                                 "set where it may or may not run (a test of a file, a command or a value set at "
                                 "install), or never: write its flags in the app")
            raise ShellError(f"`${{{inner}}}` (only ${{VAR}}, ${{VAR:-default}} and ${{VAR-default}} are read)")
        name, op, default = match.group(1), match.group(2), match.group(3)
        value = env.get(name)
        if op == ":-" and not value:
            return _expand_default(default or "", env, unset), end + 1
        if op == "-" and value is None:
            return _expand_default(default or "", env, unset), end + 1
        if value is None:
            unset.append(name)
        return value or "", end + 1
    if nxt == "(" or nxt == "[":
        raise ShellError("command substitution or arithmetic `$(`")
    match = _NAME.match(text, i + 1)
    if match:
        name = match.group(0)
        if name not in env:
            unset.append(name)
        return env.get(name, ""), match.end()
    if nxt in "?#!$*-0123456789":
        raise ShellError(f"the special parameter `${nxt}`")
    return "$", i + 1


def _closing_brace(text: str, start: int) -> int:
    """Where the `}` that closes a `${` stands (the text after it starts at `start`), past the `${...}` nested in its
    default (`${A:-${B:-4}}`); -1 when none does."""
    depth = 0
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return -1


def _expand_default(text: str, env: dict[str, str], unset: list[str]) -> str:
    out = []
    size = 0
    i = 0
    while i < len(text):
        if text[i] == "$":
            value, i = _param(text, i, env, unset)
            out.append(value)
            size += len(value)
            if size > MAX_ARG_BYTES:
                raise ShellError(f"a `${{VAR:-default}}` expands past {_kib(MAX_ARG_BYTES)} (Linux MAX_ARG_STRLEN)")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def split_words(line: str, env: dict[str, str], positional: list[str] | None = None) -> Words:
    """POSIX-style words of one command line, with parameters expanded; `"$@"` becomes the positional args.

    An unquoted expansion is not field-split (launchers quote what they expand; an unquoted `$HF_AUTH`
    is the one idiom, and it only ever precedes `curl`).
    """
    check_size(line, MAX_ARGV_BYTES, "the command line")
    words: list[str] = []
    unset: list[str] = []
    current: list[str] = []
    started = False
    i = 0
    n = len(line)
    # bytes of the open word (its pieces counted once each: `mark` is how many were counted) and of all words: a
    # piece is a reference to a value, so `"$X$X..."` costs a pointer per piece until the cap refuses the join
    word_size = total = mark = 0
    while i < n:
        word_size, mark = _grown(current, mark, word_size, total)
        c = line[i]
        if c in " \t\n":
            if started:
                words.append("".join(current))
                total += word_size
                current, started, word_size, mark = [], False, 0, 0
            i += 1
            continue
        if c == "#" and not started:
            break
        if c in ";&|<>()`":
            raise ShellError(_unsupported_character(c))
        started = True
        if c == "'":
            i = _single_quoted(line, i, current)
        elif c == '"':
            i, started = _double_quoted(line, i, env, unset, positional, current, words)
        elif c == "\\":
            if i + 1 < n:
                current.append(line[i + 1])
            i += 2
        elif c == "$":
            i, started = _dollar(line, i, env, unset, positional, current, words)
        else:  # a run of characters copied as they are, in one step
            run = _PLAIN_RUN.match(line, i)
            piece = run.group(0) if run is not None else c
            current.append(piece)
            i += len(piece)
    _grown(current, mark, word_size, sum(map(len, words)))
    if started:
        words.append("".join(current))
    return Words(words, unset)


def _grown(current: list[str], mark: int, word_size: int, total: int) -> tuple[int, int]:
    """(bytes of the open word, pieces counted) once the pieces after `mark` are counted; ShellError when the word
    passes MAX_ARG_BYTES or the words MAX_ARGV_BYTES (`total`: the bytes of the words before it)."""
    word_size += sum(map(len, current[mark:]))
    if word_size > MAX_ARG_BYTES or total + word_size > MAX_ARGV_BYTES:
        raise ShellError(f"a word expands past {_kib(MAX_ARG_BYTES)} or the line past {_kib(MAX_ARGV_BYTES)}: exec "
                         "could not pass it (Linux MAX_ARG_STRLEN, ARG_MAX)")
    return word_size, len(current)


def _unsupported_character(c: str) -> str:
    """Why a character outside quotes stops the reading of a launcher line."""
    if c == "`":
        return "command substitution with backquotes"
    return f"`{c}` (one simple command per line is read)"


def _single_quoted(line: str, i: int, current: list[str]) -> int:
    """The single-quoted text at line[i] (the quote) joins `current`; returns the index after the closing quote."""
    end = line.find("'", i + 1)
    if end < 0:
        raise ShellError("an unclosed single quote")
    current.append(line[i + 1:end])
    return end + 1


def _double_quoted(line: str, i: int, env: dict[str, str], unset: list[str], positional: list[str] | None,
                   current: list[str], words: list[str]) -> tuple[int, bool]:
    """The double-quoted text at line[i] (the quote), expanded, joins `current`; `"$@"` adds the positional
    args to `words` instead. Returns the index after it and whether a word is still open."""
    n = len(line)
    i += 1
    while i < n and line[i] != '"':
        if _quoted_escape(line, i):
            current.append(line[i + 1])
            i += 2
        elif line.startswith('$@', i) and positional is not None:
            return _quoted_positional(line, i, positional, current, words), False
        elif line[i] == "$":
            value, i = _param(line, i, env, unset)
            current.append(value)
        elif line[i] == "`":
            raise ShellError("command substitution with backquotes")
        else:
            current.append(line[i])
            i += 1
    if i >= n:
        raise ShellError("an unclosed double quote")
    return i + 1, True


def _quoted_escape(line: str, i: int) -> bool:
    """A backslash inside double quotes that escapes the next character (`$`, backquote, `"`, `\\`, newline)."""
    return line[i] == "\\" and i + 1 < len(line) and line[i + 1] in '$`"\\\n'


def _quoted_positional(line: str, i: int, positional: list[str], current: list[str], words: list[str]) -> int:
    """`"$@"` at line[i] (the `$`): the positional args become words; returns the index after the closing quote."""
    n = len(line)
    if "".join(current) or (i + 2 < n and line[i + 2] != '"'):
        raise ShellError('`$@` inside a longer word')
    words.extend(positional)
    i += 2
    if i < n and line[i] == '"':
        i += 1
    return i


def _dollar(line: str, i: int, env: dict[str, str], unset: list[str], positional: list[str] | None,
            current: list[str], words: list[str]) -> tuple[int, bool]:
    """An unquoted `$`: `$@` adds the positional args as words, else the parameter's value joins `current`.
    Returns the index after it and whether a word is still open."""
    if line.startswith("$@", i) and positional is not None:
        words.extend(positional)
        return i + 2, False
    value, i = _param(line, i, env, unset)
    current.append(value)
    return i, True


def split_outside_quotes(text: str, ops: tuple[str, ...], keep: tuple[str, ...] = (),
                         refuse: Callable[[str, int], bool] | None = None,
                         found: list[str] | None = None) -> list[str] | None:
    """`text` split on the operators `ops` (the first that matches, in order) where they stand outside quotes and
    backslash escapes, each part stripped; `keep` are operators copied as they are (`&>` is not `&`). None when
    `refuse(text, i)` is true at an unquoted position: a construct the caller does not read. `found`, when given,
    receives the operator after each part but the last."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    i = 0
    # runs of characters that can start nothing (no quote, escape or operator) are copied in one step: linear in
    # the text with a small constant (a 1 MiB line in well under a second); `refuse` sees every position
    stops = "".join(sorted({"'", '"', "\\", *(o[0] for o in (*ops, *keep))}))
    plain = None if refuse is not None else re.compile(f"[^{re.escape(stops)}]+")
    while i < len(text):
        c = text[i]
        if quote:
            inside = (_SQ_RUN if quote == "'" else _DQ_RUN).match(text, i)
            if inside is not None:
                current.append(inside.group(0))
                i = inside.end()
                continue
            current.append(c)
            if c == "\\" and quote == '"' and i + 1 < len(text):
                current.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
            current.append(c)
            i += 1
            continue
        run = plain.match(text, i) if plain is not None else None
        if run is not None:
            current.append(run.group(0))
            i = run.end()
            continue
        if c == "\\" and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        kept = next((k for k in keep if text.startswith(k, i)), None)
        if kept is not None:
            current.append(kept)
            i += len(kept)
            continue
        op = next((o for o in ops if text.startswith(o, i)), None)
        if op is not None:
            (found if found is not None else []).append(op)
            parts.append("".join(current).strip())
            current = []
            i += len(op)
            continue
        if refuse is not None and refuse(text, i):
            return None
        current.append(c)
        i += 1
    parts.append("".join(current).strip())
    return parts


def simple_commands(text: str) -> list[str]:
    """The simple commands of one line: split on `&&`, `||`, `;`, `|` and `&` outside quotes."""
    parts = split_outside_quotes(text, ("&&", "||", ";", "|", "&"), keep=("&>", ">&"))
    return [c for c in parts or () if c]


__all__ = [
    "check_size",
    "k8s_expand",
    "MAX_ARG_BYTES",
    "MAX_ARGV_BYTES",
    "ShellError",
    "simple_commands",
    "split_outside_quotes",
    "split_words",
    "Words",
]
