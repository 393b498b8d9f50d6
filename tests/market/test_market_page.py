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
from support.bump import git
from support.market import make_store, png, serve, wait_for
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


def with_icons(store: Path) -> list[str]:
    """A PNG in catalog/icons/ for every app (the market serves them; the page shows them, no network needed)."""
    apps = [r.app.name for r in load_catalog(store / "catalog").select()]
    (store / "catalog" / "icons").mkdir(exist_ok=True)
    for n, name in enumerate(apps):
        (store / "catalog" / "icons" / f"{name}.png").write_bytes(png((20 * n % 256, 90, 160)))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "icons")
    return apps


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
    with_icons(store)
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
    with_icons(store)
    out = tmp_path / "site"
    code, stdout, err = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"),
                                "--base-url", "https://market.example.invalid")
    assert code == 0, err
    apps = [r.app.name for r in load_catalog(store / "catalog").select()]
    assert f"{len(apps)} apps, {2 * len(apps)} plots; {1 + 3 * len(apps)} file(s) written" in stdout
    html = (out / "index.html").read_text()
    assert "https://market.example.invalid/api/v1/applications/" in html
    with chromium(tmp_path / "chromium") as page:
        loaded = page.load((out / "index.html").as_uri())
        assert loaded.errors == [], loaded.errors
        done = page.evaluate("[...document.images].filter(i => i.complete && i.naturalWidth > 0).length")
        assert done == 3 * len(apps)  # two plots and the icon of each app
    code, stdout, _ = run_cli(capsys, "site", "--out", str(out), "--catalog", str(store / "catalog"),
                              "--base-url", "https://market.example.invalid")
    assert code == 0 and "0 file(s) written" in stdout  # deterministic SVG and HTML


LAYOUT = """(() => {
    const out = {scroll: document.documentElement.scrollWidth, width: document.documentElement.clientWidth,
                 cards: []};
    for (const card of document.querySelectorAll('article.app')) {
        const box = e => e.getBoundingClientRect();
        const c = box(card), facts = box(card.querySelector('.facts'));
        const speed = box(card.querySelector('figure.speed')), fit = box(card.querySelector('figure.fit'));
        const icon = card.querySelector('img.icon');
        out.cards.push({app: card.dataset.app, card: [c.left, c.top, c.width, c.height],
                        facts: [facts.left, facts.top, facts.width, facts.height],
                        speed: [speed.left, speed.top, speed.width, speed.height],
                        fit: [fit.left, fit.top, fit.width, fit.height],
                        icon: icon ? [icon.getAttribute('src'), icon.complete && icon.naturalWidth > 0] : null});
    }
    return out;
})()"""


def test_the_page_layout_at_1400_and_800_px(tmp_path, capsys, rendered_market):
    """At 1400 px both plots sit beside the facts on one row and a card is no taller than its tallest part
    (no big empty space); at 800 px nothing is wider than the window (no horizontal scroll). Each card shows
    the app's icon, served by the market."""
    chromium_binary()
    store = make_store(tmp_path / "store", rendered_market)
    apps = with_icons(store)
    with serve(store / "catalog", tmp_path) as served, chromium(tmp_path / "chromium") as page:
        for width in (1400, 800):
            page.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1,
                      mobile=False)
            loaded = page.load(served.url + "/")
            assert loaded.errors == [], loaded.errors
            got = page.evaluate(LAYOUT)
            assert sorted(c["app"] for c in got["cards"]) == sorted(apps)
            assert got["scroll"] <= got["width"], f"horizontal scroll at {width} px: {got['scroll']} > {got['width']}"
            for c in got["cards"]:
                assert c["icon"] == [f"icons/{c['app']}.png", True], c
                card, facts, speed, fit = c["card"], c["facts"], c["speed"], c["fit"]
                assert card[0] + card[2] <= got["width"] + 0.5, c
                if width == 1400:
                    assert abs(speed[1] - fit[1]) < 1 and abs(speed[1] - facts[1]) < 1, c  # one row
                    assert facts[0] + facts[2] <= speed[0] and speed[0] + speed[2] <= fit[0], c
                    tallest = max(facts[3], speed[3], fit[3])
                    assert card[3] <= tallest + 40, f"{c['app']}: card {card[3]:.0f} px for parts of {tallest:.0f}"
                else:
                    assert speed[0] + speed[2] <= card[0] + card[2] + 0.5 and fit[0] + fit[2] <= card[0] + card[2] + 0.5
        page.screenshot(tmp_path / "store-800.png", width=800)


def test_a_new_store_page_shows_the_apps_icon_urls(tmp_path, rendered_market):
    """Without an icons folder (a new store), each card shows the icon its manifest names (what Olares shows)."""
    from generator.market.history import no_ledger
    from generator.market.server import Sources, build
    from generator.market.source import PackageCache

    store = make_store(tmp_path / "store", rendered_market)
    built = build(Sources(store / "catalog", store / "charts", no_ledger), PackageCache())
    cat = load_catalog(store / "catalog")
    for r in cat.select():
        assert f'<img class="icon" src="{r.app.icon}"' in built.page.html


def test_the_store_page_shows_the_predicted_speed_beside_the_measured(tmp_path, rendered_market):
    """issue 41: each active card on a device with a bandwidth says what the speed model predicts there, and the
    measured figure beside it where the app has a benchmark."""
    from generator.fit.speed import speeds
    from generator.market.history import no_ledger
    from generator.market.server import Sources, build
    from generator.market.source import PackageCache

    store = make_store(tmp_path / "store", rendered_market)
    for device in (store / "catalog" / "devices").glob("*.yaml"):  # the fixture's cards state no bandwidth
        if "memory_bandwidth_gb_s" not in device.read_text():
            device.write_text(device.read_text() + "memory_bandwidth_gb_s: 896\n")
    built = build(Sources(store / "catalog", store / "charts", no_ledger), PackageCache())
    checked = 0
    for r in load_catalog(store / "catalog").select():
        found = speeds(r) if r.app.status == "active" else None
        if found is None or found.short.tokens_per_s is None:
            continue
        checked += 1
        assert f'{r.device.name}: {found.short.tokens_per_s:.0f} tokens/s' in built.page.html
        bench = r.app.last_benchmark
        if bench is not None:
            assert f"measured {bench.tokens_per_s:.1f}" in built.page.html
    assert checked
