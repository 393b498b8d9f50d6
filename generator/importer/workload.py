"""The engine container of a rendered chart: its image, its full argv (after `$(VAR)` and launcher-script
expansion), its environment (env and envFrom ConfigMaps), and the files fetched before it starts.

Every token and env entry keeps the chart file and line it came from, for the report.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.core import InputError, Problem
from generator.engines import Origin, Token
from generator.importer import programs
from generator.importer import objects
from generator.importer.helmview import Rendered
from generator.importer.shell import MAX_SCRIPT_BYTES, Script, ScriptLine, functions, read_script
from generator.importer.shellwords import (
    MAX_ARG_BYTES,
    MAX_ARGV_BYTES,
    ShellError,
    check_size,
    k8s_expand,
    simple_commands,
    split_words,
)
from generator.lint import Doc
from generator.importer.podenv import EnvEntry, Lines, _configmaps, resolve_env
from generator.importer.writes import Written, _mounts, _written, on_volume

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
JOB_KINDS = ("Job",)
# a Hugging Face file URL (`https://huggingface.co/<repo>/resolve/<rev>/<file>`) or the same path without
# the host, as the catalog's own fetch container writes it (FILE_<i>_SRC)
HF_FILE = re.compile(r"(?:https?://[^/\s\"']+/)?(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)/resolve/(?P<rev>[\w.-]+)/"
                     r"(?P<file>[^\s\"'?#]+)")
TMP_SUFFIXES = (".tmp", ".part", ".partial", ".download")


@dataclass(frozen=True)
class Fetch:
    """A Hugging Face file the chart downloads before (or while) the engine starts."""

    repo: str
    revision: str
    file: str
    dest: str | None
    origin: Origin
    by: str  # "init container <name>", "launcher script", "job <name>"


@dataclass
class Launch:
    workload: Doc
    container: Mapping[str, object]  # as Helm rendered it
    name: str
    image: str
    command_set: bool
    argv: list[Token]  # the program first
    script: Script | None
    script_origin: Origin | None
    env: dict[str, EnvEntry]
    used_vars: set[str] = field(default_factory=set)
    pre_exec: list[tuple[Origin, str]] = field(default_factory=list)  # script lines before the server
    problems: list[Problem] = field(default_factory=list)  # expansions that failed

    @property
    def program(self) -> str:
        return self.argv[0].text if self.argv else ""

    def env_values(self) -> dict[str, str]:
        return {k: e.value for k, e in self.env.items() if e.value is not None}


def pod_spec(doc: Doc) -> Mapping[str, object]:
    spec = doc.body.get("spec") or {}
    if doc.kind in JOB_KINDS or doc.kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec", spec) if doc.kind == "CronJob" else spec
    template = spec.get("template") or {} if isinstance(spec, dict) else {}
    pod = template.get("spec") if isinstance(template, dict) else None
    return pod if isinstance(pod, dict) else {}


def _shell_parts(full: list[str]) -> tuple[str, list[str]] | None:
    """(script, positional args) of `sh -c SCRIPT [$0 [$1 ...]]`."""
    if len(full) >= 3 and programs.is_shell(full[0]) and full[1].startswith("-") and "c" in full[1]:
        return full[2], full[4:] if len(full) > 3 else []
    return None


def _mounted_script(rendered: Rendered, container: Mapping[str, object], pod: Mapping[str, object],
                    full: list[str]) -> tuple[str, Doc, list[str]] | None:
    """(script, its ConfigMap, positional args) of `sh /path/script.sh [$1 ...]` where the script is a key of a
    ConfigMap the chart mounts as a volume: the official Olares LLM charts' wrapper (beclab/apps
    sglangqwen359bawq4bitv3/templates/sglang.yaml@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049 runs
    `["/bin/sh", "/llm-init/wrappers/sglang.sh"]` from ConfigMap llm-init-wrappers, templates/wrappers.yaml)."""
    if len(full) < 2 or not programs.is_shell(full[0]) or not full[1].startswith("/"):
        return None
    found = on_volume(_mounts(container), full[1])
    if found is None:
        return None
    volume, key = found
    spec = next((v for v in objects.maps(pod, "volumes") if v.get("name") == volume), None)
    ref = (spec or {}).get("configMap")
    if not isinstance(ref, dict):
        return None
    items = {str(i.get("path")): str(i.get("key")) for i in ref.get("items") or () if isinstance(i, dict)}
    cm = _configmaps(rendered.docs).get(str(ref.get("name") or ""))
    text = ((cm.body.get("data") or {}) if cm else {}).get(items.get(key, key))
    if cm is None or not isinstance(text, str):
        return None
    return text, cm, full[2:]


def _download_lines(lines: list[ScriptLine], scope: dict[str, str], base: Origin,
                    by: str) -> tuple[list[Fetch], set[int]]:
    """Files a script fetches (`curl URL -o DEST`, `wget -O DEST URL`, or a call of one of the script's own
    functions that runs curl or wget: `download "https://huggingface.co/R/resolve/main/F" "$DIR/F" ...`, the second
    public store's launchers, github.com/coynntis/olares-one-market@cb991c8f llamacppgrug27bone/templates/server.yaml);
    also the line numbers that do it."""
    out: list[Fetch] = []
    used: set[int] = set()
    fetchers = _fetching_functions(lines)
    for line in lines:
        for command in simple_commands(line.text):
            try:
                words = split_words(command, scope).words
            except ShellError:
                words = [_naive_expand(w, scope).strip("\"'") for w in command.split()]
            while words and words[0] in ("eval", "exec", "command"):
                words = words[1:]
            wrapped = bool(words) and words[0] in fetchers
            if not words or (programs.basename(words[0]) not in ("curl", "wget") and not wrapped):
                continue
            url = next((m for m in (HF_FILE.search(w) for w in words if "/resolve/" in w) if m), None)
            if url is None:
                continue
            dest = _call_dest(words[1:]) if wrapped else None
            for index, word in enumerate(() if wrapped else words):
                if word in ("-o", "--output", "-O", "--output-document") and index + 1 < len(words):
                    dest = words[index + 1]
                elif word.startswith(("--output-document=", "--output=")):
                    dest = word.split("=", 1)[1]
            if dest:
                for suffix in TMP_SUFFIXES:
                    dest = dest.removesuffix(suffix)
            line_no = base.line + line.number - 1 if base.line else None
            out.append(Fetch(url.group("repo"), url.group("rev"), url.group("file"), dest, Origin(base.where, line_no),
                             by))
            used.add(line.number)
    return out, used


def _fetching_functions(lines: list[ScriptLine]) -> set[str]:
    """The script's functions whose body runs curl or wget (a download helper)."""
    out = set()
    for name, body in functions(lines).items():
        for command in body:
            words = command.split()
            while words and words[0] in ("eval", "exec", "command"):
                words = words[1:]
            if words and programs.basename(words[0].strip("\"'")) in ("curl", "wget"):
                out.add(name)
                break
    return out


def _call_dest(args: list[str]) -> str | None:
    """Where a download helper's call puts the file: its one argument that is an absolute path (the URL aside);
    None when there is no such argument or more than one (then the file is matched by its name)."""
    paths = [a for a in args if a.startswith("/") and "://" not in a]
    return paths[0] if len(paths) == 1 else None


def _naive_expand(word: str, scope: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        return scope.get(m.group(1) or m.group(2), m.group(0))

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, word)


PLUMBING_LINE = re.compile(r"^(#|set\s+-[a-z]+|echo\b|mkdir\b|ls\b|cd\b|mv\b|if\b|then\b|else\b|elif\b|fi\b|done\b|"
                           r"while\b|do\b|true\b|:\s*$|[A-Za-z_][A-Za-z0-9_]*=)")


def _fetch_container(rendered: Rendered, lines: Lines, doc: Doc, container: dict[str, Any], by: str,
                     problems: list[Problem], writes: list[Written]) -> tuple[list[Fetch], bool]:
    """Files an init container (or a Job) fetches, and (into `writes`) those it writes from an env variable;
    (fetches, everything it does is one of these)."""
    name = str(container.get("name") or "")
    anchor = lines.container_anchor(doc, name)
    env = resolve_env(rendered, lines, doc, container, anchor, problems)
    values = {k: e.value for k, e in env.items() if e.value is not None}
    fetches: list[Fetch] = []
    # the catalog's own fetch container: FILE_<i>_SRC / FILE_<i>_DST pairs
    # (templates/chart/templates/deployment.yaml.j2)
    index = 0
    while f"FILE_{index}_SRC" in values:
        src, dst = values[f"FILE_{index}_SRC"], values.get(f"FILE_{index}_DST")
        match = HF_FILE.fullmatch(src) or HF_FILE.search(src)
        if match:
            fetches.append(Fetch(match.group("repo"), match.group("rev"), match.group("file"), dst,
                                 env[f"FILE_{index}_SRC"].origin, by))
        index += 1
    if fetches:
        return fetches, True
    full = [str(x) for x in (container.get("command") or [])] + [str(x) for x in (container.get("args") or [])]
    full = [k8s_expand(x, values)[0] for x in full]
    shell = _shell_parts(full)
    scripts = [shell[0]] if shell else [" ".join(full)]
    only_downloads = True
    before = len(writes)
    for script in scripts:
        first = script.strip().splitlines()[0].strip() if script.strip() else ""
        base = (lines.origin(doc.source, first, after=anchor, fallback=anchor) if first
                else Origin(rendered.where(doc.source), anchor))
        parsed = read_script(script, values, lambda word, after_exec: False)
        found, used = _download_lines(parsed.before, parsed.env, base, by)
        fetches += found
        for line in parsed.before:
            if line.number in used:
                continue
            at = Origin(base.where, base.line + line.number - 1 if base.line else None)
            write = _written(line, parsed.env, env, at, (doc, container), problems)
            if write is not None:
                writes.append(write)
                used.add(line.number)
        rest = [ln for ln in parsed.before if ln.number not in used and not PLUMBING_LINE.match(ln.text)
                and not re.match(r"^(eval\s+)?(curl|wget)\b", ln.text)]
        if rest:
            only_downloads = False
    return fetches, only_downloads and bool(fetches or len(writes) > before)


@dataclass
class Pod:
    """Every container of the chart's workloads, classified."""

    launches: list[Launch]
    fetches: list[Fetch]
    fetchers: list[tuple[Doc, Mapping[str, object], bool]]  # (doc, init container or job container, pure download)
    problems: list[Problem]
    writes: list[Written] = field(default_factory=list)  # files init containers write from an env variable


def _script_source(rendered: Rendered, lines: Lines, doc: Doc, raw_tokens: list[Token], anchor: int,
                   shell: tuple[str, list[str]] | None,
                   mounted: tuple[str, Doc, list[str]] | None) -> tuple[str, list[Token], Origin]:
    """(script, positional tokens, the script's first line) of `sh -c SCRIPT` or of a mounted script file; InputError
    at once for a script longer than a ConfigMap holds (MAX_SCRIPT_BYTES)."""
    script = shell[0] if shell else mounted[0] if mounted else ""
    try:
        check_size(script, MAX_SCRIPT_BYTES, "the launcher script")
    except ShellError as exc:
        raise InputError([Problem(rendered.where(doc.source), None, None, str(exc))]) from exc
    if shell:
        text = shell[0]
        script_token = raw_tokens[2]
        first = text.strip().splitlines()[0].strip() if text.strip() else ""
        base_line = lines.find(doc.source, first, after=script_token.origin.line or anchor) if first else None
        return text, raw_tokens[4:], Origin(script_token.origin.where, base_line or script_token.origin.line)
    assert mounted is not None
    text, cm, _ = mounted
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    base_line = lines.find(cm.source, first) if first else None
    return text, raw_tokens[2:], Origin(rendered.where(cm.source), base_line)


def _launch(rendered: Rendered, lines: Lines, doc: Doc, container: dict[str, Any]) -> Launch:
    problems: list[Problem] = []
    name = str(container.get("name") or "")
    anchor = lines.container_anchor(doc, name)
    env = resolve_env(rendered, lines, doc, container, anchor, problems)
    values = {k: e.value for k, e in env.items() if e.value is not None}
    used: set[str] = set()
    raw_tokens: list[Token] = []
    command = [str(x) for x in container.get("command") or []]
    args = [str(x) for x in container.get("args") or []]
    _check_argv(rendered, doc, name, command + args)
    # `sh -c SCRIPT`: a `$(name)` in the script that names no env var is passed as written, and the shell runs it as a
    # command substitution (`$(hostname)`, the second public store's sndrqwen3627bone): no problem of Kubernetes'
    shell_script = (command + args)[2] if _shell_parts(command + args) else None
    for part, items in (("command", command), ("args", args)):
        start = lines.find(doc.source, f"{part}:", after=anchor) or anchor
        cursor = start
        for item in items:
            origin = lines.value(doc.source, item, cursor)
            if origin.line and origin.where == rendered.where(doc.source):
                cursor = origin.line
            expanded, undefined = k8s_expand(item, values)
            refs = tuple(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", item))
            used.update(r for r in refs if r in values)
            for var in undefined if item != shell_script else ():
                if var in env:  # defined, from a Secret or the downward API: its value is not in the chart
                    problems.append(Problem(str(origin), None, None, f"$({var}) comes from {env[var].via}; its value "
                                            "is not in the chart, so the argument cannot be read"))
                else:
                    problems.append(Problem(str(origin), None, None,
                                            f"$({var}) is not defined in the container's env or envFrom: Kubernetes "
                                            "passes it as written; define the variable or write the value"))
            raw_tokens.append(Token(expanded, origin, tuple(r for r in refs if r in values)))
    image = str(container.get("image") or "")
    full = [t.text for t in raw_tokens]
    shell = _shell_parts(full)
    mounted = None if shell else _mounted_script(rendered, container, pod_spec(doc), full)
    script = None
    script_origin = None
    pre_exec: list[tuple[Origin, str]] = []
    argv = raw_tokens
    if shell or mounted:
        text, positional, script_origin = _script_source(rendered, lines, doc, raw_tokens, anchor, shell, mounted)
        # the script's first line (not blank) sits on base_line
        lead = len(text) - len(text.lstrip("\n"))
        offset = -text[:lead].count("\n")
        script = read_script(text, values, programs.launches,
                             frozenset(k for k, e in env.items() if e.value is None))  # from a Secret, a field
        used.update(set(_SCRIPT_REF.findall(text)) & values.keys())  # one pass over the script, not one per env
        if script.exec_line is None:
            argv = [Token(text, script_origin)]
        else:
            try:
                words = split_words(script.exec_line.text, script.env, [t.text for t in positional]).words
            except ShellError as exc:
                problems.append(Problem(str(_script_line(script_origin, script.exec_line, offset)), None, None,
                                        f"the launcher's server line cannot be read: {exc}"))
                words = script.exec_line.text.split()
            if script.cwd and words and words[0].startswith("./"):
                words[0] = f"{script.cwd.rstrip('/')}/{words[0][2:]}"
            origin = _script_line(script_origin, script.exec_line, offset)
            physical = text.splitlines()
            argv = _place(words, positional, physical, script.exec_line, origin)
            for line in script.before:
                pre_exec.append((_script_line(script_origin, line, offset), line.text))
    elif not command and (entrypoint := programs.entrypoint_of(image)) is not None:
        origin = Origin(rendered.where(doc.source), anchor)
        argv = [*(Token(word, origin) for word in entrypoint.split()), *raw_tokens]  # `vllm serve`: two words
    launch = Launch(doc, container, name, image, bool(command), argv, script, script_origin, env, used, pre_exec,
                    problems)
    return launch


_FLAG_KEY = re.compile(r"(?<![^\s'\"])(-[^\s='\"]*)")  # a word's flag name: `--ctx-size` of `"--ctx-size=4"`
_SCRIPT_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _check_argv(rendered: Rendered, doc: Doc, name: str, argv: list[str]) -> None:
    """InputError before any work when a container's command and args could not be exec'd (an argument past
    MAX_ARG_BYTES, all of them past MAX_ARGV_BYTES): nothing that long is read, split or searched."""
    total = 0
    for item in argv:
        total += len(item)
        if len(item) > MAX_ARG_BYTES or total > MAX_ARGV_BYTES:
            raise InputError([Problem(rendered.where(doc.source), None, None,
                                      f"container {name!r}: an argument of {len(item)} bytes or arguments of "
                                      f"{total}+ bytes in all; exec passes at most {MAX_ARG_BYTES // 1024} KiB per "
                                      f"argument and {MAX_ARGV_BYTES // 2**20} MiB in all (Linux MAX_ARG_STRLEN, "
                                      "ARG_MAX): refused unread")])


def _script_line(base: Origin, line: ScriptLine, offset: int) -> Origin:
    if base.line is None:
        return base
    return Origin(base.where, base.line + line.number - 1 + offset)


def _place(words: list[str], positional: list[Token], physical: list[str], line: ScriptLine,
           origin: Origin) -> list[Token]:
    """Tokens for the exec line's words: each flag on the physical line that holds it.

    Linear in the line (issue 40 cause 3: a substring search of the whole line per word took a 3 MB line past
    180 s): the words of each physical line are indexed once, a word is looked up in that index, and only a word
    the index does not hold is searched for as a substring, within a budget of bytes for the whole line."""
    out: list[Token] = []
    pos_texts = [t.text for t in positional]
    first = line.number - 1
    span = []
    index = first
    while index < len(physical):
        span.append(index)
        if not physical[index].rstrip().endswith("\\"):
            break
        index += 1
    where = _LineIndex([physical[i] for i in span])
    cursor = 0
    pos_index = 0
    for word in words:
        if pos_index < len(pos_texts) and word == pos_texts[pos_index] and where.first(word, 0) is None:
            out.append(positional[pos_index])
            pos_index += 1
            continue
        if word.startswith("-"):  # only a flag moves the cursor; other words take the flag's line
            found = where.first(word.split("=", 1)[0], cursor)
            if found is not None:
                cursor = found
        at = origin.line + cursor if origin.line else None
        out.append(Token(word, Origin(origin.where, at)))
    return out


class _LineIndex:
    """Which of some lines holds a text: the flags of the lines (`--name` of `--name=value`, quotes stripped)
    indexed once; any other text is searched for in the lines while the search budget (four times the lines' bytes)
    lasts."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.at: dict[str, list[int]] = {}
        for k, text in enumerate(lines):
            for key in set(_FLAG_KEY.findall(text)):
                self.at.setdefault(key, []).append(k)
        self.budget = 4 * sum(map(len, lines)) + 4096
        self.memo: dict[tuple[str, int], int | None] = {}

    def first(self, text: str, start: int) -> int | None:
        """The first line at or after `start` that holds `text`, else None."""
        rows = self.at.get(text)
        if rows:
            k = bisect.bisect_left(rows, start)
            if k < len(rows):
                return rows[k]
        key = (text, start)
        if key in self.memo:
            return self.memo[key]
        found = None
        for k in range(start, len(self.lines)):
            if self.budget <= 0:
                break
            self.budget -= len(self.lines[k])
            if text in self.lines[k]:
                found = k
                break
        self.memo[key] = found
        return found


def read_pod(rendered: Rendered, lines: Lines) -> Pod:
    launches: list[Launch] = []
    fetches: list[Fetch] = []
    fetchers: list[tuple[Doc, Mapping[str, object], bool]] = []
    problems: list[Problem] = []
    writes: list[Written] = []
    for doc in rendered.docs:
        if doc.kind not in (*WORKLOAD_KINDS, *JOB_KINDS):
            continue
        pod = pod_spec(doc)
        for init in objects.items(pod, "initContainers"):
            if isinstance(init, dict):
                found, pure = _fetch_container(rendered, lines, doc, init, f"init container {init.get('name')}",
                                               problems, writes)
                fetches += found
                fetchers.append((doc, init, pure))
        for container in objects.items(pod, "containers"):
            if not isinstance(container, dict):
                continue
            if doc.kind in JOB_KINDS:
                found, pure = _fetch_container(rendered, lines, doc, container, f"job {doc.name}", problems,
                                               writes)
                fetches += found
                fetchers.append((doc, container, pure))
                continue
            launches.append(_launch(rendered, lines, doc, container))
    for launch in launches:
        if launch.script is not None:
            found, _ = _download_lines(launch.script.before, launch.script.env,
                                       launch.script_origin or Origin(rendered.where(launch.workload.source), None),
                                       "launcher script")
            fetches += found
    return Pod(launches, fetches, fetchers, problems, writes)


__all__ = ["HF_FILE", "Fetch", "Launch", "Origin", "Pod", "Token", "pod_spec", "read_pod"]
