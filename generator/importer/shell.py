"""Kubernetes `$(VAR)` expansion and the little of POSIX sh that launcher scripts use.

Kubernetes expands `$(VAR)` in a container's command, args and env values from the container's
environment and turns `$$` into `$`; an undefined reference stays as written
(kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/).

Launchers such as `bash -c 'set -e; ...; exec /app/llama-server --ctx-size "${CTX_SIZE:-262144}" ...'`
(github.com/aamsellem/orales-one-market@6a34b5bb llamacppqwen36mtpone/templates/deployment.yaml) are read
here: backslash-newline joins lines, simple `NAME=value` assignments and `cd DIR` are followed, and the
`exec` line is split into words with `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}` and `"$@"`
expanded. A bash array set outside any `if`/`case`/loop/function (`EXTRA_ARGS=()`, `EXTRA_ARGS+=(--flag)`; the
second public store's launchers, github.com/coynntis/olares-one-market@cb991c8f sglangminicpm51bone) is followed
and `"${NAME[@]}"` stands for its words; an array set inside such a block is not followed. Anything else
(`$(cmd)`, backquotes, arithmetic, other `${...}` forms) is not guessed at: the word is reported as not expandable.
"""

from __future__ import annotations

from generator.core.errors import InputError

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

# Bounds of what a launcher can pass to exec, checked before and during every expansion (issue 40 cause 2: a chain
# `E{i}="$(E{i-1})$(E{i-1})"` doubles 40 times). Linux refuses a single argument or `NAME=value` env string longer
# than MAX_ARG_STRLEN = 32 pages (torvalds/linux include/uapi/linux/binfmts.h) and argv plus env past ARG_MAX (a
# quarter of the 8 MiB default stack: 2 MiB, fs/exec.c): a longer value could never reach the server.
MAX_ARG_BYTES = 32 * 4096
MAX_ARGV_BYTES = 2 * 2**20
# A script mounted from a ConfigMap: "the data stored in a ConfigMap cannot exceed 1 MiB"
# (kubernetes.io/docs/concepts/configuration/configmap/); `sh -c SCRIPT` passes it as one argument (MAX_ARG_BYTES).
MAX_SCRIPT_BYTES = 2**20

# bash arrays (docs: the module docstring): `NAME=(words)` / `NAME+=(words)` as a whole command, any such
# assignment anywhere on a line (a `case` branch `off) NAME=(--x off) ;;`), and a quoted `"${NAME[@]}"`
_ARRAY_SET = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=\((.*)\)$")
_ARRAY_ANY = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\+?=\(")
_ARRAY_USE = re.compile(r'"\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}"')
_OPENS = frozenset({"if", "case", "for", "while", "until", "select"})
_CLOSES = frozenset({"fi", "esac", "done"})
# a function definition's head: `name() {`, `name() { cmd` (a one-line body), `function name {`; `name()` alone
# waits for the `{` of the next line, which opens the body
_FUNCTION = re.compile(r"^(?:function\s+(?P<kw>[A-Za-z_][A-Za-z0-9_-]*)(?:\s*\(\))?|(?P<name>[A-Za-z_][A-Za-z0-9_-]*)"
                       r"\s*\(\))\s*(?P<brace>\{)?(?:\s|$)")
# trailing output redirections of a command: `2>&1`, `>> "$LOG"`, `2>/dev/null` (a `|` already split the line)
_REDIRECTS = re.compile(r"""(?:\s+[0-9]?>>?(?:&[0-9]|\s*(?:"[^"]*"|'[^']*'|[^\s"'&|;<>]+)))+\s*$""")

_ARRAY_OPENS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\+?=\()")
MAX_ARRAY_LINES = 200  # an array's words over more lines than this are not joined (read as the lines they are)


def _paren_depth(text: str) -> int:
    """`(` less `)` outside quotes."""
    depth, quote = 0, ""
    for c in text:
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        else:
            depth += (c == "(") - (c == ")")
    return depth


def _kib(n: int) -> str:
    return f"{n // 1024} KiB"


_K8S_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
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


@dataclass(frozen=True)
class ScriptLine:
    number: int  # 1-based line of the script where the logical line starts
    text: str  # backslash-newlines joined, stripped


def logical_lines(script: str) -> list[ScriptLine]:
    """The script's lines with backslash-newlines joined, and an array assignment whose words run over several lines
    (`SAMPLE_ARGS=(` ... `)`, the second public store's llamacppqwen3827bmtpone) joined into one line (a comment after
    a word ends at its own line; at most MAX_ARRAY_LINES lines; each line is looked at once)."""
    out: list[ScriptLine] = []
    pending: list[str] = []
    array: list[str] | None = None  # the words of an open array, a line each, comments cut
    depth = 0  # its parentheses still open
    start = 0
    for number, raw in enumerate(script.splitlines(), start=1):
        if array is not None:
            part = _uncomment(raw.strip())
            array.append(part)
            depth += _paren_depth(part)
            if depth <= 0 or len(array) >= MAX_ARRAY_LINES:
                out.append(ScriptLine(start, " ".join(p for p in array if p)))
                array = None
            continue
        if not pending:
            start = number
        if raw.rstrip().endswith("\\") and not raw.rstrip().endswith("\\\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        pending.append(raw)
        text = " ".join(part.strip() for part in pending).strip()
        pending = []
        if _ARRAY_OPENS.match(text):
            opened = _uncomment(text)
            depth = _paren_depth(opened)
            if depth > 0:  # the array's words go on
                array = [opened]
                continue
        if text:
            out.append(ScriptLine(start, text))
    if array is not None:
        out.append(ScriptLine(start, " ".join(p for p in array if p)))
    if pending:
        out.append(ScriptLine(start, " ".join(p.strip() for p in pending).strip()))
    return out


@dataclass
class Script:
    """A launcher script read up to its `exec` line."""

    lines: list[ScriptLine]
    env: dict[str, str]  # the container env plus the script's own assignments before `exec`
    cwd: str | None
    exec_line: ScriptLine | None
    before: list[ScriptLine]  # lines before `exec` (downloads, pip installs, ...)


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


def _commands_ops(text: str) -> list[tuple[str, str]]:
    """The commands of one line, each with the operator after it (`&&`, `||`, `;;`, `;`, `|`, `&`, or "" at the
    end); empty commands are kept where an operator follows them (a `;;` alone ends a `case` branch)."""
    ops: list[str] = []
    parts = split_outside_quotes(text, ("&&", "||", ";;", ";", "|", "&"), keep=("&>", ">&"), found=ops) or []
    return [(part, ops[i] if i < len(ops) else "") for i, part in enumerate(parts) if part or i < len(ops)]


# --- if / case blocks whose branch the chart decides ---------------------------------------------------------
# The second public store's launchers (github.com/coynntis/olares-one-market@cb991c8f, e.g.
# llamacppqwen36a3bone/templates/server.yaml) choose flags in blocks on their env:
#   REASONING_MODE="$(echo "${LLM_REASONING:-on}" | tr '[:upper:]' '[:lower:]')"
#   case "$REASONING_MODE" in off|0|false|no) REASONING_ARGS=(--reasoning off) ;; ... *) REASONING_ARGS=(...) ;; esac
#   if [ -n "${N_CPU_MOE:-}" ]; then OFFLOAD_ARGS+=(--n-cpu-moe "$N_CPU_MOE"); elif [ "${ENABLE_CPU_MOE:-1}" = "1" ] ...
# Where the values a branch tests are all known (the container's env as the chart renders it, the script's own
# assignments), the branch that runs is read and the others skipped, as bash would; a test of anything else (a
# file, a command, a value set at install or from a Secret) leaves the block undecided, and an array set inside
# it is not followed (the server line that uses it is refused, as before).
_LOWERED = re.compile(r"""^"\$\(echo\s+(?P<word>"[^"]*")\s*\|\s*tr\s+'\[:upper:\]'\s+'\[:lower:\]'\)"$""")
_REFS = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_UNKNOWN_VALUE = re.compile(r"<olaresEnv:[A-Za-z_][A-Za-z0-9_]*>")  # importer/helmview.py: a value set at install
_LOOPS = frozenset({"for", "while", "until", "select"})
MAX_LEADING = 64  # block words at the head of one command (`then do {`) read before nothing more is decided
_SHELL_TARGET = re.compile(r"""(?:>\s*["']?[^\s"'<>|&;]+\.sh\b|^(?:ba)?sh\b|^/bin/(?:ba)?sh\b)""")
_HEREDOC = re.compile(r"""<<-?\s*(?P<q>['"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=q)""")


@dataclass
class _Frame:
    kind: str  # "if", "case", "loop", "body" (a function's), "group"
    state: str  # of the branch being read: "live", "dead", "unknown"
    taken: bool | None = False  # if/case: a branch before ran (None: perhaps)
    cond: list[tuple[bool | None, str]] | None = None  # if/elif: the condition being read, (value, operator before)
    subject: str | None = None  # case: the word, None when not known
    patterns: list[str] = field(default_factory=list)  # case: the alternatives of the branch being read
    in_branch: bool = False  # case: inside a branch (after `PATTERN)`, before `;;`)


def _and(a: bool | None, b: bool | None) -> bool | None:
    return False if a is False or b is False else None if a is None or b is None else True


def _or(a: bool | None, b: bool | None) -> bool | None:
    return True if a is True or b is True else None if a is None or b is None else False


class _Blocks:
    """The if/case/loop/function blocks a script is inside, and whether the branch being read runs."""

    def __init__(self, scope: dict[str, str], unknown: set[str], decide: bool = True):
        self.frames: list[_Frame] = []
        self.decide = decide  # False: no branch is decided (every block may or may not run)
        self.scope = scope
        self.unknown = unknown  # variables whose value the chart does not say
        self.broken = False  # a block closed that was not open: nothing after it is decided
        self.pending: str | None = None  # `name()` whose `{` opens on the next line
        self.nested = 0  # block words read so far at the head of one command

    def state(self) -> str:
        if not self.decide:
            return "unknown" if self.frames else "live"
        states = {f.state for f in self.frames}
        return "dead" if "dead" in states else "unknown" if self.broken or "unknown" in states else "live"

    def word(self, text: str) -> str | None:
        """The one word `text` expands to, None where a value in it is not known."""
        if set(_REFS.findall(text)) & self.unknown:
            return None
        try:
            words = split_words(text, self.scope).words
        except ShellError:
            return None
        if len(words) != 1 or _UNKNOWN_VALUE.search(words[0]):
            return None
        return words[0]

    def test(self, command: str) -> bool | None:
        """`[ ... ]` / `test ...` of strings and integers; None for anything else (a file, a command)."""
        words = command.split()
        negate = bool(words) and words[0] == "!"
        body = command.strip()[1:].strip() if negate else command.strip()
        if body.startswith("[ ") and body.endswith(" ]"):
            inner = body[2:-2]
        elif body.startswith("test "):
            inner = body[5:]
        else:
            return None
        if set(_REFS.findall(inner)) & self.unknown:
            return None
        try:
            args = split_words(inner, self.scope).words
        except ShellError:
            return None
        if any(_UNKNOWN_VALUE.search(a) for a in args):
            return None
        value = _test_value(args)
        return None if value is None else value != negate

    def _branch(self, frame: _Frame, value: bool | None) -> None:
        if frame.taken is True or value is False:
            frame.state = "dead"
        elif value is True:
            frame.state = "live" if frame.taken is False else "unknown"
            frame.taken = True
        else:
            frame.state, frame.taken = "unknown", None

    def feed(self, command: str, op_before: str) -> str | None:
        """The command to run of `command` (block words consumed), or None when it is only block syntax. Block words
        that lead one command (`then do { ...`) are read one after another, at most MAX_LEADING of them: past that
        nothing after is decided (a line of a million `do` cannot exhaust the stack)."""
        self.nested += 1
        try:
            if self.nested > MAX_LEADING:
                self.broken = True
                return None
            return self._feed(command, op_before)
        finally:
            self.nested -= 1

    def _feed(self, command: str, op_before: str) -> str | None:
        command = command.strip()
        top = self.frames[-1] if self.frames else None
        words = command.split(None, 1)
        first, rest = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
        if top is not None and top.cond is not None:  # reading an if/elif condition
            if first == "then":
                value = top.cond[0][0]
                for part, op in top.cond[1:]:
                    value = _and(value, part) if op == "&&" else _or(value, part) if op == "||" else part
                top.cond = None
                self._branch(top, value)
                return self.feed(rest, "") if rest else None
            top.cond.append((self.test(command), op_before))
            return None
        if top is not None and top.kind == "case" and not top.in_branch:
            return self._pattern(top, command, first)
        if not command:
            return None
        opened = self._open(command, first, rest, top)
        return command if opened is False else opened or None

    def _open(self, command: str, first: str, rest: str, top: _Frame | None) -> str | None | Literal[False]:
        """Block words at the start of `command`: the command left to run (None: none); False when it starts no
        block word."""
        if first in ("if", "elif", "else"):
            return self._if(first, rest, top)
        if first == "case":
            match = re.fullmatch(r"case\s+(.+?)\s+in(?:\s+(.*))?", command)
            if match is None:
                self.broken = True
                return None
            self.frames.append(_Frame("case", "dead", subject=self.word(match.group(1))))
            return self.feed(match.group(2), "") if match.group(2) else None
        if first in _LOOPS:
            self.frames.append(_Frame("loop", "unknown"))
            return None
        if first == "do":
            return self.feed(rest, "") if rest else None
        head = _FUNCTION.match(command)
        if head is not None:
            if head.group("brace"):
                self.frames.append(_Frame("body", "unknown"))
                body = command[head.end():].strip()
                return self.feed(body, "") if body else None
            self.pending = head.group("kw") or head.group("name")
            return None
        if first == "{":
            self.frames.append(_Frame("body" if self.pending else "group", "unknown" if self.pending else "live"))
            self.pending = None
            return self.feed(rest, "") if rest else None
        return self._close(first, rest, top)

    def _if(self, first: str, rest: str, top: _Frame | None) -> str | None:
        """`if`/`elif` start reading a condition (its branch is decided at `then`); `else` runs when no branch
        before it did."""
        if first != "if" and (top is None or top.kind != "if"):
            self.broken = True
            return None
        if first == "else":
            assert top is not None
            top.state = "dead" if top.taken is True else "live" if top.taken is False else "unknown"
            return self.feed(rest, "") if rest else None
        if first == "if":
            self.frames.append(_Frame("if", "dead"))
        self.frames[-1].cond = [(self.test(rest), "")]
        return None

    def _close(self, first: str, rest: str, top: _Frame | None) -> None | Literal[False]:
        """`fi`, `esac`, `done`, `}` close their block (a stray one, or a `then` outside a condition, leaves nothing
        after it decided); False for any other command."""
        closes = {"fi": ("if",), "esac": ("case",), "done": ("loop",), "}": ("body", "group")}
        if first in closes and not rest:
            if top is None or top.kind not in closes[first]:
                self.broken = True
            else:
                self.frames.pop()
            return None
        if first == "then":
            self.broken = True
            return None
        return False

    def _pattern(self, frame: _Frame, command: str, first: str) -> str | None:
        """A `case` line between branches: `esac`, or the patterns of the next branch (split on `|` into the
        commands before) and the start of its body."""
        if first == "esac" and command == "esac":
            self.frames.pop()
            return None
        if not command:
            return None
        close = _close_paren(command)
        if close is None:
            frame.patterns.append(command)
            return None
        patterns = [*frame.patterns, command[:close]]
        frame.patterns = []
        frame.in_branch = True
        value: bool | None
        if frame.subject is None:
            value = None
        else:
            globs = [self.word(p.strip().lstrip("(").strip()) for p in patterns]
            value = None if any(g is None for g in globs) else any(fnmatchcase(frame.subject, g or "") for g in globs)
        self._branch(frame, value)
        body = command[close + 1:].strip()
        return self.feed(body, "") if body else None

    def after(self, op: str) -> None:
        """`;;` after a command ends the case branch it is in."""
        top = self.frames[-1] if self.frames else None
        if op == ";;" and top is not None and top.kind == "case":
            top.in_branch = False
            top.state = "dead"


def _uncomment(text: str) -> str:
    """`text` without its comment: from an unquoted `#` that starts a word (`fi  # end else` is `fi`)."""
    quote = ""
    escaped = False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t;&|("):
            return text[:i].rstrip()
    return text


def _close_paren(command: str) -> int | None:
    """Where a case pattern's `)` stands in `command` (outside quotes), None if it has none."""
    quote = ""
    for i, c in enumerate(command):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == ")":
            return i
        elif c in " \t" or c == "$":
            return None  # a command, not a pattern
    return None


def _test_value(args: list[str]) -> bool | None:
    """The value of `[ ARGS ]` for the string and integer tests; None for the others (files, `-a`/`-o`)."""
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2 and args[0] in ("-n", "-z"):
        return (args[1] != "") == (args[0] == "-n")
    if len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        ints = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__, "-gt": int.__gt__,
                "-ge": int.__ge__}
        if op in ints and re.fullmatch(r"-?[0-9]+", left) and re.fullmatch(r"-?[0-9]+", right):
            return bool(ints[op](int(left), int(right)))
    return None


def read_script(script: str, env: dict[str, str], launches: Callable[[str, bool], bool],
                unknown: frozenset[str] = frozenset()) -> Script:
    """Follow assignments, `cd` and the branches the chart decides (the `_Blocks` above) up to the command that starts
    the server (`launches(word0, after_exec)`); `unknown` are env variables whose value the chart does not say (from a
    Secret). ShellError at once for a script longer than MAX_SCRIPT_BYTES; each assignment is bounded by split_words."""
    check_size(script, MAX_SCRIPT_BYTES, "the launcher script")
    found = _read(script, env, launches, unknown, decide=True)
    if found.exec_line is None:  # blocks misread (a language inside quotes): read again deciding no branch
        found = _read(script, env, launches, unknown, decide=False)
    return found


def _read(script: str, env: dict[str, str], launches: Callable[[str, bool], bool], unknown: frozenset[str],
          decide: bool) -> Script:
    scope = dict(env)
    cwd = None
    lines = logical_lines(script)
    before: list[ScriptLine] = []
    arrays: dict[str, list[str] | None] = {}  # None: set where it may or may not run, not followed
    blocks = _Blocks(scope, set(unknown), decide)
    heredoc: str | None = None  # the word that ends the here-document being skipped
    for line in lines:
        if heredoc is not None:  # a here-document's body is another program's text
            heredoc = None if line.text == heredoc else heredoc
            before.append(line)
            continue
        opened = _HEREDOC.search(line.text)
        # a here-document that writes a shell script (`cat > /app/start-vllm.sh << SHEOF`) is read on as the launcher
        # (the second public store's vLLM apps start the server from one); any other (Python, a config) is skipped
        heredoc = opened.group("word") if opened and not _SHELL_TARGET.search(line.text) else None
        earlier: list[str] = []  # commands of this line before the server (`pip install ... && exec vllm serve`)
        undecided = False
        op_before = ""
        for raw, op in _commands_ops(_uncomment(line.text)):
            command = blocks.feed(raw, op_before)
            op_before = op
            state = blocks.state()
            if command is not None and state != "dead":
                first = command.split(None, 1)[0]
                candidate = command[4:].lstrip() if first == "exec" else command
                head = candidate.split(None, 1)[0] if candidate.split() else ""
                if launches(head.strip("\"'"), first == "exec"):
                    if earlier:
                        before.append(ScriptLine(line.number, " && ".join(earlier)))
                    # where the server's output goes (`2>&1 | tee -a "$LOG"`) is no part of its argv
                    candidate = _expand_arrays(_REDIRECTS.sub("", candidate), arrays)
                    return Script(lines, scope, cwd, ScriptLine(line.number, candidate), before)
                undecided = undecided or state == "unknown"
                _follow(command, state, arrays, blocks)
                if first == "cd" and len(command.split()) == 2 and state == "live":
                    cwd = command.split()[1].strip("\"'")
            if raw:
                earlier.append(raw)
            blocks.after(op)
        if undecided:  # an array this line sets where it may or may not run is not followed
            for match in _ARRAY_ANY.finditer(line.text):
                arrays[match.group(1)] = None
        before.append(line)
    return Script(lines, scope, cwd, None, before)


def _follow(command: str, state: str, arrays: dict[str, list[str] | None], blocks: _Blocks) -> None:
    """An assignment of `command` (a scalar or an array), in a branch that runs (`live`) or may run (`unknown`)."""
    scope = blocks.scope
    if _array_set(command, state != "live", arrays, scope):
        return
    assign = _ASSIGN.match(command)
    if assign is None:
        return
    name, value = assign.group(1), assign.group(2)
    lowered = _LOWERED.match(value.strip())  # `"$(echo "$X" | tr '[:upper:]' '[:lower:]')"`: the value lowercased
    word = blocks.word(lowered.group("word")) if lowered is not None else None
    if word is not None:
        scope[name] = word.lower()
        known = True
    else:
        try:
            words = split_words(value, scope)
        except ShellError:
            words = Words(["", ""])  # not a plain value: left as it was for the server line, unknown to a test
        known = len(words.words) <= 1
        if known:
            scope[name] = words.words[0] if words.words else ""
    if known and state == "live":
        blocks.unknown.discard(name)
    else:  # set where it may not run, or to a value not read: a test of it decides nothing
        blocks.unknown.add(name)


def _depth(command: str, depth: int) -> int:
    """The block depth after `command`: `if`/`case`/loops, function bodies and `{` groups open one,
    `fi`/`esac`/`done`/`}` close one (`then`, `else`, `do` lead a command inside the block)."""
    words = command.split()
    while words and words[0] in ("then", "else", "elif", "do"):
        words = words[1:]
    if not words:
        return depth
    body = " ".join(words)
    head = _FUNCTION.match(body)
    if words[0] in _OPENS or words[0] == "{" or (head is not None and head.group("brace")):
        return depth + 1  # `{ cmd; }` (a group on one line) closes with its `}` as a body does
    if words[0] in _CLOSES or body == "}":
        return max(0, depth - 1)
    return depth


def functions(lines: list[ScriptLine]) -> dict[str, list[str]]:
    """The functions a script defines outside any block: name -> the simple commands of its body (a one-line body
    `log() { echo "$*"; }` as well as one over many lines). Read, never run: what a call of one does is the
    caller's to judge from the body."""
    out: dict[str, list[str]] = {}
    depth = 0
    current: tuple[str, int] | None = None  # (name, the depth its body closes back to)
    pending: str | None = None  # `name()` whose `{` opens on the next line
    for line in lines:
        for command in simple_commands(line.text):
            before = depth
            depth = _depth(command, depth)
            if current is not None:
                if depth <= current[1]:
                    current = None
                else:
                    out[current[0]].append(command)
                continue
            head = _FUNCTION.match(command)
            if before == 0 and head is not None:
                name = head.group("kw") or head.group("name")
                if head.group("brace"):
                    current, pending = (name, before), None
                    out[name] = [command[head.end():].strip()] if command[head.end():].strip() else []
                else:
                    pending = name
            elif pending is not None and before == 0 and command.split()[:1] == ["{"]:
                current, out[pending], pending = (pending, before), [], None
                if command[1:].strip():
                    out[current[0]].append(command[1:].strip())
    return out


def _array_set(command: str, undecided: bool, arrays: dict[str, list[str] | None], scope: dict[str, str]) -> bool:
    """Follow `NAME=(words)` / `NAME+=(words)` (`undecided`: where it may or may not run); True when `command` is
    one."""
    match = _ARRAY_SET.match(command.strip())
    if match is None:
        opened = _ARRAY_ANY.match(command.strip())
        if opened is not None:  # `NAME=(` with its words on the lines after: not followed
            arrays[opened.group(1)] = None
        return opened is not None
    name, append, inner = match.groups()
    if undecided or (name in arrays and arrays[name] is None):
        arrays[name] = None
        return True
    try:
        words = split_words(inner, scope).words if inner.strip() else []
    except ShellError:
        arrays[name] = None  # not a plain list of words: not followed
        return True
    known = arrays.get(name) or []
    arrays[name] = [*known, *words] if append else list(words)
    return True


def _expand_arrays(text: str, arrays: dict[str, list[str] | None]) -> str:
    """`"${NAME[@]}"` of a followed array as its words, each quoted as a literal; any other stays (and the word
    split reports it)."""
    def sub(match: re.Match[str]) -> str:
        words = arrays.get(match.group(1))
        if words is None:
            return match.group(0)
        return " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)

    return _ARRAY_USE.sub(sub, text)


__all__ = ["MAX_ARGV_BYTES", "MAX_ARG_BYTES", "MAX_SCRIPT_BYTES", "Script", "ScriptLine", "ShellError", "Words",
           "check_size", "functions", "k8s_expand", "logical_lines", "read_script", "simple_commands",
           "split_outside_quotes", "split_words"]
