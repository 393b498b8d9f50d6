"""How often an app's engine argv is built (issue 35 "Resolve once"), counted on fixture catalogs.

A family decides the app's settings as typed values from its fields, its stack's args and its extra_args
(`FAMILY.decide`, generator/engines/settings.py `decided`: no argv is built or read); the sizing (generator/fit/sizing.py
`sized`) fits those settings under a provisional cap and returns the `Sized` app that `engine_for`, `decided`, the memory
models and `estimate` alone accept; the chart plan then builds the argv once per accelerator mode from the sized app
and keeps the decided settings (`ChartSpec.settings`), which the rules, `catalog explain`'s fit report and roofline,
and the device plans read. The argv reader (engines/settings.py `settings_for`) stays for charts someone else wrote
(the importer) and here, where it checks that what a family decides is what the argv it builds says.
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.catalog import Catalog, load_catalog
from generator.chart.plan import plan
from generator.check.explain import explain_data
from generator.engines import engine_for
from generator.engines.family import FAMILIES
from generator.engines.settings import decided, settings_for
from generator.fit.devices import device_plans
from generator.fit.roofline import reading, roofline
from generator.fit.sizing import size_gpu, sized
from generator.rules import context, run_rules

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE = FIXTURES / "catalog_small"
SPEED = "generator/fit/speed.py"  # the speed model: it reads the decided settings and builds no argv


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every engine build, counted per app: each family module's `build` (engines/base.py) wrapped in place."""
    counted: Counter[str] = Counter()
    for name in FAMILIES:
        module = importlib.import_module(f"generator.engines.{name}")
        original: Callable = module.build  # type: ignore[attr-defined]

        def counting(r, own, original=original):  # type: ignore[no-untyped-def]
            counted[r.app.name] += 1
            if any(frame.filename.endswith(SPEED) for frame in traceback.extract_stack()):
                counted[f"{r.app.name} in {SPEED}"] += 1
            return original(r, own)

        monkeypatch.setattr(module, "build", counting)
    yield counted


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    """The fixture catalog, with qwenlab's GPU memory left to the fit and the device's bandwidth stated (so that the
    roofline has something to bound)."""
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURE, cat)
    app = cat / "apps" / "qwenlab.yaml"
    app.write_text(app.read_text(encoding="utf-8").replace("gpu_memory_mib: 23000\n", ""), encoding="utf-8")
    device = cat / "devices" / "lab-4090.yaml"
    device.write_text(device.read_text(encoding="utf-8") + "memory_bandwidth_gb_s: 1008\n", encoding="utf-8")
    return load_catalog(cat)


def test_render_builds_each_app_once_stated_or_sized(catalog: Catalog, builds: Counter[str]) -> None:
    assert catalog.apps["gemmalab"].app.gpu_memory_mib is not None
    assert catalog.apps["qwenlab"].app.gpu_memory_mib is None  # sized by the fit, still built once
    for r in catalog.select():
        spec = plan(r)
        assert not spec.modes
    assert builds == {"gemmalab": 1, "qwenvisionlab": 1, "qwenlab": 1}, builds


def test_the_sizing_builds_no_argv(catalog: Catalog, builds: Counter[str]) -> None:
    r = catalog.apps["qwenlab"]
    sizing = size_gpu(r)
    planned = sized(r)
    assert planned.app.gpu_memory_mib == sizing.cap_mib
    assert decided(planned).context.value == r.app.context_length
    assert not builds, builds


def test_a_per_mode_chart_builds_once_per_mode(builds: Counter[str]) -> None:
    """catalog_devices targets devices of two accelerator modes: a per-mode chart builds the argv once per mode."""
    cat = load_catalog(FIXTURES / "catalog_devices")
    seen = 0
    for r in cat.select():
        before = builds[r.app.name]
        spec = plan(r, "olares-v3")
        assert builds[r.app.name] - before == 1 + len(spec.modes), (r.app.name, builds)
        seen += len(spec.modes)
    assert seen, "the fixture has an app with a second accelerator mode"


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.name.startswith("catalog_")))
def test_the_decided_settings_are_what_the_built_argv_says(fixture: str) -> None:
    """What a family decides from the app is what the engine reads from the argv the family builds from that app:
    the argv reader over the built argv, field for field (values and the flags they cite)."""
    cat = load_catalog(FIXTURES / fixture)
    for r in cat.select():
        planned = sized(r)
        assert decided(planned) == settings_for(planned, engine_for(planned)), r.app.name


def test_the_rules_the_roofline_and_the_device_plans_read_the_plan(catalog: Catalog, builds: Counter[str]) -> None:
    """The rules take the plan's engine and settings, FIT001's trials under other caps decide settings without an
    argv, a roofline given the plan's settings builds nothing, and a device plan builds nothing."""
    for name in ("gemmalab", "qwenlab"):
        ctx = context(catalog.apps[name], catalog)
        assert builds[name] == 1, (name, builds)
        run_rules(ctx)
        spec = ctx.chart
        roof = roofline(spec.resolved, 4096, settings=spec.settings)
        assert roof is not None and roof.context == 4096
        assert reading(spec.resolved, None, settings=spec.settings) is None
        # without the plan's settings the roofline decides its own, and finds the same figures
        assert dataclasses.asdict(roofline(spec.resolved, 4096) or roof) == dataclasses.asdict(roof)
        device_plans(catalog.apps[name])
        assert builds[name] == 1, f"{name}: built again after the plan: {builds}"


def test_explain_builds_the_argv_once(catalog: Catalog, builds: Counter[str]) -> None:
    """`catalog explain`: the plan builds the argv once; the rules, the fit report, the rooflines, the device plans
    and the speed model (fit/speed.py reads the decided settings) build none."""
    for name in ("gemmalab", "qwenlab"):
        explain_data(catalog.apps[name], catalog)
        assert builds[name] == 1, (name, builds)
        assert builds[f"{name} in {SPEED}"] == 0, (name, builds)


@pytest.mark.parametrize(("app", "extra", "flag", "value"), [
    ("gemmalab", "[--max-model-len, '8192', --kv-cache-dtype, fp8, --max-num-seqs, '4']", "--max-model-len", 8192),
    ("qwenlab", "[-c, '16384', -ctk, q8_0, -np, '2', --flash-attn, auto]", "-c", 16384),
])
def test_extra_args_override_what_the_family_decides(tmp_path: Path, app: str, extra: str, flag: str,
                                                    value: int) -> None:
    """A flag in extra_args overrides the family's own (the engine reads the last one), in the decided settings as in
    the argv: the context comes from extra_args, cited there, and the rest agrees with the read-back."""
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURE, cat)
    path = cat / "apps" / f"{app}.yaml"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("extra_args:")]
    path.write_text("\n".join([*lines, f"extra_args: {extra}", ""]), encoding="utf-8")
    planned = sized(load_catalog(cat).apps[app])
    s = decided(planned)
    assert s.context.value == value
    assert s.context.source is not None and s.context.source.flag == flag
    assert s.context.source.origin == "app.extra_args"
    assert s == settings_for(planned, engine_for(planned))
