"""The health of the embedded catalog (catalog/ and the committed charts/): the one module that reads them.

Every other test works on fixtures (tests/fixtures/, docs/testing.md), so these assertions are about the
catalog's data, not the tool's logic: it loads; every app renders, and its chart lints clean; `catalog check`
passes with the chart lint and only explained warnings; every app explains and gets a memory-fit verdict; the
committed charts/ are a fresh render and lint clean; releases.yaml records every app's current content; no FLAG
error; the generated flag tables under catalog/flags/ are what their generators write from the recorded inputs.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.catalog import load_catalog
from generator.chart.pipeline import render_apps, rendered_apps
from generator.chart.plan import plan
from generator.cli import main
from generator.engines import engine_for
from generator.engines.settings import settings_for
from generator.fit.estimate import estimate
from generator.fit.roofline import roofline
from generator.fit.sizing import sized
from generator.lint.run import lint_chart
from generator.rules import context, run_rules

from support.catalogs import EMBEDDED, EMBEDDED_CHARTS, REPO
from support.checks import findings
from support.flags import CACHE, SCRIPTS, comparable, run_script

pytestmark = pytest.mark.embedded_catalog
FLAGS = EMBEDDED / "flags"


@pytest.fixture(scope="module")
def cat():
    return load_catalog(EMBEDDED)


@pytest.fixture(scope="module")
def charts(cat) -> dict[str, dict[str, str]]:
    return render_apps(rendered_apps(cat))


def test_it_loads_and_has_apps(cat):
    assert cat.apps and cat.select()
    assert all(r.app.name in cat.apps for r in cat.select())


def test_every_app_renders_and_its_chart_lints_clean(cat, charts):
    assert set(charts) == {r.app.name for r in rendered_apps(cat)}
    for name, tree in charts.items():
        assert lint_chart(name, tree) == [], name


def test_committed_charts_are_a_fresh_render(capsys):
    assert main(["render", "--check"]) == 0, capsys.readouterr().out


def test_committed_charts_lint_clean():
    for folder in sorted(p for p in EMBEDDED_CHARTS.iterdir() if p.is_dir()):  # not its .catalog-render list
        files = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
                 for p in folder.rglob("*") if p.is_file()}
        assert lint_chart(folder.name, files) == [], folder.name


def test_releases_record_every_apps_current_content(capsys):
    code = main(["bump", "--check"])
    assert code == 0, capsys.readouterr().err


def test_check_passes_with_lint_and_only_explained_warnings(cat, capsys):
    """Every app checked with rules and the Helm/Kubernetes/Olares lint; no error. Active apps warn only of a
    TIGHT memory fit (docs/fit.md), a stated GPU cap far above the fit's (FIT002) or a flag; deprecated apps say why
    (STA001)."""
    code = main(["check", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [a["app"] for a in data["apps"]] == sorted(r.app.name for r in cat.select())
    errors = [(f["app"], f["rule"], f["message"]) for f in findings(data) if f["severity"] == "error"]
    assert errors == [] and code == 0 and data["errors"] == 0
    active = {a["app"] for a in data["apps"] if a["status"] == "active"}
    for f in findings(data):
        if f["app"] in active:
            measured = bool(cat.apps[f["app"]].app.measured)  # upstream's measured value kept (docs/fit.md)
            assert ((f["rule"] == "FIT001" and f["message"].startswith("TIGHT")) or f["rule"] == "FIT002"
                    or f["rule"].startswith("FLAG")
                    or (measured and f["rule"] in ("HAMI004", "HAMI006", "MEAS001"))), f
        else:
            assert f["rule"] in ("STA001", "ENG013", "FIT002") or f["rule"].startswith("FLAG"), f
    deprecated = {a["app"] for a in data["apps"] if a["status"] == "deprecated"}
    assert deprecated == {f["app"] for f in findings(data, "STA001")}


def test_no_flag_errors(cat):
    errors = [f for r in cat.apps.values() for f in run_rules(context(r, cat))
              if f.rule.startswith("FLAG") and f.severity == "error"]
    assert errors == [], "\n".join(map(str, errors))


def test_every_app_explains_with_a_breakdown(cat, capsys):
    for r in cat.select():
        assert main(["explain", r.app.name, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        fit = data["fit"]
        assert fit["verdict"] in ("FIT", "TIGHT", "FAIL") and fit["parts"] and fit["pools"]
        assert any(p["component"] == "weights" for p in fit["parts"])
        assert all(arg["origin"] for arg in data["args"])
        assert any(e["name"] == "CUDA_DEVICE_MEMORY_LIMIT_0" and e["origin"] == "gpu_memory_mib" for e in data["env"])


def _fit(r):
    r = sized(r)  # an app that leaves its GPU memory out is judged at the cap the fit gives it
    engine = engine_for(r)
    return estimate(r, settings_for(r, engine))


def test_every_app_gets_a_fit_verdict_with_a_breakdown(cat):
    for r in cat.select():
        result = _fit(r)
        assert result.verdict in ("FIT", "TIGHT", "FAIL")
        rows = result.breakdown()
        assert rows and all(isinstance(mib, float | int) for _, mib, _ in rows)
        assert result.part("weights").mib > 1000
        assert any(c.startswith("KV full attention") for c, _, _ in rows)


def test_active_apps_fit(cat):
    verdicts = {r.app.name: _fit(r).verdict for r in cat.select() if r.app.status == "active"}
    assert all(v in ("FIT", "TIGHT") for v in verdicts.values()), verdicts


def test_every_benchmark_lies_under_its_roofline(cat):
    """Each recorded speed is below the decode bound of the app on the Olares One (896 GB/s) at the benchmark's
    context and acceptance: a figure above it would be a mis-recorded benchmark."""
    assert cat.devices["olares-one"].memory_bandwidth_gb_s == 896
    checked = 0
    for r in cat.select(include_removed=True):
        for bench in r.app.benchmarks:
            roof = roofline(r, bench.context or 0, acceptance=bench.acceptance)
            assert roof is not None, r.app.name
            assert bench.tokens_per_s < roof.bound_tps, f"{r.app.name}: {bench.tokens_per_s} > {roof.explain()}"
            checked += 1
    assert checked >= 7


def test_the_olares_one_non_speculative_fallback_speed_is_near_its_roofline(cat):
    """The maintainer's v1.0.2 of llamacppqwen36mtpone fell back to plain decoding at 37 t/s on the Olares One
    ("Pod fell back to non-MTP mode -> 37 t/s baseline", github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9
    llamacppqwen36mtpone/OlaresManifest.yaml:49, v1.0.2; froggeric Qwen3.6-27B-Q4_K_M-mtp, as q4km-mtp here): under the
    bound of the same weights without speculation, and not far below it (about 70 %)."""
    r = cat.apps["llamacppqwen36mtpone"]
    plain = replace(r, app=r.app.model_copy(update={"quantization": "q4km-mtp", "speculative": None}))
    roof = roofline(plain, 0)
    assert roof is not None and roof.tokens_per_step == 1
    assert 0.5 * roof.bound_tps < 37.0 < roof.bound_tps


def test_voice_apps_leave_the_room_the_maintainer_left_for_speech(cat):
    """E2B: "~12GB total with STT+TTS, leaving 12GB free on 24GB GPU" with its 4.7 GB Q8_0 model -> Kyutai STT + TTS
    take up to 12 GiB - 4.7 GB = 7,806 MiB; E4B: "gpu-memory-utilization 0.85 — leaves room for TTS alongside" ->
    0.15 of the card's 24,463 MiB = 3,670 MiB; the E4B audio app: `limitedGpu: 8Gi` -> the card minus 8 GiB = 16,271 MiB
    (github.com/aamsellem/orales-one-market@6a34b5bb manifests). The GPU memory the chart reserves for each leaves at
    least that room on the card."""
    card = cat.devices["olares-one"].memory_mib
    assert card == 24463
    rooms = {"gemma4e2bone": 12 * 1024 - round(4.7e9 / 2**20), "vllmgemma4e4bone": math.ceil(0.15 * card),
             "llamacppgemma4audione": card - 8 * 1024}
    for name, room in rooms.items():
        r = cat.apps[name]
        assert r.app.gpu_room is not None and r.app.gpu_room.mib == room, name
        gpu = plan(r).resolved.app.gpu_memory_mib
        assert gpu is not None and card - gpu >= room, (name, gpu)
        assert sized(r).app.gpu_memory_mib == gpu  # sized by the fit, not stated


# -- catalog/flags/: the generated tables -------------------------------------------------------------

def test_committed_llamacpp_tables_match_their_recorded_help(tmp_path):
    regenerated = subprocess.run(["bash", str(SCRIPTS / "regenerate.sh"), "llamacpp-recorded"],
                                 capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
                                 env=dict(os.environ, FLAGS_OUT=str(tmp_path), PYTHON=sys.executable))
    assert regenerated.returncode == 0, regenerated.stderr[-3000:]
    written = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert written == ["atomic-mtp.yaml", "beellama-0-1-3-rc1.yaml", "beellama-0-1-3-rc3.yaml", "buun-dflash-0-2-0.yaml",
                       "buun-dflash.yaml", "llamacpp-b10156.yaml", "llamacpp-b10666.yaml", "llamacpp-b11046.yaml",
                       "llamacpp-b8740.yaml", "llamacpp-b9101.yaml", "llamacpp-beclab-b10068.yaml",
                       "llamacpp-beclab-b10454.yaml",
                       "llamacpp-master-ad27757.yaml", "llamacpp-mtp.yaml"]
    for name in written:
        assert comparable(tmp_path / name) == comparable(FLAGS / name), f"catalog/flags/{name} is stale"


@pytest.mark.slow
def test_committed_vllm_table_matches_the_wheel(vllm_0_19_1: Path):
    assert comparable(vllm_0_19_1) == comparable(FLAGS / "vllm-0-19-1.yaml")


@pytest.mark.slow
def test_committed_cu130_nightly_table_matches_the_0_18_0_wheel(tmp_path):
    """vllm-cu130-nightly stands on the vLLM 0.18.0 wheel (its provenance says why); regenerated from that wheel
    (downloaded once into the cache, ~430 MB) it is the committed table, flags and env alike."""
    committed = FLAGS / "vllm-cu130-nightly.yaml"
    provenance = YAML(typ="safe").load(committed.read_text())["provenance"]
    run_script(str(SCRIPTS / "vllm_flags.py"), "--version", "0.18.0", "--table", "vllm-cu130-nightly",
               "--image", "vllm/vllm-openai:cu130-nightly",
               "--image-version", "0.18 main nightly (floating cu130-nightly tag, March 2026)",
               "--approximation", provenance["approximation"], "--cache", str(CACHE / "vllm-wheels"),
               "--out", str(tmp_path))
    assert comparable(tmp_path / "vllm-cu130-nightly.yaml") == comparable(committed)


def test_every_shipped_app_round_trips_through_import(tmp_path):
    """`catalog import` of each app's chart gives back the app (tests/importer/test_import_roundtrip.py checks
    the logic on fixtures; this checks that every shipped app is expressible: nothing unmapped, nothing changed).
    An app whose chart carries another accelerator mode (`devices:` with a DGX Spark) gets that entry back (issue
    42, tests/importer/test_import_own_charts.py); the other cards of its own mode leave nothing in a chart. Should
    a mode not be found again, the import says so in exactly one note."""
    from generator.chart.pipeline import render_app
    from generator.importer.build import import_chart
    from generator.importer.manifest import PER_MODE_NOTE
    from generator.importer.result import CHART_FIELDS
    from generator.importer.drafts import Pool
    from generator.importer.source import read_chart
    from generator.schema import App

    cat = load_catalog(EMBEDDED)
    bad = {}
    for name, resolved in sorted(cat.apps.items()):
        for rel, text in render_app(resolved).items():
            (tmp_path / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name / rel).write_text(text, encoding="utf-8")
        result = import_chart(read_chart(tmp_path / name), cat, Pool(cat))
        got = App.model_validate(_frozen(result.app)) if result.status == "ok" and result.app else None
        diffs = [k for k in CHART_FIELDS if got is not None and k != "unmapped"
                 and getattr(resolved.app, k) != getattr(got, k)]
        unmapped = list(result.unmapped)
        modes = [n for n in unmapped if PER_MODE_NOTE in n]
        if resolved.app.devices and len(modes) == 1:
            unmapped.remove(modes[0])
        if result.status != "ok" or unmapped or diffs:
            bad[name] = (result.status, result.missing, result.unmapped, diffs)
    assert not bad, bad


def _frozen(value):
    """The import's plain data (lists) as the strict App model takes it (tuples)."""
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def test_the_market_source_serves_every_app_as_the_build_script_would(tmp_path):
    """`catalog serve` on the live catalog: each entry, over HTTP, is what build-catalog.js writes for its
    committed chart (support/market.py `reference_entry`), and each chart downloads (docs/market-source.md)."""
    from generator.versions.releases import load_releases

    from support.market import chart_dirs, ids_in_batches, make_store, reference_entry, serve

    store = make_store(tmp_path / "store", REPO)
    releases = load_releases(store / "catalog")
    expected = {}
    for chart in chart_dirs(store / "charts"):
        summary, detail = reference_entry(chart, releases.latest(chart.name).date)
        expected[summary["id"]] = (summary, detail)
    from generator.catalog import load_catalog

    # a device of the committed charts' format (docs/market-source.md "One catalog, two formats")
    device = {"olares-v2": "1.12.3", "olares-v3": "1.12.6"}[load_catalog(store / "catalog").market.profile]
    with serve(store / "catalog", tmp_path) as served:
        info = served.get("/api/v1/appstore/info", params={"version": device}).json()
        assert info["data"]["apps"] == {i: s for i, (s, _) in expected.items()}
        for batch in ids_in_batches(sorted(expected)):
            answer = served.post("/api/v1/applications/info", json={"app_ids": batch, "version": device}).json()
            assert answer["apps"] == {i: expected[i][1] for i in batch} and "not_found" not in answer
        for _, detail in expected.values():
            assert all(detail[k] != "0" for k in ("requiredCPU", "requiredMemory", "requiredDisk", "requiredGPU"))
            got = served.get(f"/api/v1/applications/{detail['name']}/chart", params={"fileName": detail["chartName"]})
            assert got.status_code == 200, detail["chartName"]


def _opt_in_node(script: str) -> tuple[Path, str, dict[str, str]]:
    """The ORALES_MARKET checkout, node with js-yaml, and the env that finds it; skips when one is missing."""
    from support.market import node_with_js_yaml

    checkout = Path(os.environ["ORALES_MARKET"])
    node = node_with_js_yaml(checkout)
    if node is None or not (checkout / "scripts" / script).is_file():
        pytest.skip(f"node with js-yaml, or the checkout's scripts/{script}, is missing")
    env = {**os.environ, "NODE_PATH": os.pathsep.join(filter(None, [str(checkout / "node_modules"),
                                                                     os.environ.get("NODE_PATH")]))}
    return checkout, node, env


def _write_trees(folder: Path, trees: dict[str, dict[str, str]]) -> None:
    for name, tree in trees.items():
        for rel, text in tree.items():
            (folder / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / name / rel).write_text(text, encoding="utf-8")


@pytest.mark.skipif(not os.environ.get("ORALES_MARKET"),
                    reason="set ORALES_MARKET to a checkout of github.com/aamsellem/orales-one-market (and node with "
                           "js-yaml) to feed the embedded charts to the maintainer's real build script")
def test_the_real_build_script_reads_every_embedded_app_with_non_zero_resources(cat, tmp_path):
    """The maintainer's olares-v2 scripts/build-catalog.js (@6a34b5bb), fed the embedded catalog rendered in the
    olares-v2 profile (what Olares <= 1.12.5 is served), lists every app and reads a non-zero GPU, memory, CPU and
    disk for each (run by hand on 2026-12-01: 29 apps, none zero)."""
    import shutil

    from generator.chart.render import render

    checkout, node, env = _opt_in_node("build-catalog.js")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "src").mkdir()
    shutil.copy(checkout / "scripts" / "build-catalog.js", tmp_path / "scripts")
    v2 = {r.app.name: render(plan(r, profile="olares-v2")) for r in rendered_apps(cat)}
    _write_trees(tmp_path, v2)
    done = subprocess.run([node, "scripts/build-catalog.js"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "src" / "catalog.json").read_text(encoding="utf-8"))
    assert sorted(e["name"] for e in data["summaries"].values()) == sorted(v2)
    for entry in data["details"].values():
        spec = entry["app_info"]["app_entry"] if "app_info" in entry else entry
        text = json.dumps(spec)
        for key in ("requiredGPU", "requiredMemory", "requiredCPU", "requiredDisk"):
            value = _find(spec, key)
            assert value not in (None, "", "0", 0), f"{entry.get('name')}: {key} {value!r} in {text[:300]}"


@pytest.mark.skipif(not os.environ.get("ORALES_MARKET"),
                    reason="set ORALES_MARKET to a checkout of github.com/aamsellem/olares-one-market (with "
                           "scripts/validate-manifests-v3.js, and node with js-yaml) to run the maintainer's v3 "
                           "validator over the committed charts")
def test_the_maintainers_v3_validator_accepts_every_committed_chart(cat, tmp_path):
    """The maintainer's scripts/validate-manifests-v3.js (@b41af142) over the committed charts/ (olares-v3): it
    passes and counts every chart. His market-taxonomy.json lists his apps' worker categories; the test writes its
    own from the catalog's `categories`, for the catalog's apps (the validator requires one per chart)."""
    import shutil

    checkout, node, env = _opt_in_node("validate-manifests-v3.js")
    (tmp_path / "scripts").mkdir()
    shutil.copy(checkout / "scripts" / "validate-manifests-v3.js", tmp_path / "scripts")
    names = sorted(r.app.name for r in rendered_apps(cat))
    taxonomy = {name: list(cat.apps[name].app.categories) for name in names}
    (tmp_path / "scripts" / "market-taxonomy.json").write_text(json.dumps(taxonomy, indent=2), encoding="utf-8")
    for name in names:
        shutil.copytree(EMBEDDED_CHARTS / name, tmp_path / name)
    done = subprocess.run([node, "scripts/validate-manifests-v3.js"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"Validated {len(names)} Olares v3 charts.", done.stdout


def _find(data: object, key: str) -> object:
    """The first value of `key` anywhere in nested JSON data."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        data = list(data.values())
    if isinstance(data, list):
        for item in data:
            found = _find(item, key)
            if found is not None:
                return found
    return None


def test_every_active_app_on_every_device_has_a_prediction():
    """issue 41: `explain APP --device D --json` has predicted_tokens_per_s for every active app and device."""
    from generator.fit.devices import variant_on
    from generator.fit.speed import on_device, speeds

    cat = load_catalog(str(EMBEDDED))
    missing = []
    for r in cat.select():
        if r.app.status != "active":
            continue
        for device in cat.devices.values():
            there = variant_on(r, device.id) if device.id in {t.device.id for t in r.targets} else None
            found = speeds(there if there is not None else on_device(r, device))
            if found is None or found.short.tokens_per_s is None:
                missing.append((r.app.name, device.id))
    assert not missing


def test_a_chart_of_several_accelerator_modes_carries_them_as_devices(tmp_path):
    """The embedded apps whose chart has an `nvidia-gb10` mode (a DGX Spark entry under `devices:`): the import gives
    back every entry (device, stack, speculation, extra args) from the chart's catalog block (generator/chart/
    carried.py), the `nvidia`-mode entries (other desktop cards, no mode of their own) too, once the app with them
    renders the chart again."""
    from generator.chart.pipeline import render_app
    from generator.importer.build import import_chart
    from generator.importer.drafts import Pool
    from generator.importer.source import read_chart

    import shutil

    # the embedded store targets the Olares One alone (catalog/market.yaml devices:); a copy that also targets the
    # DGX Spark renders the apps' nvidia-gb10 entries as a second accelerator mode
    store = tmp_path / "spark" / "catalog"
    shutil.copytree(EMBEDDED, store, ignore=shutil.ignore_patterns("ledger"))
    market = store / "market.yaml"
    market.write_text(market.read_text(encoding="utf-8").replace("devices: [olares-one]",
                                                                 "devices: [olares-one, dgx-spark]"), encoding="utf-8")
    cat = load_catalog(store)
    several = [r for r in cat.apps.values() if r.app.status != "removed" and any(
        f"mode: {t.device.accelerator}" in render_app(r)["OlaresManifest.yaml"] for t in r.targets
        if t.device.accelerator != r.device.accelerator)]  # a mode whose device the app cannot run on is not rendered
    assert len(several) >= 3
    for r in several:
        for rel, text in render_app(r).items():
            (tmp_path / r.app.name / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / r.app.name / rel).write_text(text, encoding="utf-8")
        result = import_chart(read_chart(tmp_path / r.app.name), cat, Pool(cat))
        assert result.status == "ok" and result.unmapped == [], (r.app.name, result.unmapped)
        want = [{k: v for k, v in t.entry.model_dump(exclude_none=True).items()} for t in r.targets]
        got = [{k: tuple(v) if isinstance(v, list) else v for k, v in e.items()} for e in result.app["devices"]]
        assert got == want, r.app.name


def test_every_shipped_chart_reimports_into_a_fresh_store(tmp_path, capsys):
    """Issue 42: every chart of the embedded catalog imported into a fresh store (the same devices, models and
    stacks, no apps, no market taxonomy beside the charts): every app imports, passes `check` and renders the same
    chart, byte for byte, and is the same app but for what a chart never holds (its status, its `unmapped` notes,
    comments of its file): what no chart field holds (categories, devices, measured grounds, calibration rows,
    benchmarks) comes back from the chart's catalog block (generator/chart/carried.py). scripts/roundtrip.py runs
    the same round trip through the CLI, from `catalog init`."""
    import shutil

    from generator.chart.writer import read_tree
    from generator.importer.result import APP_KEYS

    cat = load_catalog(EMBEDDED)
    source = tmp_path / "source"
    charts = source / "charts"
    for name, tree in render_apps(rendered_apps(cat)).items():
        for rel, text in tree.items():
            (charts / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (charts / name / rel).write_text(text, encoding="utf-8")
    fresh = tmp_path / "fresh" / "catalog"
    shutil.copytree(EMBEDDED, fresh, ignore=shutil.ignore_patterns("apps", "ledger", "releases.yaml", "drafts"))
    (fresh / "apps").mkdir()
    names = sorted(p.name for p in charts.iterdir())
    capsys.readouterr()
    assert main(["import", *(str(charts / n) for n in names), "--catalog", str(fresh), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [a["status"] for a in report["apps"]] == ["ok"] * len(names), report["apps"]
    assert main(["check", "--catalog", str(fresh), "--no-lint", "--no-drift", "--json"]) == 0, \
        [f for a in json.loads(capsys.readouterr().out)["apps"] for f in a["findings"] if f["severity"] == "error"]
    imported = load_catalog(fresh)
    differ = {n: [k for k in APP_KEYS if k not in ("status", "unmapped")
                  and getattr(cat.apps[n].app, k) != getattr(imported.apps[n].app, k)] for n in names}
    assert {n: keys for n, keys in differ.items() if keys} == {}
    capsys.readouterr()
    assert main(["render", "--catalog", str(fresh)]) == 0
    assert [n for n in names if read_tree(tmp_path / "fresh" / "charts" / n) != read_tree(charts / n)] == []
