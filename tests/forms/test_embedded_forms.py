"""Every app of the embedded catalog in both forms (issue 39 item 6): rendered with the real pipeline, linted with
the real Helm engine and the Olares rules, checked with the catalog rules; in the shared form, a context setting of
10,000,000 tokens rendered through Helm reaches the engine as the fit's maximum; and `catalog preset` gives every
llama.cpp, vLLM and SGLang app an env set the official base accepts, or one line saying why not.

Real parts: a copy of the live catalog/ (the shared form set in its market.yaml), the CLI, the Helm engine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from generator.catalog import load_catalog
from generator.chart.pipeline import rendered_apps
from generator.chart.plan import plan
from generator.chart.render import render
from generator.cli import main
from generator.lint import helm
from generator.lint.values import olares_values

REPO = Path(__file__).resolve().parents[2]
HUGE = 10_000_000


@pytest.fixture(scope="module")
def shared_copy(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("embedded") / "catalog"
    shutil.copytree(REPO / "catalog", dest)
    text = (dest / "market.yaml").read_text(encoding="utf-8")
    (dest / "market.yaml").write_text(text.replace("\nprofile: olares-v3", "\nform: shared\nprofile: olares-v3", 1),
                                      encoding="utf-8")
    return dest


def check_json(capsys, catalog: Path) -> tuple[int, dict]:
    code = main(["check", "--catalog", str(catalog), "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("form", ["single", "shared"])
def test_every_embedded_app_renders_lints_and_checks_in_both_forms(capsys, shared_copy, form):
    catalog = shared_copy if form == "shared" else REPO / "catalog"
    code, report = check_json(capsys, catalog)
    errors = [(a["app"], f["rule"], f["message"]) for a in report["apps"] for f in a["findings"]
              if f["severity"] == "error"]
    assert code == 0 and errors == []
    assert len(report["apps"]) >= 30
    for r in rendered_apps(load_catalog(catalog)):
        manifest = render(plan(r))["OlaresManifest.yaml"]
        assert ("sharedEntrances:" in manifest) == (form == "shared"), r.app.name


def test_an_oversize_context_reaches_every_shared_engine_as_the_fits_maximum(shared_copy):
    for r in rendered_apps(load_catalog(shared_copy)):
        spec = plan(r)
        bounds = spec.shared
        assert bounds is not None and bounds.context.maximum >= bounds.context.default, r.app.name
        tree = render(spec)
        with helm.chart_folder(r.app.name, tree) as folder:
            values = olares_values(r.app.name, yaml.safe_load(tree["OlaresManifest.yaml"]),
                                   yaml.safe_load(tree["values.yaml"]), olares_env={"LLM_CONTEXT_WINDOW": str(HUGE)})
            docs, errors = helm.documents(helm.render(folder, values, name=r.app.name, namespace="x-shared"))
        assert errors == []
        deployment = next(d for d in docs if d.kind == "Deployment")
        args = deployment.body["spec"]["template"]["spec"]["containers"][0]["args"]
        served = int(args[bounds.context.arg_index])
        assert served == bounds.context.maximum * bounds.context.slots == bounds.apply(HUGE), r.app.name
        assert served < HUGE


def test_every_upstream_app_gets_a_preset_the_base_accepts_or_one_reason(capsys):
    code = main(["preset", "--catalog", str(REPO / "catalog"), "--json"])
    presets = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    by_app = {p["app"]: p for p in presets}
    cat = load_catalog(REPO / "catalog")
    for name, p in by_app.items():
        r = cat.apps[name]
        if p["reason"]:
            assert "\n" not in p["reason"] and p["env"] == {}
            assert r.stack.fork != "upstream" or r.app.genesis_patches or r.app.python_packages, name
        else:
            assert p["ok"] and p["problems"] == [], (name, p["problems"])
            assert p["env"]["MODEL_SOURCE"].startswith("hf://") and p["env"]["ENGINE_ARGS"]
    upstream = [n for n, p in by_app.items() if cat.apps[n].stack.fork == "upstream"]
    assert upstream and all(by_app[n]["ok"] for n in upstream if not by_app[n]["reason"])
