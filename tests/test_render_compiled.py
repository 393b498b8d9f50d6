"""The templates compiled ahead (templates/compiled/, generator/chart/render.py `compile_ahead`): current, used, and
never a cause of different output.

Real parts: Jinja's compiler and ModuleLoader, the market fixture's catalog planned and rendered both ways.
"""

from __future__ import annotations

import importlib
import json
import shutil

import jinja2
import pytest
from jinja2 import FileSystemLoader, ModuleLoader

from generator.catalog import load_catalog
from generator.chart.plan import plan

from support.catalogs import MARKET_CATALOG

rendering = importlib.import_module("generator.chart.render")  # the module (the package's `render` is the function)

STALE = "templates/compiled/ is stale: run `python scripts/compile_templates.py` and commit templates/compiled/"


@pytest.fixture
def fresh_environment():
    """The environment and the templates made again for this test, and again after it (both are cached)."""
    environment, templates = rendering.environment, rendering._templates  # the test may replace the module's names
    environment.cache_clear()
    templates.cache_clear()
    yield
    environment.cache_clear()
    templates.cache_clear()


def test_the_index_names_every_template_with_its_current_hash():
    kept = json.loads((rendering.COMPILED / "index.json").read_text(encoding="utf-8"))
    assert kept["templates"] == rendering._index()["templates"], STALE


def test_the_compiled_modules_are_what_the_compiler_makes_now(tmp_path):
    kept = json.loads((rendering.COMPILED / "index.json").read_text(encoding="utf-8"))
    if kept["jinja2"] != jinja2.__version__:
        pytest.skip(f"templates/compiled/ was made by Jinja {kept['jinja2']}, this is {jinja2.__version__}: render "
                    "compiles from source (the test below); regenerate when the project moves to this Jinja")
    rendering.compile_ahead(tmp_path)
    made = {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())}
    committed = {p.name: p.read_bytes() for p in sorted(rendering.COMPILED.iterdir()) if p.is_file()}
    assert made == committed, STALE


def test_render_loads_the_compiled_templates_and_renders_the_same_bytes(fresh_environment, monkeypatch):
    assert isinstance(rendering.environment().loader, ModuleLoader)
    cat = load_catalog(MARKET_CATALOG)
    specs = [plan(r, profile=profile) for r in cat.apps.values() for profile in ("olares-v2", "olares-v3")]
    compiled = [rendering.render(spec) for spec in specs]
    source = rendering.environment(from_source=True)
    assert isinstance(source.loader, FileSystemLoader)
    rendering._templates.cache_clear()
    monkeypatch.setattr(rendering, "environment", lambda: source)
    assert [rendering.render(spec) for spec in specs] == compiled


@pytest.mark.parametrize("change", ["template", "jinja", "missing"])
def test_a_stale_compiled_copy_is_not_used(change, fresh_environment, monkeypatch, tmp_path):
    copy = tmp_path / "compiled"
    shutil.copytree(rendering.COMPILED, copy, ignore=shutil.ignore_patterns("__pycache__"))
    index = json.loads((copy / "index.json").read_text(encoding="utf-8"))
    if change == "template":
        index["templates"]["owners.j2"] = "0" * 64  # owners.j2 edited since it was compiled
    elif change == "jinja":
        index["jinja2"] = "0.0.0"
    (copy / "index.json").write_text(json.dumps(index), encoding="utf-8")
    if change == "missing":
        (copy / "index.json").unlink()
    monkeypatch.setattr(rendering, "COMPILED", copy)
    assert isinstance(rendering.environment().loader, FileSystemLoader)
