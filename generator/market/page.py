"""The store page: every app of the catalog grouped by model, with what a store owner checks before a user
installs it — status, the version served, context, GPU memory, engine, the last smoke — and two plots per app
(tokens/s history from the smoke ledger and the recorded benchmarks; where the GPU memory goes, from the fit).

Built once per rebuild of the server (never on a request) and written as files by `catalog site --out DIR`:
`index.html` and `plots/<app>-speed.svg`, `plots/<app>-fit.svg`, linked relatively so both work the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment

from generator.catalog import Catalog, Resolved, load_catalog
from generator.chart.plan import plan
from generator.core.errors import CatalogError
from generator.fit.estimate import estimate
from generator.fit.sizing import sized
from generator.market.history import LedgerReader, SmokePoint
from generator.market.plots import BenchmarkPoint, fit_svg, speed_svg
from generator.publish.market import MarketBuild, write_if_changed


@dataclass(frozen=True)
class AppCard:
    name: str
    title: str
    status: str
    catalog_version: str
    served_version: str | None  # the version the market lists (None: not served)
    chart_file: str | None
    context: int
    gpu_mib: int
    engine: str
    stack: str
    image: str
    fit: str  # the fit's one-line summary
    fit_verdict: str
    last_smoke: SmokePoint | None
    smokes: int
    benchmark: BenchmarkPoint | None
    speed_plot: str  # plot file names under plots/
    fit_plot: str


@dataclass(frozen=True)
class ModelGroup:
    model_id: str
    name: str
    params: str
    cards: tuple[AppCard, ...]


@dataclass(frozen=True)
class StorePage:
    html: str
    plots: dict[str, bytes] = field(default_factory=dict)
    apps: tuple[str, ...] = ()


def _benchmarks(r: Resolved) -> list[BenchmarkPoint]:
    ordered = sorted(r.app.benchmarks, key=lambda b: b.date)
    return [BenchmarkPoint(b.date, b.tokens_per_s, b.image or b.method) for b in ordered]


def _card(r: Resolved, build: MarketBuild, smokes: Sequence[SmokePoint], plots: dict[str, bytes]) -> AppCard:
    r = sized(r)  # an app may leave gpu_memory_mib to the fit (generator/fit/sizing.py)
    spec = plan(r)
    fit = estimate(r, spec.engine)
    served = next((e for e in build.entries if e.summary.name == r.app.name), None)
    benchmarks = _benchmarks(r)
    speed, fitp = f"{r.app.name}-speed.svg", f"{r.app.name}-fit.svg"
    plots[speed] = speed_svg(r.app.name, smokes, benchmarks)
    plots[fitp] = fit_svg(fit)
    return AppCard(
        name=r.app.name, title=r.app.title, status=r.app.status, catalog_version=r.app.version,
        served_version=str(served.summary.version) if served else None,
        chart_file=served.detail.chartName if served else None, context=fit.context, gpu_mib=fit.cap_mib,
        engine=r.stack.engine, stack=r.stack.title, image=spec.engine.image, fit=fit.summary(), fit_verdict=fit.verdict,
        last_smoke=smokes[-1] if smokes else None, smokes=len(smokes), benchmark=benchmarks[-1] if benchmarks else None,
        speed_plot=speed, fit_plot=fitp,
    )


def _groups(cat: Catalog, build: MarketBuild, ledger: LedgerReader, plots: dict[str, bytes]) -> list[ModelGroup]:
    by_model: dict[str, list[AppCard]] = {}
    for r in cat.select():
        by_model.setdefault(r.model.id, []).append(_card(r, build, list(ledger(cat.root, r.app.name)), plots))
    groups = []
    for model_id, cards in by_model.items():
        model = cat.models[model_id]
        arch = model.architecture
        params = (f"{arch.total_params_b:g}B" if arch.total_params_b == arch.active_params_b
                  else f"{arch.total_params_b:g}B total, {arch.active_params_b:g}B active")
        order = {"active": 0, "deprecated": 1, "removed": 2}
        groups.append(ModelGroup(model_id, model.name, params,
                                 tuple(sorted(cards, key=lambda c: (order.get(c.status, 3), c.name)))))
    return sorted(groups, key=lambda g: g.name.lower())


def store_page(catalog_root: Path, build: MarketBuild, ledger: LedgerReader, *, source_url: str | None,
               chart_base: str | None, problems: Sequence[str] = ()) -> StorePage:
    """The page and its plots. `source_url`: the URL a user adds in Olares; `chart_base`: where chart downloads
    are linked (`""` for the live page: relative links; None: no links)."""
    plots: dict[str, bytes] = {}
    errors = list(problems)
    try:
        cat = load_catalog(catalog_root)
        groups = _groups(cat, build, ledger, plots)
    except CatalogError as exc:
        groups = []
        errors.append(f"the store page cannot read the catalog: {exc}")
    html = _TEMPLATE.render(build=build, groups=groups, problems=errors, source_url=source_url, chart_base=chart_base,
                            apps=sum(len(g.cards) for g in groups))
    return StorePage(html, plots, tuple(c.name for g in groups for c in g.cards))


def write_site(page: StorePage, out: Path) -> list[Path]:
    """index.html and plots/*.svg under `out`, each written only when it changed; returns what was written."""
    written = []
    if write_if_changed(out / "index.html", page.html):
        written.append(out / "index.html")
    for name, svg in sorted(page.plots.items()):
        if write_if_changed(out / "plots" / name, svg.decode("utf-8")):
            written.append(out / "plots" / name)
    return written


_ENV = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
_TEMPLATE = _ENV.from_string("""\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Olares Market Source: {{ apps }} apps</title>
<link rel="icon" href="data:,">
<style>
body { font-family: "DejaVu Sans", system-ui, sans-serif; margin: 0; color: #212121; background: #f5f5f5; }
header { background: #263238; color: #fff; padding: 16px 24px; }
header h1 { margin: 0 0 6px; font-size: 20px; }
header p { margin: 2px 0; font-size: 13px; color: #cfd8dc; }
header code { color: #fff; }
main { padding: 8px 24px 32px; }
section.model > h2 { font-size: 17px; margin: 22px 0 8px; border-bottom: 1px solid #cfd8dc; padding-bottom: 4px; }
section.model > h2 small { font-weight: normal; color: #607d8b; font-size: 13px; }
.cards { display: flex; flex-direction: column; gap: 10px; }
article.app { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 10px 12px;
  display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: flex-start; }
article.app .facts { flex: 0 1 420px; min-width: 320px; }
article.app h3 { margin: 0 0 4px; font-size: 15px; }
article.app h3 code { font-size: 12px; color: #607d8b; font-weight: normal; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0; font-size: 12.5px; }
dt { color: #607d8b; } dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 9px; font-size: 11px; color: #fff; }
.active { background: #2e7d32; } .deprecated { background: #ef6c00; } .removed { background: #757575; }
.pass { color: #2e7d32; font-weight: bold; } .regression { color: #ef6c00; font-weight: bold; }
.fail, .error { color: #c62828; font-weight: bold; } .suspect { color: #6a1b9a; font-weight: bold; } .FIT { color: #2e7d32; } .TIGHT { color: #ef6c00; } .FAIL { color: #c62828; }
figure { margin: 0; flex: 0 1 auto; } figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 11px; color: #757575; }
.problems { background: #fff3e0; border: 1px solid #ffb74d; padding: 8px 12px; margin: 12px 0; font-size: 13px; }
</style>
</head>
<body>
<header>
<h1>Olares Market Source</h1>
{% if source_url %}<p>Add this source in Olares: Market &rarr; Settings &rarr; Add source &rarr; <code id="source-url">{{ source_url }}</code></p>{% endif %}
<p>{{ build.entries | length }} apps served &middot; {{ build.charts | length }} chart packages &middot; hash <code id="market-hash">{{ build.hash }}</code> &middot; last release {{ build.last_updated[:10] }}</p>
</header>
<main>
{% if problems %}
<div class="problems" id="problems"><strong>Not served:</strong>
<ul>{% for p in problems %}<li>{{ p }}</li>{% endfor %}</ul></div>
{% endif %}
{% for g in groups %}
<section class="model" id="model-{{ g.model_id }}">
<h2>{{ g.name }} <small>{{ g.params }} &middot; {{ g.cards | length }} app{{ "s" if g.cards | length != 1 }}</small></h2>
<div class="cards">
{% for c in g.cards %}
<article class="app" id="app-{{ c.name }}" data-app="{{ c.name }}">
<div class="facts">
<h3>{{ c.title }} <code>{{ c.name }}</code> <span class="badge {{ c.status }}">{{ c.status }}</span></h3>
<dl>
<dt>version</dt><dd>{% if c.served_version %}{{ c.served_version }}{% if chart_base is not none %} &middot; <a href="{{ chart_base }}api/v1/applications/{{ c.name }}/chart?fileName={{ c.chart_file }}">{{ c.chart_file }}</a>{% endif %}{% else %}{{ c.catalog_version }} (not served){% endif %}</dd>
<dt>engine</dt><dd>{{ c.engine }} &middot; {{ c.stack }} <code>{{ c.image }}</code></dd>
<dt>context</dt><dd>{{ "{:,}".format(c.context) }} tokens</dd>
<dt>GPU memory</dt><dd>{{ "{:,}".format(c.gpu_mib) }} MiB &middot; <span class="{{ c.fit_verdict }}">{{ c.fit }}</span></dd>
<dt>last smoke</dt><dd class="smoke">{% if c.last_smoke %}<span class="{{ c.last_smoke.verdict }}">{{ c.last_smoke.verdict }}</span>{% if c.last_smoke.tokens_per_s is not none %} &middot; {{ "%.1f" | format(c.last_smoke.tokens_per_s) }} tokens/s{% endif %} &middot; {{ c.last_smoke.when.strftime("%Y-%m-%d %H:%M") }} UTC &middot; chart {{ c.last_smoke.chart_version }} ({{ c.smokes }} in the ledger){% else %}no smoke yet{% endif %}{% if c.benchmark %}; recorded benchmark {{ "%.1f" | format(c.benchmark.tokens_per_s) }} tokens/s ({{ c.benchmark.date }}){% endif %}</dd>
</dl>
</div>
<figure class="speed"><img src="plots/{{ c.speed_plot }}" alt="tokens/s history of {{ c.name }}"><figcaption>tokens/s: smokes from the ledger, recorded benchmarks</figcaption></figure>
<figure class="fit"><img src="plots/{{ c.fit_plot }}" alt="GPU memory fit of {{ c.name }}"><figcaption>where the GPU memory goes (the fit's parts per pool)</figcaption></figure>
</article>
{% endfor %}
</div>
</section>
{% endfor %}
</main>
</body>
</html>
""")  # noqa: E501 (HTML lines)

__all__ = ["AppCard", "ModelGroup", "StorePage", "store_page", "write_site"]
