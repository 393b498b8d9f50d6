"""Read the resolved argv and env of an engine the way the engine does: the last occurrence of a flag wins.

Every value keeps the origin of the argument it came from (`app.extra_args`, `stack <id>`, `app.env`, ...)
so rules and `catalog explain` can say which setting of the catalog produced it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from generator.engines.base import Arg, EngineSpec, EnvVar


def normalize(flag: str) -> str:
    """`--max_model_len` and `--max-model-len` are the same flag for argparse and llama.cpp."""
    dashes = len(flag) - len(flag.lstrip("-"))
    return flag[:dashes] + flag[dashes:].replace("_", "-")


def origin_label(origin: str) -> str:
    """`app.extra_args` -> `extra_args`; `stack genesis-vllm` -> `stack genesis-vllm`."""
    return origin[4:] if origin.startswith("app.") else origin


@dataclass(frozen=True)
class Flag:
    flag: str  # as written in the argv
    value: str | None  # None for a boolean flag
    origin: str  # Arg.origin
    offset: int  # index of the flag token inside its Arg (extra_args line lookup)

    def shown(self) -> str:
        return f"`{self.flag}`" if self.value is None else f"`{self.flag} {self.value}`"

    def where(self) -> str:
        return f"from {origin_label(self.origin)}"


class Argv:
    """Lookups over one engine's argv."""

    def __init__(self, engine: EngineSpec | Iterable[Arg]):
        args = engine.args if isinstance(engine, EngineSpec) else engine
        self.tokens = [(text, arg.origin, i) for arg in args for i, text in enumerate(arg.tokens)]
        # every `-...` token by its normalized name, in argv order: a lookup reads only its own flag's tokens
        self._by_name: dict[str, list[tuple[int, str, str | None]]] = {}
        for index, (text, _, _) in enumerate(self.tokens):
            if text.startswith("-"):
                head, eq, tail = text.partition("=")
                self._by_name.setdefault(normalize(head), []).append((index, head, tail if eq else None))

    def _matches(self, names: tuple[str, ...]) -> list[tuple[int, str, str | None]]:
        if len(names) == 1:
            return self._by_name.get(names[0], [])
        return sorted(found for name in set(names) for found in self._by_name.get(name, ()))

    def all(self, *names: str, boolean: bool = False) -> list[Flag]:
        out = []
        for index, head, inline in self._matches(tuple(normalize(n) for n in names)):
            _, origin, offset = self.tokens[index]
            value = inline
            if value is None and not boolean and index + 1 < len(self.tokens):
                value = self.tokens[index + 1][0]
            out.append(Flag(head, value, origin, offset))
        return out

    def last(self, *names: str) -> Flag | None:
        """The effective value of a flag that takes a value."""
        found = self.all(*names)
        return found[-1] if found else None

    def present(self, *names: str) -> Flag | None:
        """The last occurrence of a boolean flag."""
        found = self.all(*names, boolean=True)
        return found[-1] if found else None

    def overridden(self) -> list[tuple[Flag, Flag]]:
        """(earlier, winner) pairs for flags given more than once."""
        seen: dict[str, list[Flag]] = {}
        for text, origin, offset in self.tokens:
            if text.startswith("--") or (text.startswith("-") and len(text) > 1 and not text[1].isdigit()):
                head = normalize(text.partition("=")[0])
                seen.setdefault(head, []).append(Flag(text.partition("=")[0], None, origin, offset))
        return [(flag, flags[-1]) for flags in seen.values() if len(flags) > 1 for flag in flags[:-1]]


class Given:
    """A family's flags as it decides them, without an argv: `own` the flags it derives from the app's fields (keyed
    by their normalized name; each Flag as the builder writes it), `text` the args the catalog writes as text after
    them (the stack's `args`, the app's `extra_args`, engines/base.py `given_args`), read as the engine reads them.
    The last occurrence wins, so a flag of the text overrides the family's own; the lookups answer what `Argv` would
    answer over the argv the builder makes of the same app (tests/engines/test_resolve_once.py holds it)."""

    def __init__(self, own: Mapping[str, Flag], text: Iterable[Arg]):
        self.own = {normalize(name): flag for name, flag in own.items()}
        self.text = Argv(text)

    def _own(self, names: tuple[str, ...]) -> Flag | None:
        for name in names:  # the readers spell flags with dashes: normalized already
            found = self.own.get(name)
            if found is not None:
                return found
        return None

    def last(self, *names: str) -> Flag | None:
        return self.text.last(*names) or self._own(names)

    def present(self, *names: str) -> Flag | None:
        return self.text.present(*names) or self._own(names)


def env_var(engine: EngineSpec | tuple[EnvVar, ...], name: str) -> EnvVar | None:
    env = engine.env if isinstance(engine, EngineSpec) else engine
    return next((e for e in env if e.name == name), None)


__all__ = ["Argv", "Flag", "Given", "env_var", "normalize", "origin_label"]
