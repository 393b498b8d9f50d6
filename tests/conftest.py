"""Fixtures shared by the test modules. Helpers that are not fixtures live in tests/support/; the test tiers
(`needs_llama_server`, `slow`, CATALOG_REQUIRE_ALL) are the hooks of support/tiers.py, imported here.

Logic tests work on copies of the frozen market fixture (tests/fixtures/market/, see support/catalogs.py), never
on the live catalog/: the autouse `no_embedded_catalog` points the tool's default catalog at a folder that does
not exist, so a test that forgets `--catalog` fails with "not a catalog". Only the tests marked
`embedded_catalog` (tests/test_embedded_catalog.py) see the live catalog/ and charts/.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.bump import make_recorded
from support.catalogs import MARKET, MARKET_CATALOG
from support.flags import CACHE, SCRIPTS, run_script
from support.tiers import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_deselected,
    pytest_runtest_logreport,
    pytest_runtest_setup,
    pytest_sessionfinish,
    pytest_terminal_summary,
)


@pytest.fixture(scope="session")
def _unreachable_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embedded-catalog-is-only-for-test_embedded_catalog") / "catalog"


@pytest.fixture(scope="session", autouse=True)
def _flag_table_cache(tmp_path_factory: pytest.TempPathFactory):
    """The parsed-flag-table cache (generator/flags/cache.py) of every test and every process a test starts lives
    in a session folder, never in the home of the machine running the tests."""
    import os

    old = os.environ.get("CATALOG_CACHE_DIR")
    os.environ["CATALOG_CACHE_DIR"] = str(tmp_path_factory.mktemp("catalog-cache"))
    yield
    if old is None:
        os.environ.pop("CATALOG_CACHE_DIR", None)
    else:
        os.environ["CATALOG_CACHE_DIR"] = old


@pytest.fixture(autouse=True)
def no_embedded_catalog(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                        _unreachable_catalog: Path) -> None:
    """The default catalog (no --catalog) is unreachable outside tests marked `embedded_catalog`."""
    if request.node.get_closest_marker("embedded_catalog") is None:
        import generator.catalog

        monkeypatch.setattr(generator.catalog, "EMBEDDED", _unreachable_catalog)
        # Discovery walks up from the current folder (the repository, whose catalog/ is the live one) unless
        # CATALOG_DIR names one: name the unreachable folder, so a command without --catalog fails loudly.
        monkeypatch.setenv("CATALOG_DIR", str(_unreachable_catalog))


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    """A private copy of the market fixture's catalog in tmp_path/catalog (charts render to tmp_path/charts)."""
    dest = tmp_path / "catalog"
    shutil.copytree(MARKET_CATALOG, dest)
    return dest


@pytest.fixture(scope="session")
def rendered_market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The market fixture with its charts, rendered once per session: ROOT/{catalog, charts, CHANGELOG.md}."""
    from generator.cli import main

    root = tmp_path_factory.mktemp("market")
    shutil.copytree(MARKET_CATALOG, root / "catalog")
    shutil.copy(MARKET / "CHANGELOG.md", root / "CHANGELOG.md")
    assert main(["render", "--catalog", str(root / "catalog")]) == 0
    return root


@pytest.fixture
def rendered_copy(rendered_market: Path, tmp_path: Path) -> Path:
    """A private copy of `rendered_market`: tmp_path/{catalog, charts, CHANGELOG.md}; returns the catalog."""
    for item in rendered_market.iterdir():
        dest = tmp_path / item.name
        shutil.copytree(item, dest) if item.is_dir() else shutil.copy(item, dest)
    return tmp_path / "catalog"


@pytest.fixture(scope="session")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three apps of the market fixture, rendered, every app's current content recorded (support/bump.py)."""
    return make_recorded(tmp_path_factory.mktemp("recorded"))


@pytest.fixture
def recorded(recorded_template: Path, tmp_path: Path) -> Path:
    """A private copy of the recorded template: tmp_path/{catalog, charts, CHANGELOG.md}; returns the catalog."""
    for item in recorded_template.iterdir():
        dest = tmp_path / item.name
        shutil.copytree(item, dest) if item.is_dir() else shutil.copy(item, dest)
    return tmp_path / "catalog"


@pytest.fixture(scope="session")
def vllm_0_19_1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """vllm 0.19.1 -> catalog/flags format, from the release wheel (downloaded once into the cache: `slow`)."""
    out = tmp_path_factory.mktemp("vllm")
    run_script(str(SCRIPTS / "vllm_flags.py"), "--version", "0.19.1", "--table", "vllm-0-19-1",
               "--image", "vllm/vllm-openai:v0.19.1-cu130", "--cache", str(CACHE / "vllm-wheels"), "--out", str(out))
    return out / "vllm-0-19-1.yaml"
