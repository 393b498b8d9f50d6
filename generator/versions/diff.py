"""Diff two release states (versions.state.ReleaseState) into changelog lines, each with a semver level.

Levels (docs/versioning.md): a removed or renamed entrance, workload or values key is **major** (a user's
values or links stop working); a new image, engine, model, model revision or quantization, or an added
entrance/workload/values key is **minor**; args, env, context, resources, status, metadata and any
other chart file change are **patch**.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from generator.engines import Arg
from generator.versions.state import LEVELS, ModelRef, ReleaseState, is_flag

POSITIONAL = "<positional>"


@dataclass(frozen=True)
class Change:
    verb: str  # Keep-a-Changelog word: Added, Changed, Removed ("" for a free-text note)
    text: str
    level: str  # patch, minor, major

    @property
    def bullet(self) -> str:
        return f"- {self.verb} {self.text}" if self.verb else f"- {self.text}"

    @property
    def phrase(self) -> str:
        return f"{self.verb.lower()} {self.text}" if self.verb else self.text


def level_of(changes: list[Change]) -> str:
    return max((c.level for c in changes), key=LEVELS.index, default="patch")


def _code(text: object) -> str:
    return f"`{text}`"


def _scalar(a: object, b: object, label: str, level: str, code: bool = True) -> list[Change]:
    if a == b:
        return []
    return [Change("Changed", f"{label} {_code(a) if code else a} -> {_code(b) if code else b}", level)]


def _model(a: ModelRef, b: ModelRef) -> list[Change]:
    pairs = ((a.id, b.id, "model"), (a.quantization, b.quantization, "quantization"), (a.repo, b.repo, "model repo"),
             (a.revision, b.revision, "model revision"))
    return [Change("Changed", f"{label} {_code(x)} -> {_code(y)}", "minor") for x, y, label in pairs if x != y]


def _flag(group: list[str]) -> str:
    return group[0] if is_flag(group[0]) else POSITIONAL


def _args(old: list[str], new: list[str], quiet_flags: set[str]) -> list[Change]:
    """Option-by-option diff: `--x a` -> `--x b` is one Changed line, not a removal and an addition."""
    before, after = Counter(old), Counter(new)
    gone = [shlex.split(s) for s in (before - after).elements()]
    came = [shlex.split(s) for s in (after - before).elements()]
    out: list[Change] = []
    gone_flags, came_flags = Counter(_flag(g) for g in gone), Counter(_flag(g) for g in came)
    for group in gone:
        flag = _flag(group)
        if flag in quiet_flags:
            continue
        if gone_flags[flag] == 1 and came_flags[flag] == 1:
            other = next(g for g in came if _flag(g) == flag)
            label = "argument" if flag == POSITIONAL else _code(flag)
            out.append(Change("Changed", f"{label} {_code(shlex.join(group[1:] if flag != POSITIONAL else group))} -> "
                              f"{_code(shlex.join(other[1:] if flag != POSITIONAL else other))}", "patch"))
        else:
            out.append(Change("Removed", _code(shlex.join(group)), "patch"))
    for group in came:
        flag = _flag(group)
        if flag in quiet_flags or (gone_flags[flag] == 1 and came_flags[flag] == 1):
            continue
        out.append(Change("Added", _code(shlex.join(group)), "patch"))
    return out


def _env(old: dict[str, str], new: dict[str, str]) -> list[Change]:
    out = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            out.append(Change("Removed", f"env {_code(f'{name}={old[name]}')}", "patch"))
        elif name not in old:
            out.append(Change("Added", f"env {_code(f'{name}={new[name]}')}", "patch"))
        elif old[name] != new[name]:
            out.append(Change("Changed", f"env {_code(name)} {_code(old[name])} -> {_code(new[name])}", "patch"))
    return out


def _mapping(old: Mapping[str, str], new: Mapping[str, str], label: str, level: str) -> list[Change]:
    return [Change("Changed", f"{label} {key} {_code(old.get(key))} -> {_code(new.get(key))}", level)
            for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


def _names(old: list[str], new: list[str], label: str) -> list[Change]:
    out = [Change("Removed", f"{label} {_code(n)}", "major") for n in sorted(set(old) - set(new))]
    return out + [Change("Added", f"{label} {_code(n)}", "minor") for n in sorted(set(new) - set(old))]


def _entrances(old: dict[str, int], new: dict[str, int]) -> list[Change]:
    out = _names(list(old), list(new), "entrance")
    for name in sorted(set(old) & set(new)):
        if old[name] != new[name]:
            out.append(Change("Changed", f"entrance {_code(name)} port {old[name]} -> {new[name]}", "patch"))
    return out


def _status(old: ReleaseState, new: ReleaseState) -> list[Change]:
    if old.status == new.status:
        return []
    return [Change("Changed", f"status {old.status} -> {new.status}", "patch")]


def _files(old: ReleaseState, new: ReleaseState) -> list[Change]:
    """Nothing else explains the change: name the files (a generator or template change)."""
    a, b = old.files, new.files
    names = sorted(rel for rel in set(a) | set(b) if a.get(rel) != b.get(rel))
    return [Change("Changed", "chart files " + ", ".join(_code(n) for n in names), "patch")] if names else []


def diff_states(old: ReleaseState, new: ReleaseState, quiet: dict[str, set[str]] | None = None) -> list[Change]:
    """Every difference between two release states, most significant first.

    `quiet` maps a state field (context, model) to the argv flags that merely restate it: when that field
    changed, its flags are not listed again as argument changes.
    """
    quiet = quiet or {}
    changes = _status(old, new)
    changes += _scalar(old.engine, new.engine, "engine", "minor", False)
    changes += _scalar(old.stack, new.stack, "stack", "minor", False)
    changes += _scalar(old.image, new.image, "image", "minor") + _model(old.model, new.model)
    changes += _names(old.workloads, new.workloads, "workload")
    changes += _entrances(old.entrances, new.entrances)
    changes += _names(old.values_keys, new.values_keys, "values key")
    changes += _scalar(old.context, new.context, "context", "patch", code=False)
    changes += _scalar(old.command, new.command, "command", "patch")
    quiet_flags: set[str] = set()
    if old.context != new.context:
        quiet_flags |= quiet.get("context", set())
    if old.model != new.model:
        quiet_flags |= quiet.get("model", set())
    changes += _args(old.args, new.args, quiet_flags)
    changes += _env(old.env, new.env)
    changes += _mapping(old.resources, new.resources, "resources", "patch")
    changes += _mapping(old.metadata, new.metadata, "metadata", "patch")
    return changes or _files(old, new)


QUIET_ORIGINS = {"context": ("app.context_length",),
                 "model": ("app.model + app.quantization", "model weights revision")}


def quiet_flags(args: tuple[Arg, ...]) -> dict[str, set[str]]:
    """The flags of the engine's args that restate the context or the model."""
    out: dict[str, set[str]] = {field: set() for field in QUIET_ORIGINS}
    for arg in args:
        for field, origins in QUIET_ORIGINS.items():
            if arg.origin in origins and arg.tokens:
                out[field].add(arg.tokens[0] if is_flag(arg.tokens[0]) else POSITIONAL)
    return out
