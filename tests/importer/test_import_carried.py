"""Issue 42: a chart of this tool's making carries what the catalog needs to rebuild its app (generator/chart/
carried.py): a fixture store the test writes (tests/fixtures/catalog_devices with a market that targets its three
devices and names categories) gets a measured belt above the card, calibration rows, benchmarks, a GPU room, a stated
GPU memory equal to the fit's and categories; `spread` renders one chart for two accelerator modes. Every chart is
imported into a fresh store: the apps are the same App values (measured as measured, with their notes), `check` gives
the same findings, the charts render byte for byte the same, and `--update` with the same charts changes nothing.
Real render, real Helm engine (the import renders each chart), real files."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import yaml

from generator.catalog import load_catalog
from generator.chart.carried import MARKER
from generator.chart.pipeline import render_app
from generator.chart.writer import read_tree
from generator.cli import main
from generator.fit.sizing import sized
from generator.importer.result import APP_KEYS

from support.catalogs import FIXTURES
from support.checks import set_app

DEVICES = FIXTURES / "catalog_devices"
MARKET = "devices: [small-ada, big-unified, old-ampere]\ncategories: true\n"
# a note a comment line must survive: a YAML 1.1 line break (LS), Helm syntax, a newline, a `#`
NOTE = "belt against an underflow\u2028{{ .Values.x }}\nsecond line # not a comment"
BELT = {"field": "gpu_memory_mib", "value": "9000", "note": NOTE, "source": "a test's own measurement"}
CALIBRATION = {"measure": "weights_loaded", "value_mib": 3650.5, "what": "llama.cpp: model buffer 3650.5 MiB",
               "source": "a test's boot log", "quant": "q4_0", "date": dt.date(2026, 1, 2)}
BENCHMARK = {"tokens_per_s": 51.5, "acceptance": 0.5, "date": dt.date(2026, 1, 3), "method": "3 runs, mean",
             "source": "a test's bench"}
ROOM = {"mib": 1024, "beside": "a speech stack", "source": "a test's note"}


def _store(root: Path, apps: bool) -> Path:
    catalog = root / "catalog"
    shutil.copytree(DEVICES, catalog)
    (catalog / "market.yaml").write_text(MARKET, encoding="utf-8")
    if not apps:
        for path in (catalog / "apps").glob("*.yaml"):
            path.unlink()
    return catalog


def _source(root: Path) -> Path:
    source = _store(root, apps=True)
    set_app(source, "plain", categories=["LLM Chat"], gpu_memory_mib=9000, measured=[BELT],
            benchmarks=[BENCHMARK])
    set_app(source, "spread", categories=["Coding", "AI Agents"], calibration=[CALIBRATION])
    set_app(source, "multi", categories=["LLM Chat"], gpu_room=ROOM)
    fit = sized(load_catalog(source).apps["spread"]).app.gpu_memory_mib
    set_app(source, "spread", gpu_memory_mib=fit)  # stated, and what the fit sizes: the chart cannot tell
    return source


def _findings(catalog: Path, capsys) -> list[tuple[str, str, str, str]]:
    capsys.readouterr()
    main(["check", "--catalog", str(catalog), "--no-lint", "--no-drift", "--json"])
    report = json.loads(capsys.readouterr().out)
    return sorted((f["app"], f["rule"], f["severity"], f["message"]) for a in report["apps"] for f in a["findings"])


def test_a_store_of_measured_multi_mode_apps_round_trips(tmp_path, capsys):
    source = _source(tmp_path / "source")
    assert main(["render", "--catalog", str(source)]) == 0
    charts = sorted(p for p in (tmp_path / "source" / "charts").iterdir() if p.is_dir())
    assert [c.name for c in charts] == ["multi", "plain", "spread"]
    values = (tmp_path / "source" / "charts" / "plain" / "values.yaml").read_text(encoding="utf-8")
    assert values.count(MARKER) == 1 and "\u2028" not in values and "{{" not in values
    block = values[values.index(MARKER):]
    assert all(line.startswith("#") for line in block.splitlines())
    assert yaml.safe_load(values[:values.index(MARKER)]) == yaml.safe_load(values)  # a comment: no value changes
    spread = yaml.safe_load((tmp_path / "source" / "charts" / "spread" / "OlaresManifest.yaml").read_text())
    assert [a["mode"] for a in spread["spec"]["accelerator"]] == ["nvidia", "nvidia-gb10"]

    fresh = _store(tmp_path / "fresh", apps=False)
    capsys.readouterr()
    assert main(["import", *map(str, charts), "--catalog", str(fresh)]) == 0, capsys.readouterr().out
    want, got = load_catalog(source), load_catalog(fresh)
    for name in ("multi", "plain", "spread"):
        diffs = {k: (getattr(want.apps[name].app, k), getattr(got.apps[name].app, k)) for k in APP_KEYS
                 if k != "unmapped" and getattr(want.apps[name].app, k) != getattr(got.apps[name].app, k)}
        assert not diffs, (name, diffs)
    belt = got.apps["plain"].app.measured[0]  # measured comes back as measured, with its note
    assert (belt.field, belt.value, belt.note) == ("gpu_memory_mib", "9000", NOTE)
    assert got.apps["spread"].app.gpu_memory_mib is not None  # stated stays stated
    assert _findings(fresh, capsys) == _findings(source, capsys)

    assert main(["render", "--catalog", str(fresh)]) == 0
    for chart in charts:
        assert read_tree(tmp_path / "fresh" / "charts" / chart.name) == read_tree(chart), chart.name

    before = {p.name: p.read_bytes() for p in (fresh / "apps").iterdir()}
    capsys.readouterr()
    assert main(["import", *map(str, charts), "--catalog", str(fresh), "--update"]) == 0
    assert capsys.readouterr().out.count("unchanged ") == len(charts)
    assert {p.name: p.read_bytes() for p in (fresh / "apps").iterdir()} == before


def test_update_takes_the_blocks_fields_and_leaves_them_alone_without_a_block(tmp_path, capsys):
    """`--update` with a chart whose block changed sets the carried fields; a chart without a block (another
    tool's) leaves the app's categories and measurements as they are."""
    source = _source(tmp_path / "source")
    assert main(["render", "--catalog", str(source), "plain"]) == 0
    chart = tmp_path / "source" / "charts" / "plain"
    store = tmp_path / "store" / "catalog"
    shutil.copytree(source, store)
    set_app(store, "plain", categories=["Vision"], benchmarks=None)
    capsys.readouterr()
    assert main(["import", str(chart), "--catalog", str(store), "--update"]) == 0
    assert "updated app: categories, benchmarks" in capsys.readouterr().out
    app = load_catalog(store).apps["plain"].app
    assert app.categories == ("LLM Chat",) and app.benchmarks[0].tokens_per_s == 51.5

    values = chart / "values.yaml"
    text = values.read_text(encoding="utf-8")
    values.write_text(text[:text.index(MARKER)], encoding="utf-8")  # the block cut off
    set_app(store, "plain", categories=["Vision"])
    assert main(["import", str(chart), "--catalog", str(store), "--update"]) == 0
    app = load_catalog(store).apps["plain"].app
    assert app.categories == ("Vision",) and app.measured[0].note == NOTE


def test_a_broken_block_is_one_error_at_its_line_and_nothing_is_written(tmp_path, capsys):
    source = _source(tmp_path / "source")
    assert main(["render", "--catalog", str(source), "plain"]) == 0
    values = tmp_path / "source" / "charts" / "plain" / "values.yaml"
    lines = values.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line == "# - LLM Chat")
    lines[at] = "# - {not a label}"
    values.write_text("\n".join(lines), encoding="utf-8")
    fresh = _store(tmp_path / "fresh", apps=False)
    capsys.readouterr()
    assert main(["import", str(values.parent), "--catalog", str(fresh)]) != 0
    err = capsys.readouterr().err
    marker = lines.index(MARKER) + 1
    assert f"plain/values.yaml:{marker}: the catalog block's categories.0" in err, err
    assert "re-render the app" in err
    assert not list((fresh / "apps").iterdir())


def test_the_block_names_the_device_and_only_the_fields_an_app_sets(tmp_path):
    cat = load_catalog(_store(tmp_path, apps=True))
    plain = render_app(cat.apps["plain"])["values.yaml"]
    assert plain.endswith(f"{MARKER}\n# device: small-ada\n")
    spread = render_app(cat.apps["spread"])["values.yaml"]
    assert "\n# devices:\n# - device: big-unified\n#   stack: llamacpp-multiarch\n" in spread


def test_a_further_device_the_catalog_lacks_is_left_out_with_a_note(tmp_path, capsys):
    source = _source(tmp_path / "source")
    assert main(["render", "--catalog", str(source), "multi"]) == 0
    fresh = _store(tmp_path / "fresh", apps=False)
    (fresh / "devices" / "big-unified.yaml").unlink()
    (fresh / "market.yaml").write_text("devices: [small-ada, old-ampere]\ncategories: true\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["import", str(tmp_path / "source" / "charts" / "multi"), "--catalog", str(fresh)]) == 0
    assert "devices: big-unified on stack of the app: the catalog has no devices/ or stacks/ file for it; left " \
           "out" in capsys.readouterr().out
    app = load_catalog(fresh).apps["multi"].app
    assert [t.device for t in app.devices] == ["small-ada"] and app.device == "old-ampere"
