"""The store page: every app of the catalog grouped by model, with what a store owner checks before a user
installs it — status, the version served, context, GPU memory, engine, the last smoke — and two plots per app
(tokens/s history from the smoke ledger and the recorded benchmarks; where the GPU memory goes, from the fit).

Built once per rebuild of the server (never on a request) and written as files by `catalog site --out DIR`:
`index.html`, `plots/<app>-speed.svg`, `plots/<app>-fit.svg` and `icons/<app>.png` (the icons the market
serves), linked relatively so both work the same. Each card lists the version served in each manifest format,
with the Olares versions that get it (olares-v2 up to 1.12.5, olares-v3 from 1.12.6).

Layout: a card is a grid of three columns (facts, tokens/s plot, memory plot) wide enough for both plots beside
the facts at 1400 px; below 1100 px the plots go under the facts, side by side while they fit, and nothing is
wider than the window (tests/market/test_market_page.py measures both in Chromium).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment

from generator.catalog import Catalog, Resolved, load_catalog
from generator.chart.plan import plan
from generator.core import CatalogError
from generator.core import Lazy, Maker
from generator.fit import DevicePlan, device_plans
from generator.fit.estimate import estimate
from generator.fit import sized
from generator.market.history import LedgerReader, SmokePoint
from generator.market.plots import BenchmarkPoint, fit_svg, speed_svg
from generator.preset import Preset, page_preset
from generator.publish import MarketBuild, writable_below, write_if_changed


@dataclass(frozen=True)
class Served:
    """The version of an app one manifest format lists."""

    profile: str
    olares: str  # the Olares versions that get this format
    version: str
    chart_file: str


@dataclass(frozen=True)
class AppCard:
    name: str
    title: str
    status: str
    catalog_version: str
    served: tuple[Served, ...]  # per format, the newest first (empty: not served)
    icon: str  # the image shown: the market's own icon (icons/<app>.png), else the app's icon URL
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
    devices: tuple[DevicePlan, ...] = ()  # per device it targets, its own first (docs/devices.md); empty: one device
    predicted: tuple[Predicted, ...] = ()  # the speed model's figures per device it runs on (generator/fit/speed.py)
    preset: Preset | None = None  # the env values for Olares' own engine base (generator/preset/), or why not


@dataclass(frozen=True)
class Predicted:
    """The predicted decode speed on one device, beside what was measured there (the own device's benchmark)."""

    device: str
    short_tps: float | None
    full_tps: float | None
    full_context: int
    band: float
    measured_tps: float | None


@dataclass(frozen=True)
class ModelGroup:
    model_id: str
    name: str
    params: str
    cards: tuple[AppCard, ...]


@dataclass(frozen=True)
class StorePage:
    html: str
    plots: Mapping[str, bytes] = field(default_factory=dict)  # drawn on first read (the server: when first shown)
    apps: tuple[str, ...] = ()
    icons: dict[str, bytes] = field(default_factory=dict)  # icons/<name>.png of the static copy


def _benchmarks(r: Resolved) -> list[BenchmarkPoint]:
    ordered = sorted(r.app.benchmarks, key=lambda b: b.date)
    return [BenchmarkPoint(b.date, b.tokens_per_s, b.image or b.method) for b in ordered]


def _predicted(r: Resolved, devices: tuple[DevicePlan, ...]) -> tuple[Predicted, ...]:
    """Per device the app runs on (its own first): the predicted speeds, and the measured one on its own device."""
    from generator.fit import variant_on
    from generator.fit import speeds

    if r.app.status == "removed":
        return ()
    bench = r.app.last_benchmark
    out = []
    for device_id in [r.device.id, *(d.device for d in devices if not d.primary and d.runs)]:
        there = r if device_id == r.device.id else variant_on(r, device_id)
        found = speeds(there) if there is not None else None
        if found is not None:
            out.append(Predicted(there.device.name if there else device_id, found.short.tokens_per_s,
                                 found.full.tokens_per_s, found.full.context, found.short.band,
                                 bench.tokens_per_s if bench and device_id == r.device.id else None))
    return tuple(out)


def _served(name: str, builds: Mapping[str, MarketBuild]) -> tuple[Served, ...]:
    from generator.market.api import olares_range

    out = []
    for profile, build in builds.items():
        entry = next((e for e in build.entries if e.summary.name == name), None)
        if entry is not None:
            out.append(Served(profile, olares_range(profile), str(entry.summary.version), entry.detail.chartName))
    return tuple(out)


def _card(r: Resolved, builds: Mapping[str, MarketBuild], smokes: Sequence[SmokePoint],
          plots: dict[str, Maker], root: Path | None = None) -> AppCard:
    preset = page_preset(r, root) if root is not None and r.app.status == "active" else None
    devices = device_plans(r) if r.targets and r.app.status != "removed" else ()
    r = sized(r)  # an app may leave gpu_memory_mib to the fit (generator/fit/sizing.py)
    spec = plan(r)
    fit = estimate(r, spec.settings)
    icons = next(iter(builds.values())).icons if builds else {}
    benchmarks = _benchmarks(r)
    speed, fitp = f"{r.app.name}-speed.svg", f"{r.app.name}-fit.svg"
    name = r.app.name
    plots[speed] = lambda: speed_svg(name, smokes, benchmarks)  # drawn when first shown (core/lazy.py)
    plots[fitp] = lambda: fit_svg(fit)
    return AppCard(
        name=r.app.name, title=r.app.title, status=r.app.status, catalog_version=r.app.version,
        served=_served(r.app.name, builds),
        icon=f"icons/{r.app.name}.png" if r.app.name in icons else (r.app.icon or ""),
        context=fit.context, gpu_mib=fit.cap_mib,
        engine=r.stack.engine, stack=r.stack.title, image=spec.engine.image, fit=fit.summary(), fit_verdict=fit.verdict,
        last_smoke=smokes[-1] if smokes else None, smokes=len(smokes), benchmark=benchmarks[-1] if benchmarks else None,
        speed_plot=speed, fit_plot=fitp, devices=devices, predicted=_predicted(r, devices), preset=preset,
    )


def _groups(cat: Catalog, builds: Mapping[str, MarketBuild], ledger: LedgerReader,
            plots: dict[str, Maker]) -> list[ModelGroup]:
    by_model: dict[str, list[AppCard]] = {}
    for r in cat.select():
        by_model.setdefault(r.model.id, []).append(_card(r, builds, list(ledger(cat.root, r.app.name)), plots,
                                                         cat.root))
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


def store_page(catalog_root: Path, builds: Mapping[str, MarketBuild] | MarketBuild, ledger: LedgerReader, *,
               source_url: str | None, chart_base: str | None, problems: Sequence[str] = (),
               catalog: Catalog | None = None) -> StorePage:
    """The page and its plots. `builds`: the market of each format, the newest first; `source_url`: the URL a
    user adds in Olares; `chart_base`: where chart downloads are linked (`""` for the live page: relative
    links; None: no links); `catalog`: the catalog already loaded (else it is read from `catalog_root`)."""
    from generator.market.api import olares_range

    if isinstance(builds, MarketBuild):
        builds = {builds.profile or "olares-v3": builds}
    plots: dict[str, Maker] = {}
    errors = list(problems)
    try:
        cat = catalog or load_catalog(catalog_root)
        groups = _groups(cat, builds, ledger, plots)
    except CatalogError as exc:
        groups = []
        errors.append(f"the store page cannot read the catalog: {exc}")
    formats = [(name, olares_range(name), b) for name, b in builds.items()]
    build = next(iter(builds.values()))
    html = _TEMPLATE.render(build=build, formats=formats, groups=groups, problems=errors, source_url=source_url,
                            chart_base=chart_base, apps=sum(len(g.cards) for g in groups))
    shown = {c.name for g in groups for c in g.cards}
    icons = {name: data for name, data in build.icons.items() if name in shown}
    return StorePage(html, Lazy(plots), tuple(c.name for g in groups for c in g.cards), icons)


def check_site_folder(out: Path, forbidden: Sequence[Path] = ()) -> None:
    """`out` can hold the static site: a folder or nothing (a file is refused), outside each of `forbidden`
    (the catalog and charts folders: the site would be taken for their content), with no link on the way to
    the files it writes (plots/, icons/, index.html). An InputError names the problem; nothing is written."""
    from generator.core import InputError, Problem

    where = os.path.abspath(out)
    if os.path.lexists(out) and not os.path.isdir(out) or os.path.islink(out):
        what = "a symbolic link" if os.path.islink(out) else "a file"
        raise InputError([Problem(str(out), None, None, f"{what}, not a folder; --out names the folder the site is "
                                  "written into (give a new or existing folder)")])
    for folder in forbidden:
        base = os.path.realpath(folder)
        real = os.path.realpath(where)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            raise InputError([Problem(str(out), None, None, f"inside {folder}; the site is not catalog input or a "
                                      "chart: write it to a folder of its own (e.g. site/ beside catalog/)")])
    for sub in ("plots", "icons"):
        writable_below(out, out / sub / "x")
    writable_below(out, out / "index.html")


def write_site(page: StorePage, out: Path) -> list[Path]:
    """index.html, plots/*.svg and icons/*.png under `out`, each written only when it changed; returns what was
    written. Every target is checked first (check_site_folder): a link refuses the run before any write."""
    check_site_folder(out)
    targets = [out / "plots" / n for n in sorted(page.plots)] + [out / "icons" / f"{n}.png" for n in sorted(page.icons)]
    for path in targets:
        writable_below(out, path)
    written = []
    if write_if_changed(out / "index.html", page.html):
        written.append(out / "index.html")
    for name, svg in sorted(page.plots.items()):
        if write_if_changed(out / "plots" / name, svg.decode("utf-8")):
            written.append(out / "plots" / name)
    for name, png in sorted(page.icons.items()):
        if write_bytes_if_changed(out / "icons" / f"{name}.png", png):
            written.append(out / "icons" / f"{name}.png")
    return written


def write_bytes_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` atomically unless the file already holds it (same rules as write_if_changed)."""
    import tempfile

    from generator.core import translate_os_error
    from generator.core import writable

    try:
        if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
            return False
        writable(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as exc:
        raise translate_os_error(exc, path, "write") from None
    return True


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
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", system-ui, sans-serif; margin: 0; color: #212121; background: #f5f5f5; }
header { background: #263238; color: #fff; padding: 16px 24px; }
header h1 { margin: 0 0 6px; font-size: 20px; }
header p { margin: 2px 0; font-size: 13px; color: #cfd8dc; overflow-wrap: anywhere; }
header code { color: #fff; }
main { padding: 8px 24px 32px; max-width: 1600px; }
section.model > h2 { font-size: 17px; margin: 22px 0 8px; border-bottom: 1px solid #cfd8dc; padding-bottom: 4px; }
section.model > h2 small { font-weight: normal; color: #607d8b; font-size: 13px; }
.cards { display: flex; flex-direction: column; gap: 10px; }
article.app { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 10px 12px;
  display: grid; grid-template-columns: minmax(280px, 1fr) minmax(0, 384px) minmax(0, 480px); gap: 6px 14px;
  align-items: start; }
article.app .facts { min-width: 0; }
article.app h3 { margin: 0 0 4px; font-size: 15px; display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
article.app h3 img.icon { width: 28px; height: 28px; border-radius: 6px; object-fit: cover; }
article.app h3 code { font-size: 12px; color: #607d8b; font-weight: normal; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 10px; margin: 6px 0; font-size: 12.5px; }
dt { color: #607d8b; } dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 9px; font-size: 11px; color: #fff; }
.active { background: #2e7d32; } .deprecated { background: #ef6c00; } .removed { background: #757575; }
.pass { color: #2e7d32; font-weight: bold; } .regression { color: #ef6c00; font-weight: bold; }
.fail, .error { color: #c62828; font-weight: bold; } .suspect { color: #6a1b9a; font-weight: bold; } .FIT { color: #2e7d32; } .TIGHT { color: #ef6c00; } .FAIL { color: #c62828; }
figure { margin: 0; min-width: 0; } figure img { display: block; width: 100%; height: auto; }
figcaption { font-size: 11px; color: #757575; }
.problems { background: #fff3e0; border: 1px solid #ffb74d; padding: 8px 12px; margin: 12px 0; font-size: 13px; overflow-wrap: anywhere; }
@media (max-width: 1100px) {
  article.app { grid-template-columns: minmax(0, 384fr) minmax(0, 480fr); }
  article.app .facts { grid-column: 1 / -1; }
}
@media (max-width: 640px) {
  main { padding: 8px 10px 24px; }
  article.app { grid-template-columns: minmax(0, 1fr); }
}
</style>
</head>
<body>
<header>
<h1>Olares Market Source</h1>
{% if source_url %}<p>Add this source in Olares: Market &rarr; Settings &rarr; Add source &rarr; <code id="source-url">{{ source_url }}</code></p>{% endif %}
<p>{{ build.entries | length }} apps served &middot; {{ build.charts | length }} chart packages &middot; hash <code id="market-hash">{{ build.hash }}</code> &middot; last release {{ build.last_updated[:10] }}</p>
{% for name, olares, b in formats %}<p class="format" data-profile="{{ name }}">{{ name }} (Olares {{ olares }}): {{ b.entries | length }} apps &middot; hash <code>{{ b.hash }}</code></p>
{% endfor %}
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
<h3>{% if c.icon %}<img class="icon" src="{{ c.icon }}" alt="" width="28" height="28">{% endif %}{{ c.title }} <code>{{ c.name }}</code> <span class="badge {{ c.status }}">{{ c.status }}</span></h3>
<dl>
<dt>version</dt><dd class="versions">{% for v in c.served %}<span class="served" data-profile="{{ v.profile }}">{{ v.version }} for Olares {{ v.olares }}{% if chart_base is not none %} &middot; <a href="{{ chart_base }}api/v1/applications/{{ c.name }}/chart?fileName={{ v.chart_file }}">{{ v.chart_file }}</a>{% endif %}</span>{% if not loop.last %}<br>{% endif %}{% else %}{{ c.catalog_version }} (not served){% endfor %}</dd>
<dt>engine</dt><dd>{{ c.engine }} &middot; {{ c.stack }} <code>{{ c.image }}</code></dd>
<dt>context</dt><dd>{{ "{:,}".format(c.context) }} tokens</dd>
<dt>GPU memory</dt><dd>{{ "{:,}".format(c.gpu_mib) }} MiB &middot; <span class="{{ c.fit_verdict }}">{{ c.fit }}</span></dd>
{% if c.devices %}<dt>devices</dt><dd class="devices">{% for d in c.devices %}<span class="device" data-device="{{ d.device }}">{{ d.name }} ({{ d.accelerator }}): {% if d.runs %}{{ "{:,}".format(d.context) }} tokens &middot; KV {{ d.kv }} &middot; {{ "{:,}".format(d.gpu_mib) }} MiB &middot; {{ d.verdict }}{% if d.roof_empty_tps is not none %} &middot; roofline {{ "%.0f" | format(d.roof_empty_tps) }} tokens/s{% endif %}{% if d.gave_up %} &middot; gave up: {{ d.gave_up | join("; ") }}{% endif %}{% else %}<span class="excluded">excluded</span>: {{ d.excluded | join("; ") }}{% endif %}</span>{% if not loop.last %}<br>{% endif %}{% endfor %}</dd>
{% endif %}{% if c.predicted %}<dt>predicted speed</dt><dd class="predicted">{% for p in c.predicted %}<span class="prediction">{{ p.device }}: {% if p.short_tps is not none %}{{ "%.0f" | format(p.short_tps) }} tokens/s (&plusmn;{{ "%.0f" | format(p.band * 100) }} %){% if p.full_tps is not none %}, {{ "%.0f" | format(p.full_tps) }} at {{ "{:,}".format(p.full_context) }} tokens{% endif %}{% else %}no speed family: a band only{% endif %}{% if p.measured_tps is not none %} &middot; measured {{ "%.1f" | format(p.measured_tps) }}{% endif %}</span>{% if not loop.last %}<br>{% endif %}{% endfor %}</dd>
{% endif %}{% if c.preset %}<dt>Olares base</dt><dd class="preset" data-base="{{ c.preset.base }}">{% if c.preset.reason %}{{ c.preset.reason }}{% else %}{{ c.preset.base }}:{% for k, v in c.preset.env %}<br><code>{{ k }}={{ v }}</code>{% endfor %}{% endif %}</dd>
{% endif %}<dt>last smoke</dt><dd class="smoke">{% if c.last_smoke %}<span class="{{ c.last_smoke.verdict }}">{{ c.last_smoke.verdict }}</span>{% if c.last_smoke.tokens_per_s is not none %} &middot; {{ "%.1f" | format(c.last_smoke.tokens_per_s) }} tokens/s{% endif %} &middot; {{ c.last_smoke.when.strftime("%Y-%m-%d %H:%M") }} UTC &middot; chart {{ c.last_smoke.chart_version }} ({{ c.smokes }} in the ledger){% else %}no smoke yet{% endif %}{% if c.benchmark %}; recorded benchmark {{ "%.1f" | format(c.benchmark.tokens_per_s) }} tokens/s ({{ c.benchmark.date }}){% endif %}</dd>
</dl>
</div>
<figure class="speed"><img src="plots/{{ c.speed_plot }}" alt="tokens/s history of {{ c.name }}" width="384" height="192"><figcaption>tokens/s: smokes from the ledger, recorded benchmarks</figcaption></figure>
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

__all__ = ["AppCard", "ModelGroup", "Predicted", "StorePage", "store_page", "write_site"]
