"""How often an app's engine argv is built (issue 35 "Resolve once"), counted on a fixture catalog.

The chart plan sizes the app (generator/fit/sizing.py `sized`, which returns the `Sized` that `engine_for`, the memory
models and `estimate` alone accept, so the engine cannot be built or fitted before the sizing by type; `cap_of` reads
its GPU memory where eleven asserts "size the app first" stood), builds its argv and reads its settings once
(`ChartSpec.settings`); the rules and `catalog explain`'s fit report and roofline read those instead of building
again. What is left: an app that leaves its GPU memory out is built twice, once on a provisional cap that the
sizing reads its settings from and once with the cap it gets (the argv carries the cap: the HAMi limit, vLLM's
utilization, SGLang's pool), and `catalog explain`'s speed model and device plans build their own.
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.catalog import Catalog, load_catalog
from generator.chart.plan import plan
from generator.engines.family import FAMILIES
from generator.fit.roofline import reading, roofline
from generator.rules import context, run_rules

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every engine build, counted per app: each family module's `build` (engines/base.py) wrapped in place."""
    counted: Counter[str] = Counter()
    for name in FAMILIES:
        module = importlib.import_module(f"generator.engines.{name}")
        original: Callable = module.build  # type: ignore[attr-defined]

        def counting(r, own, original=original):  # type: ignore[no-untyped-def]
            counted[r.app.name] += 1
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


def test_render_builds_a_stated_app_once_and_a_sized_one_twice(catalog: Catalog, builds: Counter[str]) -> None:
    for r in catalog.select():
        plan(r)
    assert catalog.apps["gemmalab"].app.gpu_memory_mib is not None
    assert builds == {"gemmalab": 1, "qwenvisionlab": 1, "qwenlab": 2}, builds


def test_the_rules_and_the_roofline_read_the_plan(catalog: Catalog, builds: Counter[str]) -> None:
    """The rules take the plan's engine and settings, and a roofline given the plan's settings builds nothing."""
    for name in ("gemmalab", "qwenlab"):
        ctx = context(catalog.apps[name], catalog)
        planned = builds[name]
        run_rules(ctx)  # FIT001's advice tries other caps and contexts: those are new engines, not this one
        spec = ctx.chart
        before = builds[name]
        roof = roofline(spec.resolved, 4096, settings=spec.settings)
        assert roof is not None and roof.context == 4096
        assert reading(spec.resolved, None, settings=spec.settings) is None
        assert builds[name] == before, f"{name}: the roofline built the engine again"
        assert planned == (1 if name == "gemmalab" else 2)
        # without the plan's settings the roofline builds its own, and finds the same figures
        assert dataclasses.asdict(roofline(spec.resolved, 4096) or roof) == dataclasses.asdict(roof)
        assert builds[name] == before + 1
