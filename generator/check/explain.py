"""`catalog explain APP`: the resolved argv and env with where each value came from, the Genesis patch
state, and the memory breakdown with its verdict."""

from __future__ import annotations

from typing import Any

from generator.engines.argv import Argv, normalize, origin_label
from generator.catalog import Catalog, Resolved
from generator.engines import EngineSpec
from generator.fit.estimate import estimate
from generator.chart.plan import plan
from generator.engines.settings import settings_for


def _arg_notes(engine: EngineSpec) -> dict[tuple[str, int], list[str]]:
    """(origin, offset) of a flag -> 'overridden by ...' notes for flags given again later."""
    notes: dict[tuple[str, int], list[str]] = {}
    for earlier, winner in Argv(engine).overridden():
        notes.setdefault((earlier.origin, earlier.offset), []).append(
            f"{earlier.flag} overridden by {normalize(winner.flag)} ({origin_label(winner.origin)})")
    return notes


def _args(engine: EngineSpec) -> list[dict[str, Any]]:
    notes = _arg_notes(engine)
    out = []
    for arg in engine.args:
        mine = [n for (origin, _), texts in notes.items() if origin == arg.origin for n in texts]
        out.append({"tokens": list(arg.tokens), "origin": origin_label(arg.origin), "notes": mine})
    return out


def _env(engine: EngineSpec) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    current = [{"name": e.name, "value": e.value, "origin": origin_label(e.origin)} for e in engine.env]
    winners = {e.name: origin_label(e.origin) for e in engine.env}
    old = [{"name": e.name, "value": e.value, "origin": origin_label(e.origin), "by": winners.get(e.name, "?")}
           for e in engine.overridden]
    return current, old


def _genesis(settings) -> list[dict[str, Any]]:
    return [{"id": pid, "on": state.on, "why": state.why, "purpose": state.patch.purpose,
             "env": state.patch.env} for pid, state in settings.genesis.items()
            if state.on or state.var is not None]


def explain_data(resolved: Resolved, catalog: Catalog) -> dict[str, Any]:
    spec = plan(resolved)
    engine = spec.engine
    settings = settings_for(resolved, engine)
    env, overridden = _env(engine)
    return {
        "app": resolved.app.name, "title": resolved.app.title, "status": resolved.app.status,
        "stack": resolved.stack.id, "image": engine.image, "command": list(engine.command),
        "args": _args(engine), "env": env, "overridden_env": overridden,
        "genesis": _genesis(settings),
        "fit": _with_basis(estimate(resolved, engine, settings).as_dict()),
    }


def _with_basis(fit: dict[str, Any]) -> dict[str, Any]:
    """Each part says where its figure comes from: measured, calibrated, computed or assumed."""
    from generator.fit.calibrate import basis_of

    for part in fit["parts"]:
        part["basis"] = basis_of(part["component"], part["note"])
    return fit


__all__ = ["explain_data"]
