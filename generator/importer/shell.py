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

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal
from generator.importer.shellwords import (
    ShellError,
    Words,
    check_size,
    simple_commands,
    split_outside_quotes,
    split_words,
)
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
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


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


__all__ = ["MAX_SCRIPT_BYTES", "Script", "ScriptLine", "functions", "logical_lines", "read_script"]
