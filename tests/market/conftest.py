"""Fixtures of the market-source tests: one store per module (a git repository holding the rendered market
fixture, tests/support/market.py `make_store`) and a real `catalog serve` of it on a loopback port. A module that
needs a different store (icons, a hostile chart) defines its own `store`; `served` then serves that one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.market import Served, make_store, serve


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, rendered_market: Path) -> Path:
    return make_store(tmp_path_factory.mktemp("store"), rendered_market)


@pytest.fixture(scope="module")
def served(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(store / "catalog", tmp_path_factory.mktemp("logs")) as server:
        yield server
