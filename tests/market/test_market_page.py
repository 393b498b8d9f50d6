"""The store page in a real headless Chromium: it loads without a console error or a failed request, shows
every app of the catalog grouped by model with its two plots, and its ledger figures come from real smokes.

The ledger rows are made by `catalog smoke` against a real llama.cpp llama-server (tiny GGUFs, as in
tests/test_smoke_llama.py). A screenshot is kept in the test's tmp folder (docs/img/store.png is one).
Skipped, with the reason, when Debian's chromium is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from support.bump import run_cli
from support.chromium import chromium, chromium_binary
from support.market import make_store, serve, wait_for
from support.smoke import llama_server, write_models

from generator.catalog import load_catalog
from generator.smoke.ledger import history

SMOKED = "llamacppqwen36mtpone"
CONTEXT = 131072  # the app's context; a tiny model's KV for it is ~134 MB


def smoke(capsys, catalog: Path, url: str) -> dict:
    code, out, err = run_cli(capsys, "smoke", SMOKED, "--endpoint", url, "--catalog", str(catalog), "--runs", "2",
                             "--max-tokens", "24", "--timeout", "60", "--tolerance", "0.95", "--json")
    assert code in (0, 1), err
    return json.loads(out)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama")
    with llama_server(write_models(folder, context=CONTEXT), aliases=["qwen3.6-27b-mtp"], context=CONTEXT,
                      log_dir=folder) as server:
        yield server


@pytest.mark.needs_llama_server
def test_the_store_page_in_chromium(tmp_path, llama, capsys, rendered_market):
    chromium_binary()  # skip early, with the reason, when chromium is absent
    store = make_store(tmp_path / "store", rendered_market)
    catalog = store / "catalog"
    first = smoke(capsys, catalog, llama.url)
    assert first["tokens_per_s"] and first["tokens_per_s"] > 0
    apps = [r.app.name for r in load_catalog(catalog).select()]
    with serve(catalog, tmp_path) as served:
        generation = served.health()["generation"]
        second = smoke(capsys, catalog, llama.url)  # a new ledger row while serving: the page follows
        wait_for(lambda: served.health()["generation"] > generation)
        assert len(history(catalog, SMOKED)) == 2
        with chromium(tmp_path / "chromium") as page:
            loaded = page.load(served.url + "/")
            assert loaded.errors == [], loaded.errors
            facts = page.evaluate("""(() => {
                const out = {};
                for (const card of document.querySelectorAll('article.app')) {
                    const imgs = [...card.querySelectorAll('figure img')];
                    out[card.dataset.app] = {
                        model: card.closest('section.model').id,
                        plots: imgs.map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0]),
                        smoke: card.querySelector('dd.smoke').textContent,
                    };
                }
                return out;
            })()""")
            shot = page.screenshot(tmp_path / "store.png")
        assert sorted(facts) == sorted(apps)
        cat = load_catalog(catalog)
        for name, card in facts.items():
            assert card["model"] == f"model-{cat.apps[name].model.id}"
            assert card["plots"] == [[f"plots/{name}-speed.svg", True], [f"plots/{name}-fit.svg", True]], name
        text = facts[SMOKED]["smoke"]
        assert second["verdict"] in text and f"{second['tokens_per_s']:.1f} tokens/s" in text
        assert "(2 in the ledger)" in text
        assert all(facts[a]["smoke"].startswith("no smoke yet") for a in apps if a != SMOKED)
        svg = served.get(f"/plots/{SMOKED}-speed.svg")
        assert svg.headers["content-type"].startswith("image/svg+xml")
        ElementTree.fromstring(svg.content)  # well-formed SVG
        assert b"smoke: " in svg.content and b"recorded benchmark" in svg.content
        assert served.get(f"/plots/{SMOKED}-fit.svg").status_code == 200
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000


def test_the_static_site_loads_and_is_rewritten_only_when_it_changes(tmp_path, capsys, rendered_market):
    chromium_binary()
    store = make_store(tmp_path / "store", rendered_market)
    out = tmp_path / "site"
    code, stdout, err = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"),
                                "--base-url", "https://market.example.invalid")
    assert code == 0, err
    apps = [r.app.name for r in load_catalog(store / "catalog").select()]
    assert f"{len(apps)} apps, {2 * len(apps)} plots; {1 + 2 * len(apps)} file(s) written" in stdout
    html = (out / "index.html").read_text()
    assert "https://market.example.invalid/api/v1/applications/" in html
    with chromium(tmp_path / "chromium") as page:
        loaded = page.load((out / "index.html").as_uri())
        assert loaded.errors == [], loaded.errors
        done = page.evaluate("[...document.images].filter(i => i.complete && i.naturalWidth > 0).length")
        assert done == 2 * len(apps)
    code, stdout, _ = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"),
                              "--base-url", "https://market.example.invalid")
    assert code == 0 and "0 file(s) written" in stdout  # deterministic SVG and HTML
