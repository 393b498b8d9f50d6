"""Files a container's script writes from one of its env variables (`echo "$VAR" | base64 -d > FILE`):
parsed, never run; and where a path lies on the container's volumes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass

from generator.core import Problem
from generator.engines import Origin
from generator.importer.shell import ScriptLine
from generator.importer.shellwords import ShellError, split_outside_quotes, split_words
from generator.lint import Doc
from generator.importer.podenv import EnvEntry


# --- files a script writes from an env var (`echo "$VAR" | base64 -d > FILE`) --------------------------------

# github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9
# qwen36a3bvisionone/templates/deployment.yaml:74 `echo "$CHAT_TEMPLATE_B64" | base64 -d > /models/chat_template.jinja`
# (the variable from the chart's ConfigMap, :16); the engine reads the file with --chat-template-file (:126)
DECODED_CAP = 1 << 20  # the most bytes a decoded env var may hold (a chat template is a few KiB)
# the value of one env variable, quoted: `echo "$VAR"`, `echo -n "${VAR}"`, `printf '%s' "$VAR"`, `printf '%s\n' ..`
_WRITE_SOURCE = re.compile(r"""^(?P<cmd>echo(?:\s+-n)?|printf\s+(?P<fmt>'%s'|"%s"|%s|'%s\\n'|"%s\\n"))\s+"""
                           r'''"\$(?:\{(?P<v1>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<v2>[A-Za-z_][A-Za-z0-9_]*))"$''')
_DECODE = re.compile(r"^base64\s+(?:-d|--decode)$")
_REDIRECT = re.compile(r"""^(?P<body>.*?)\s*(?<![>0-9&])>\s*(?P<target>"[^"]*"|'[^']*'|[^\s"'<>|&;]+)$""")


@dataclass(frozen=True)
class Written:
    """A file a container's script writes from one of its env variables, decoded or as is; parsed, never run."""

    path: str  # in the writing container
    var: str
    value: str  # the variable's value, as the chart writes it
    how: str  # "base64" (`| base64 -d`) or "plain"
    text: str | None  # what the file holds; None when it cannot be known (see the problem reported)
    origin: Origin  # the script line
    value_origin: Origin  # where the variable's value is written
    workload: tuple[str, str]  # (source, name) of the workload whose pod runs the container
    container: str
    mounts: tuple[tuple[str, str, str], ...]  # the writer's (mountPath, volume, subPath)


def _top_split(text: str, ops: tuple[str, ...], passing: str = "") -> list[str] | None:
    """`text` split on the operators `ops` outside quotes; None when it has other control characters (but
    those in `passing`, left in place)."""
    def control(line: str, i: int) -> bool:
        return (line[i] in "`;&|<(" and line[i] not in passing) or line.startswith(("$(", "||"), i)

    return split_outside_quotes(text, ops, refuse=control)


def _mounts(container: Mapping[str, object]) -> tuple[tuple[str, str, str], ...]:
    mounts = container.get("volumeMounts")
    return tuple((str(m.get("mountPath") or ""), str(m.get("name") or ""), str(m.get("subPath") or ""))
                 for m in (mounts if isinstance(mounts, list) else ()) if isinstance(m, dict))


def on_volume(mounts: tuple[tuple[str, str, str], ...], path: str) -> tuple[str, str] | None:
    """(volume, path inside it) of an absolute `path` in a container with these mounts; None off every volume."""
    best: tuple[int, str, str] | None = None
    for mount_path, volume, sub in mounts:
        root = mount_path.rstrip("/")
        if root and (path == root or path.startswith(root + "/")) and (best is None or len(root) > best[0]):
            inner = path[len(root):].lstrip("/")
            best = (len(root), volume, "/".join(p for p in (sub.strip("/"), inner) if p))
    return (best[1], best[2]) if best else None


def _decoded(value: str, how: str, newline: bool) -> tuple[str | None, str | None]:
    """(text, None) or (None, why it cannot be read): base64 (newlines ignored, as `base64 -d` does), UTF-8,
    at most DECODED_CAP bytes."""
    if how == "plain":
        data = (value + ("\n" if newline else "")).encode("utf-8")
    else:
        compact = value.replace("\n", "")
        if len(compact) > (DECODED_CAP // 3 + 1) * 4:
            return None, f"decodes to more than {DECODED_CAP} bytes (1 MiB)"
        try:
            data = base64.b64decode(compact, validate=True)
        except (binascii.Error, ValueError) as exc:
            return None, f"is not valid base64 ({exc})"
    if len(data) > DECODED_CAP:
        return None, f"holds more than {DECODED_CAP} bytes (1 MiB)"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"does not decode to UTF-8 text (byte {exc.start})"


def _written(line: ScriptLine, scope: dict[str, str], env: dict[str, EnvEntry], origin: Origin,
             where: tuple[Doc, Mapping[str, object]], problems: list[Problem]) -> Written | None:
    """The file one script line writes from an env variable, if the line is exactly that; a value that cannot be
    decoded is a problem at its line."""
    commands = _top_split(line.text, ("&&",), passing="|")
    if not commands or len(commands) != 1:
        return None
    redirect = _REDIRECT.match(commands[0])
    if redirect is None:
        return None
    stages = _top_split(redirect.group("body"), ("|",))
    if not stages or len(stages) > 2 or (len(stages) == 2 and not _DECODE.match(stages[1])):
        return None
    source = _WRITE_SOURCE.match(stages[0])
    if source is None:
        return None
    var = source.group("v1") or source.group("v2")
    entry = env.get(var)
    if entry is None or entry.value is None or scope.get(var) != entry.value:
        return None  # not the container's env var (or reassigned by the script): not read
    try:
        target = split_words(redirect.group("target"), scope).words
    except ShellError:
        return None
    if len(target) != 1 or not target[0].startswith("/"):
        return None
    how = "base64" if len(stages) == 2 else "plain"
    command = source.group("cmd")
    newline = command == "echo" or "\\n" in (source.group("fmt") or "")
    if how == "plain" and command.startswith("echo") and "\\" in entry.value:
        return None  # `echo` of a backslash differs between shells: not guessed at
    text, why = _decoded(entry.value, how, newline)
    if why is not None:
        problems.append(Problem(str(entry.origin), None, None,
                                f"env {var} {why}, but {origin} writes it to {target[0]}"
                                f"{' with base64 -d' if how == 'base64' else ''}; write the UTF-8 text of the file "
                                f"{'encoded with `base64 -w0 FILE`' if how == 'base64' else 'as the value'} (1 MiB "
                                "at most)"))
    doc, container = where
    return Written(target[0], var, entry.value, how, text, origin, entry.origin, (doc.source, doc.name),
                   str(container.get("name") or ""), _mounts(container))


__all__ = ["DECODED_CAP", "on_volume", "Written"]
