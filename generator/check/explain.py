"""`catalog explain APP`: the resolved argv and env with where each value came from, the Genesis patch
state, and the memory breakdown with its verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from generator.catalog import Catalog, Resolved
from generator.chart import GpuMemory
from generator.chart.plan import plan
from generator.core import Data
from generator.engines import EngineSpec
from generator.engines import cap_of
from generator.engines import Argv, normalize, origin_label
from generator.engines import Settings
from generator.core import UsageError
from generator.fit import basis_of
from generator.fit import DevicePlan, device_plan, device_plans, judged_on_device, variant_on
from generator.fit import Fit
from generator.fit.estimate import estimate
from generator.fit import Measured, Reading, Roofline, reading
from generator.fit.roofline import roofline
from generator.fit import Speeds, speeds


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
    roofline: Roofline | None = None  # the decode bound at the measurement's context (else an empty cache)
    roofline_full: Roofline | None = None  # the same at the app's whole context
    reading: Reading | None = None  # the measured speed as a fraction of `roofline`
    devices: tuple[DevicePlan, ...] = ()  # per device it targets (its own first), when it targets more than one
    speeds: Speeds | None = None  # the predicted decode speeds on its device (generator/fit/speed.py)
    gpu: GpuMemory | None = None  # scheduler request, in-container HAMi cap, engine budget, each with its origin
    shared: tuple[str, ...] = ()  # the shared form (docs/forms.md): each setting's bound and where it comes from

    def to_data(self) -> dict[str, Data]:
        """The `catalog explain --json` document."""
        out: dict[str, Data] = {
            "app": self.app, "title": self.title, "status": self.status, "stack": self.stack, "image": self.image,
            "command": list(self.command), "args": [a.to_data() for a in self.args],
            "env": [e.to_data() for e in self.env], "overridden_env": [e.to_data() for e in self.overridden_env],
            "genesis": [p.to_data() for p in self.genesis], "fit": _fit_data(self.fit),
            "roofline": self.roofline.as_dict() if self.roofline else None,
            "roofline_full_context": self.roofline_full.as_dict() if self.roofline_full else None,
            "speed_per_roofline": self.reading.as_dict() if self.reading else None,
            "devices": [d.to_data() for d in self.devices],
            **speed_data(self.speeds),
            "gpu_memory": _gpu_data(self.gpu),
        }
        if self.shared:
            out["shared"] = list(self.shared)
        return out


def speed_data(found: Speeds | None) -> dict[str, Data]:
    """The speed model's keys of a JSON document (nulls where the device states no bandwidth)."""
    if found is None:
        return {"predicted_tokens_per_s": None, "predicted_full_context_tokens_per_s": None, "predicted": None,
                "predicted_full_context": None}
    return found.as_dict()


def _gpu_data(gpu: GpuMemory | None) -> dict[str, Data] | None:
    if gpu is None:
        return None
    return {key: {"mib": value.mib, "origin": value.origin}
            for key, value in (("scheduler_request", gpu.scheduler), ("hami_cap", gpu.hami_cap),
                               ("engine_budget", gpu.engine_budget))}


def _fit_data(fit: Fit) -> dict[str, Data]:
    """The fit's JSON, each part saying where its figure comes from: measured, calibrated, computed or assumed."""
    out = fit.as_dict()
    out["parts"] = [{**asdict(p), "basis": basis_of(p.component, p.note)} for p in fit.parts]
    return out


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


def explain_data(resolved: Resolved, catalog: Catalog, measured: Measured | None = None) -> Explanation:
    """`measured`: the speed to hold against the roofline (the CLI passes the ledger's last pass when it is newer);
    by default the app's latest benchmark."""
    spec = plan(resolved)
    resolved = spec.resolved  # sized by the fit when the app leaves its GPU memory out
    engine = spec.engine
    settings = spec.settings  # read once by the plan
    env, overridden = _env(engine)
    app = resolved.app
    measured = measured or Measured.of_benchmark(app)
    read = reading(resolved, measured, settings=settings)
    acceptance = measured.acceptance if measured else None
    roof = read.roof if read else roofline(resolved, 0, acceptance=acceptance, settings=settings)
    full = roofline(resolved, settings.context.value or resolved.model.architecture.max_context, acceptance=acceptance,
                    settings=settings)
    return Explanation(app=app.name, title=app.title, status=app.status, stack=resolved.stack.id, image=engine.image,
                       command=engine.command, args=_args(engine), env=env, overridden_env=overridden,
                       genesis=_genesis(settings), fit=estimate(resolved, settings), roofline=roof,
                       roofline_full=full, reading=read, devices=device_plans(resolved) if resolved.targets else (),
                       speeds=speeds(resolved), gpu=spec.gpu,
                       shared=tuple(spec.shared.lines()) if spec.shared is not None else ())


def app_on_device(resolved: Resolved, device_id: str) -> DevicePlan:
    """`catalog explain APP --device DEVICE`: the app's plan on one device it targets (its own or one of `devices:`)."""
    found = device_plan(resolved, device_id)
    if found is None:
        known = ", ".join([resolved.device.id, *(t.device.id for t in resolved.targets)])
        raise UsageError(f"{resolved.app.name} does not target device {device_id!r}; it targets: {known} "
                         "(add it to the app's `devices:`)")
    return found


# ---- one card, several apps (`catalog explain --device DEVICE`) ------------------------------------------------

MAX_GROUPS = 50  # the largest groups shown; the JSON says when more were left out


@dataclass(frozen=True)
class CardApp:
    app: str
    gpu_mib: int  # its HAMi cap (nvidia.com/gpumem): what the card reserves for it
    sized: bool  # the fit set it (the app leaves gpu_memory_mib out)
    verdict: str
    room_mib: int  # memory it promises to leave (gpu_room), 0 if none
    room_for: str

    def to_data(self) -> dict[str, Data]:
        return {"app": self.app, "gpu_mib": self.gpu_mib, "sized": self.sized, "verdict": self.verdict,
                "room_mib": self.room_mib, "room_for": self.room_for}


@dataclass(frozen=True)
class CardPlan:
    """Which active apps of a device can hold their GPU memory on one card at the same time."""

    device: str
    name: str
    memory_mib: int
    apps: tuple[CardApp, ...]
    groups: tuple[tuple[str, ...], ...]  # maximal sets whose caps (and declared rooms) fit, largest first
    more: int  # maximal groups left out after MAX_GROUPS

    def alongside(self, app: str) -> list[str]:
        """The apps that fit on the card together with `app` (in at least one group)."""
        return sorted({other for g in self.groups if app in g for other in g if other != app})

    def to_data(self) -> dict[str, Data]:
        return {"device": self.device, "name": self.name, "memory_mib": self.memory_mib,
                "apps": [a.to_data() for a in self.apps], "groups": [list(g) for g in self.groups],
                "more_groups": self.more,
                "alongside": {a.app: list(self.alongside(a.app)) for a in self.apps}}


def _fits(members: list[CardApp], memory: int) -> bool:
    """The caps and the rooms the members declare (for their speech stacks) fit the card together."""
    return sum(a.gpu_mib + a.room_mib for a in members) <= memory


def _maximal_groups(apps: list[CardApp], memory: int) -> list[tuple[str, ...]]:
    """Every set of apps that fits and that no further app could join (depth-first, caps sorted, pruned)."""
    order = sorted(apps, key=lambda a: (a.gpu_mib, a.app))
    found: list[tuple[str, ...]] = []

    def grow(start: int, chosen: list[CardApp]) -> None:
        extended = False
        for i in range(start, len(order)):
            trial = chosen + [order[i]]
            if sum(a.gpu_mib for a in trial) > memory:
                break  # sorted by cap: every later app is at least as large
            if _fits(trial, memory):
                extended = True
                grow(i + 1, trial)
        if chosen and not extended and not any(_fits(chosen + [a], memory) for a in order if a not in chosen):
            found.append(tuple(sorted(a.app for a in chosen)))

    grow(0, [])
    return sorted(set(found), key=lambda g: (-len(g), g))


def card_plan(catalog: Catalog, device_id: str) -> CardPlan:
    device = catalog.devices.get(device_id)
    if device is None:
        raise UsageError(f"unknown device {device_id!r}; known: {', '.join(sorted(catalog.devices)) or 'none'}")
    apps = []
    for own in catalog.select():
        if own.app.status != "active":
            continue
        target = next((t for t in own.targets if t.device.id == device_id), None)
        if own.device.id != device_id and target is None:
            continue
        r = variant_on(own, device_id)
        if r is None:
            continue  # it targets the device but does not run there (`explain APP` says why)
        spec = plan(r)
        planned = spec.resolved
        verdict = estimate(planned, spec.settings).verdict
        if own.device.id != device_id:  # a `devices:` entry: judged against the card (fit/devices.py)
            verdict = judged_on_device(planned, verdict)[0]
        room = r.app.gpu_room
        apps.append(CardApp(r.app.name, cap_of(planned), r.app.gpu_memory_mib is None, verdict,
                            room.mib if room else 0, room.beside if room else ""))
    groups = _maximal_groups(apps, device.memory_mib)
    return CardPlan(device.id, device.name, device.memory_mib, tuple(apps), tuple(groups[:MAX_GROUPS]),
                    max(0, len(groups) - MAX_GROUPS))


__all__ = ["ArgLine", "CardApp", "CardPlan", "EnvLine", "Explanation", "PatchLine", "app_on_device", "card_plan",
           "explain_data", "speed_data"]
