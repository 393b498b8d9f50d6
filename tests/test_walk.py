"""The walk of one app through the render pass (issue 35 "Resolve once"): no climb back up, the sizing visited once.

The render of an app is traced (`sys.setprofile`, here only) and every call into a module of `generator/` whose
arguments hold the app's objects is recorded: the `Resolved` app the test hands in and everything derived from it on
the way (each `Resolved`, `Sized`, `Settings`, `EngineSpec`, `ChartSpec` or `ModePlan` a recorded call returns), by
identity, an argument holding one itself or in one of its dataclass fields or items (one level down). A method's own
object (`self`) is not counted: the object answering about itself is not a hand-off.

Each recorded call has the callee's stage (tests/support/stages.py `STAGES`, ranked, the stages of
tests/test_architecture.py) and is one of:
- a **stay**: caller and callee are the same module (the "room");
- a **visit**: it enters the module from another one;
- a **climb back up**: it hands an object to a stage earlier than a stage that object was already handed to (the
  chart plan handing the app back to the fit after the chart stage had it).
A **return** is a recorded call that hands back one of the app's objects (a new one derived on the way, or one it was
given). The conductor (`CONDUCTORS`: the chart plan's `plan` and `_mode_plans`, the pipeline's `render_app`) hands
the app from stage to stage; being handed the app does not count as its stage having it, the calls it makes do.

The test asserts no climb and that the fit sizes each app once (`sized` or `size_gpu` of fit/sizing.py entered once
per sized app: the app, and each other accelerator mode's variant; none for an app that states its GPU memory). On
failure the walk is printed: per module its stays, visits (climbs included), climbs and returns, the totals, then every
climb with its caller and the stage the object had reached. docs/architecture.md "The walk" says how to read it.

"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import generator
from generator.catalog import Resolved, load_catalog
from generator.chart.pipeline import render_app
from generator.chart.plan import ChartSpec, ModePlan
from generator.engines.base import EngineSpec
from generator.engines.values import Settings
from support.sglang_app import APP, STACK
from support.stages import RANK

ROOT = Path(generator.__file__).resolve().parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
APP_TYPES = (Resolved, Settings, EngineSpec, ChartSpec, ModePlan)
CONDUCTORS = {("chart/plan.py", "plan"), ("chart/plan.py", "_mode_plans"), ("chart/pipeline.py", "render_app")}
SIZING = "fit/sizing.py"
SIZERS = ("sized", "size_gpu")  # its entries that size an app (the fit's searches also place trials through it)


def _stage(module: str) -> str:
    return "catalog" if module == "catalog.py" else module.split("/")[0]


@dataclass(frozen=True)
class Call:
    caller: str | None  # the nearest generator module below the callee on the stack (None: the test)
    callee: str  # generator/<module>, relative
    function: str
    kind: str  # stay | visit | climb
    why: str = ""  # a climb: the object and the stage it had reached


@dataclass
class Walk:
    calls: list[Call] = field(default_factory=list)
    returns: Counter[str] = field(default_factory=Counter)

    def of(self, kind: str) -> list[Call]:
        return [c for c in self.calls if c.kind == kind]

    def visits(self, module: str, functions: tuple[str, ...] = ()) -> int:
        """Calls entering `module` (of `functions` only, when given)."""
        return sum(1 for c in self.calls
                   if c.callee == module and c.kind != "stay" and (not functions or c.function in functions))

    def table(self) -> str:
        modules = sorted({c.callee for c in self.calls}, key=lambda m: (RANK[_stage(m)], m))
        rows = [f"{'module':32} {'stage':8} {'stays':>5} {'visits':>6} {'climbs':>6} {'returns':>7}"]
        for m in modules:
            kinds = Counter(c.kind for c in self.calls if c.callee == m)
            rows.append(f"{m:32} {_stage(m):8} {kinds['stay']:5} {kinds['visit'] + kinds['climb']:6} "
                        f"{kinds['climb']:6} {self.returns[m]:7}")
        total = Counter(c.kind for c in self.calls)
        rows.append(f"{len(modules)} rooms: {total['stay']} stays, {total['visit'] + total['climb']} visits, "
                    f"{total['climb']} climbs back up, {sum(self.returns.values())} returns")
        rows += [f"climb: {c.caller} -> {c.callee}:{c.function} ({c.why})" for c in self.of("climb")]
        return "\n".join(rows)


class Tracer:
    """Records the walk of the app's objects (module docstring); `sys.setprofile` for the duration of `run`."""

    def __init__(self, app: Resolved) -> None:
        self.walk = Walk()
        self.objects: dict[int, object] = {}  # id -> object, kept alive so that no id is reused
        self.reached: dict[int, int] = {}  # id -> the highest stage rank it was handed to
        self.open: dict[int, tuple[str, bool]] = {}  # frame id -> (module, held the app's objects)
        self._track(app)

    def _track(self, obj: object) -> None:
        if isinstance(obj, APP_TYPES) and id(obj) not in self.objects:
            self.objects[id(obj)] = obj
        elif isinstance(obj, tuple | list):
            for item in obj:
                if isinstance(item, (*APP_TYPES, tuple)):
                    self._track(item)

    def _held(self, value: object) -> list[object]:
        """The app's objects `value` holds: itself, its items, its dataclass fields (one level)."""
        inner: list[object] = [value]
        if isinstance(value, tuple | list):
            inner += list(value)
        elif isinstance(value, dict):
            inner += list(value.values())
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            inner += [getattr(value, f.name, None) for f in dataclasses.fields(value)]
        return [o for o in inner if id(o) in self.objects and self.objects[id(o)] is o]

    @staticmethod
    def _module(frame: FrameType | None) -> str | None:
        if frame is None:
            return None
        path = Path(frame.f_code.co_filename)
        try:
            return path.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            return None

    def _caller(self, frame: FrameType) -> tuple[str | None, str]:
        back = frame.f_back
        while back is not None and self._module(back) is None:
            back = back.f_back
        return (self._module(back), back.f_code.co_name) if back is not None else (None, "")

    def _args(self, frame: FrameType) -> list[object]:
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if names and names[0] in ("self", "cls"):
            names = names[1:]
        found: list[object] = []
        for name in names:
            found += self._held(frame.f_locals.get(name))
        return found

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            module = self._module(frame)
            if module is None:
                return
            held = self._args(frame)
            self.open[id(frame)] = (module, bool(held))
            if not held:
                return
            caller, caller_function = self._caller(frame)
            rank = RANK[_stage(module)]
            conductor = (module, frame.f_code.co_name) in CONDUCTORS
            kind, why = ("stay" if caller == module else "visit"), ""
            for obj in held:
                before = self.reached.get(id(obj), -1)
                if rank < before and kind == "visit" and (caller is None or _stage(caller) != _stage(module)):
                    kind = "climb"
                    why = f"a {type(obj).__name__} the {_stage_of(before)} stage already had"
                if not conductor:
                    self.reached[id(obj)] = max(before, rank)
            self.walk.calls.append(Call(caller, module, frame.f_code.co_name, kind, why))
        elif event == "return":
            opened = self.open.pop(id(frame), None)
            if opened is None or not opened[1]:
                return
            before = len(self.objects)
            self._track(arg)
            if len(self.objects) > before or self._held(arg):
                self.walk.returns[opened[0]] += 1

    def run(self, work: Callable[[], object]) -> Walk:
        sys.setprofile(self.profile)
        try:
            work()
        finally:
            sys.setprofile(None)
        return self.walk


def _stage_of(rank: int) -> str:
    return next(stage for stage, r in RANK.items() if r == rank)


def walk_of(app: Resolved, profile: str | None = None) -> Walk:
    return Tracer(app).run(lambda: render_app(app, profile))


def _assert_walk(walk: Walk, sized_apps: int) -> None:
    assert not walk.of("climb"), "the render pass climbs back up:\n" + walk.table()
    sizing = walk.visits(SIZING, SIZERS)
    assert sizing == sized_apps, (f"{SIZING} sizes {sizing} times, once per sized app expected ({sized_apps}):\n"
                                  + walk.table())


def _catalog(tmp_path: Path, fixture: str, market: str | None = None) -> dict[str, Resolved]:
    """A copy of a fixture catalog, with catalog_small's qwenlab leaving its GPU memory to the fit and `market` as the
    store's market.yaml when given."""
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURES / fixture, cat)
    app = cat / "apps" / "qwenlab.yaml"
    if app.is_file():
        app.write_text(app.read_text(encoding="utf-8").replace("gpu_memory_mib: 23000\n", ""), encoding="utf-8")
    if market is not None:
        (cat / "market.yaml").write_text(market, encoding="utf-8")
    return load_catalog(cat).apps


@pytest.mark.parametrize(("fixture", "name"), [
    ("catalog_small", "qwenlab"),  # llama.cpp, its GPU memory left to the fit
    ("catalog_small", "gemmalab"),  # vLLM, its GPU memory stated: nothing to size
    ("catalog_arch", "mambautil"),  # vLLM, its GPU memory left to the fit
])
def test_the_render_of_an_app_climbs_back_up_nowhere(tmp_path: Path, fixture: str, name: str) -> None:
    r = _catalog(tmp_path, fixture)[name]
    walk = walk_of(r)
    _assert_walk(walk, 1 if r.app.gpu_memory_mib is None else 0)
    assert walk.returns, walk.table()  # the tracer saw the stages hand their results back


def test_an_sglang_render_climbs_back_up_nowhere(tmp_path: Path) -> None:
    """SGLang's memory model plans the pool from the facts its settings carry (engines/sglang_facts.py),
    handed no app: the fit does not climb back to the engine's arithmetic (tests/support/sglang_app.py)."""
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURES / "catalog_small", cat)
    (cat / "stacks" / "sglang-test.yaml").write_text(STACK, encoding="utf-8")
    (cat / "apps" / "gemmasglang.yaml").write_text(APP.format(context=32768), encoding="utf-8")
    r = load_catalog(cat).apps["gemmasglang"]
    assert r.app.gpu_memory_mib is None
    _assert_walk(walk_of(r), 1)


@pytest.mark.parametrize("market", [None, "devices: [small-ada, big-unified, old-ampere]\nform: shared\n"])
def test_a_per_mode_render_climbs_back_up_nowhere(tmp_path: Path, market: str | None) -> None:
    """catalog_devices' `spread` targets devices of two accelerator modes: each mode's variant is sized once; in the
    shared form too, where the fit also finds the largest context each mode's device holds."""
    r = _catalog(tmp_path, "catalog_devices", market)["spread"]
    from generator.chart.plan import plan

    spec = plan(r, "olares-v3")
    assert spec.modes, "the fixture app has a second accelerator mode"
    assert (spec.shared is not None) == (market is not None)
    _assert_walk(walk_of(r, "olares-v3"), 1 + len(spec.modes))


def test_the_walk_sees_a_climb() -> None:
    """The tracer can fail: a pass that hands the planned app back to the fit after the chart had it is a climb."""
    from generator.chart.plan import plan
    from generator.fit.sizing import size_gpu

    r = load_catalog(FIXTURES / "catalog_devices").apps["plain"]

    def climbing() -> None:
        spec = plan(r)
        size_gpu(spec.resolved)  # the fit again, with the plan's app

    walk = Tracer(r).run(climbing)
    assert walk.of("climb"), walk.table()
