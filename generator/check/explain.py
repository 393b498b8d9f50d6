"""`catalog explain APP`: the resolved argv and env with where each value came from, the Genesis patch
state, and the memory breakdown with its verdict."""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog import Catalog, Resolved
from generator.chart.plan import plan
from generator.core.data import Data
from generator.engines import EngineSpec
from generator.engines.argv import Argv, normalize, origin_label
from generator.engines.settings import Settings, settings_for
from generator.fit.estimate import Fit, estimate


@dataclass(frozen=True)
class ArgLine:
    tokens: tuple[str, ...]
    origin: str
    notes: tuple[str, ...]  # `--x overridden by --x (extra_args)` for flags given again later

    def to_data(self) -> dict[str, Data]:
        return {"tokens": list(self.tokens), "origin": self.origin, "notes": list(self.notes)}


@dataclass(frozen=True)
class EnvLine:
    name: str
    value: str
    origin: str
    by: str | None = None  # an overridden assignment: the origin of the one that replaced it

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"name": self.name, "value": self.value, "origin": self.origin}
        if self.by is not None:
            out["by"] = self.by
        return out


@dataclass(frozen=True)
class PatchLine:
    id: str
    on: bool
    why: str
    purpose: str
    env: str

    def to_data(self) -> dict[str, Data]:
        return {"id": self.id, "on": self.on, "why": self.why, "purpose": self.purpose, "env": self.env}


@dataclass(frozen=True)
class Explanation:
    app: str
    title: str
    status: str
    stack: str
    image: str
    command: tuple[str, ...]
    args: tuple[ArgLine, ...]
    env: tuple[EnvLine, ...]
    overridden_env: tuple[EnvLine, ...]
    genesis: tuple[PatchLine, ...]  # patches that are on or that a variable decided
    fit: Fit

    def to_data(self) -> dict[str, Data]:
        """The `catalog explain --json` document."""
        return {
            "app": self.app, "title": self.title, "status": self.status, "stack": self.stack, "image": self.image,
            "command": list(self.command), "args": [a.to_data() for a in self.args],
            "env": [e.to_data() for e in self.env], "overridden_env": [e.to_data() for e in self.overridden_env],
            "genesis": [p.to_data() for p in self.genesis], "fit": self.fit.as_dict(),
        }


def _arg_notes(engine: EngineSpec) -> dict[tuple[str, int], list[str]]:
    """(origin, offset) of a flag -> 'overridden by ...' notes for flags given again later."""
    notes: dict[tuple[str, int], list[str]] = {}
    for earlier, winner in Argv(engine).overridden():
        notes.setdefault((earlier.origin, earlier.offset), []).append(
            f"{earlier.flag} overridden by {normalize(winner.flag)} ({origin_label(winner.origin)})")
    return notes


def _args(engine: EngineSpec) -> tuple[ArgLine, ...]:
    notes = _arg_notes(engine)
    return tuple(ArgLine(arg.tokens, origin_label(arg.origin),
                         tuple(n for (origin, _), texts in notes.items() if origin == arg.origin for n in texts))
                 for arg in engine.args)


def _env(engine: EngineSpec) -> tuple[tuple[EnvLine, ...], tuple[EnvLine, ...]]:
    current = tuple(EnvLine(e.name, e.value, origin_label(e.origin)) for e in engine.env)
    winners = {e.name: origin_label(e.origin) for e in engine.env}
    old = tuple(EnvLine(e.name, e.value, origin_label(e.origin), winners.get(e.name, "?")) for e in engine.overridden)
    return current, old


def _genesis(settings: Settings) -> tuple[PatchLine, ...]:
    return tuple(PatchLine(pid, state.on, state.why, state.patch.purpose, state.patch.env)
                 for pid, state in settings.genesis.items() if state.on or state.var is not None)


def explain_data(resolved: Resolved, catalog: Catalog) -> Explanation:
    spec = plan(resolved)
    engine = spec.engine
    settings = settings_for(resolved, engine)
    env, overridden = _env(engine)
    app = resolved.app
    return Explanation(app=app.name, title=app.title, status=app.status, stack=resolved.stack.id, image=engine.image,
                       command=engine.command, args=_args(engine), env=env, overridden_env=overridden,
                       genesis=_genesis(settings), fit=estimate(resolved, engine, settings))


__all__ = ["ArgLine", "EnvLine", "Explanation", "PatchLine", "explain_data"]
