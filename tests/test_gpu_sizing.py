"""GPU memory sized by the fit (generator/fit/sizing.py, docs/fit.md "GPU memory sized by the fit").

An app that leaves `gpu_memory_mib` out gets need + max(512 MiB, 5 %), rounded up to 256 MiB, never above the
device's HAMi cap nor into the room it leaves; that one number is nvidia.com/gpumem, CUDA_DEVICE_MEMORY_LIMIT_0 and
the manifest's GPU memory, and a vLLM app also gets the utilization that yields the budget. A stated number is
checked: too small FAILs (FIT001), far above warns (FIT002), a broken room is FIT003. Real parts: the market
fixture (copied), the real planner, renderer, chart lint and CLI.
"""

from __future__ import annotations

import json
import math

import yaml

from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.chart.render import render
from generator.cli import main
from generator.engines.settings import settings_for
from generator.fit.estimate import estimate
from generator.fit.ledger import TIGHT_FRACTION, TIGHT_MIN_MIB
from generator.fit.sizing import MARGIN_FRACTION, MARGIN_MIN_MIB, STEP_MIB, size_gpu
from generator.lint.run import lint_chart

from support.catalogs import edit_app
from support.checks import E2B, E4B, FAST, G26, check, findings, one, set_app

DEVICE_CAP = 24300
CARD = 24463


def planned(catalog, app: str, profile: str = "olares-v3"):
    r = load_catalog(catalog).apps[app]
    spec = plan(r, profile=profile)
    return spec, render(spec)


def the_one_number(spec, tree) -> set[str]:
    """Every place the GPU memory appears in the rendered chart, as text."""
    values = yaml.safe_load(tree["values.yaml"])["engine"]
    manifest = yaml.safe_load(tree["OlaresManifest.yaml"])
    accel = manifest["spec"]["accelerator"][0]
    env = {e["name"]: e["value"] for e in values["env"]}
    return {str(values["resources"]["requests"]["nvidia.com/gpumem"]),
            str(values["resources"]["limits"]["nvidia.com/gpumem"]), env["CUDA_DEVICE_MEMORY_LIMIT_0"].rstrip("m"),
            accel["requiredGPUMemory"].rstrip("Mi"), accel["limitedGPUMemory"].rstrip("Mi"),
            str(spec.resolved.app.gpu_memory_mib)}


def test_a_llamacpp_app_without_gpu_memory_gets_need_plus_margin(catalog_copy):
    set_app(catalog_copy, G26, gpu_memory_mib=None)
    spec, tree = planned(catalog_copy, G26)
    sizing = size_gpu(load_catalog(catalog_copy).apps[G26])
    margin = max(MARGIN_MIN_MIB, math.ceil(MARGIN_FRACTION * sizing.need_mib))
    assert sizing.margin_mib == margin
    assert sizing.cap_mib == math.ceil((sizing.need_mib + margin) / STEP_MIB) * STEP_MIB < DEVICE_CAP
    assert sizing.cap_mib % STEP_MIB == 0 and sizing.stated_mib is None
    assert the_one_number(spec, tree) == {str(sizing.cap_mib)}
    assert spec.resolved.sized == ("gpu_memory_mib",)
    fit = estimate(spec.resolved, settings_for(spec.resolved, spec.engine))
    assert fit.verdict == "FIT" and fit.margin("cap") >= margin - STEP_MIB
    assert lint_chart(G26, tree) == []


def test_a_vllm_app_gets_the_utilization_that_yields_its_budget(catalog_copy):
    set_app(catalog_copy, E4B, gpu_memory_mib=None, gpu_memory_utilization=None)
    edit_app(catalog_copy, E4B, extra_args=["--limit-mm-per-prompt", '{"image": 1, "audio": 0}', "--dtype", "auto",
                                            "--max-num-seqs", "4"])
    spec, tree = planned(catalog_copy, E4B)
    util = spec.resolved.app.gpu_memory_utilization
    assert spec.resolved.sized == ("gpu_memory_mib", "gpu_memory_utilization")
    argv = spec.engine.argv
    assert argv[argv.index("--gpu-memory-utilization") + 1] == repr(util)
    cap = spec.resolved.app.gpu_memory_mib
    assert the_one_number(spec, tree) == {str(cap)}
    fit = estimate(spec.resolved, settings_for(spec.resolved, spec.engine))
    budget = next(p for p in fit.pools if p.key == "budget")
    assert budget.capacity_mib == util * CARD  # vLLM sizes from the card's total on the Olares One
    tight = max(TIGHT_MIN_MIB, TIGHT_FRACTION * cap)
    assert fit.verdict == "FIT" and fit.margin("budget") >= tight and fit.margin("outside") >= tight
    assert lint_chart(E4B, tree) == []


def test_a_stated_utilization_gets_a_cap_that_holds_its_budget(catalog_copy):
    """vLLM reserves util x the card's total whatever the parts need: an app that states 0.90 and no GPU memory
    gets a cap that holds that budget, what comes after the KV pool and half the margin, so the fit says FIT
    (sizing from the parts alone gave a cap below the budget, and FIT001 failed the app's own setting)."""
    set_app(catalog_copy, E4B, gpu_memory_mib=None, gpu_memory_utilization=0.9)
    edit_app(catalog_copy, E4B, extra_args=["--limit-mm-per-prompt", '{"image": 1, "audio": 0}', "--dtype", "auto",
                                            "--max-num-seqs", "4"])
    r = load_catalog(catalog_copy).apps[E4B]
    sizing = size_gpu(r)
    assert sizing.utilization == 0.9
    held = 0.9 * CARD + sizing.after_kv_mib + sizing.margin_mib / 2
    assert held <= sizing.cap_mib < held + STEP_MIB and sizing.cap_mib % STEP_MIB == 0
    assert sizing.cap_mib > math.ceil((sizing.need_mib + sizing.margin_mib) / STEP_MIB) * STEP_MIB
    spec, tree = planned(catalog_copy, E4B)
    assert spec.resolved.sized == ("gpu_memory_mib",) and spec.resolved.app.gpu_memory_utilization == 0.9
    fit = estimate(spec.resolved, settings_for(spec.resolved, spec.engine))
    assert fit.verdict == "FIT", fit.verdict
    assert the_one_number(spec, tree) == {str(sizing.cap_mib)}


def test_never_above_the_device_cap(catalog_copy):
    """Fast at 131,072 needs more than the card: the fit gives it the device cap, and FIT001 fails it."""
    set_app(catalog_copy, FAST, gpu_memory_mib=None)
    r = load_catalog(catalog_copy).apps[FAST]
    sizing = size_gpu(r)
    assert sizing.cap_mib == DEVICE_CAP and not sizing.fits_limit and "HAMi cap" in sizing.limited_by
    spec = plan(r)
    assert spec.resolved.app.gpu_memory_mib == DEVICE_CAP
    assert spec.resolved.app.gpu_memory_utilization == 0.97  # stated: kept


def test_a_stated_cap_too_small_fails(catalog_copy, capsys):
    set_app(catalog_copy, G26, gpu_memory_mib=12000)
    code, data = check(capsys, catalog_copy, G26)
    f = one(data, "FIT001")
    assert code == 1 and f["severity"] == "error" and f["message"].startswith("FAIL")


def test_a_stated_cap_far_above_the_need_warns_with_what_it_locks_away(catalog_copy, capsys):
    code, data = check(capsys, catalog_copy, G26)  # the fixture states 24300
    sizing = size_gpu(load_catalog(catalog_copy).apps[G26])
    f = one(data, "FIT002")
    assert code == 0 and f["severity"] == "warning"
    assert f"locks away {DEVICE_CAP - sizing.cap_mib:,} MiB" in f["message"]
    assert f"the fit sizes it at {sizing.cap_mib:,} MiB" in f["message"]
    set_app(catalog_copy, G26, gpu_memory_mib=sizing.cap_mib + 1024)  # within 2 GiB: no warning
    code, data = check(capsys, catalog_copy, G26)
    assert findings(data, "FIT002") == []


def test_the_room_an_app_leaves_bounds_its_cap(catalog_copy, capsys):
    set_app(catalog_copy, E2B, gpu_memory_mib=None,
            gpu_room={"mib": 7806, "beside": "Kyutai STT + TTS", "source": "test"})
    r = load_catalog(catalog_copy).apps[E2B]
    sizing = size_gpu(r)
    assert sizing.limit_mib == CARD - 7806 and "Kyutai STT + TTS" in sizing.limited_by
    assert plan(r).resolved.app.gpu_memory_mib + 7806 <= CARD
    code, data = check(capsys, catalog_copy, E2B)
    assert findings(data, "FIT003") == []
    set_app(catalog_copy, E2B, gpu_room={"mib": 20000, "beside": "a big speech stack", "source": "test"})
    code, data = check(capsys, catalog_copy, E2B)
    assert code == 1 and "leaving 20,000 MiB for a big speech stack" in one(data, "FIT003")["message"]


def test_a_stated_cap_that_eats_the_room_fails(catalog_copy, capsys):
    set_app(catalog_copy, E2B, gpu_room={"mib": 7806, "beside": "Kyutai STT + TTS", "source": "test"})
    code, data = check(capsys, catalog_copy, E2B)  # states 24300
    assert code == 1
    assert "gpu_memory_mib 24,300 + the 7,806 MiB left for Kyutai STT + TTS" in one(data, "FIT003")["message"]


def test_explain_device_shows_which_apps_run_together(catalog_copy, capsys):
    """Two sized E2B apps fit on the card together; the 24300 MiB apps run alone."""
    set_app(catalog_copy, E2B, gpu_memory_mib=None)
    text = (catalog_copy / "apps" / f"{E2B}.yaml").read_text(encoding="utf-8")
    (catalog_copy / "apps" / "gemma4e2btwo.yaml").write_text(text.replace(f"name: {E2B}", "name: gemma4e2btwo"),
                                                             encoding="utf-8")
    assert main(["explain", "--device", "olares-one", "--catalog", str(catalog_copy), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    apps = {a["app"]: a for a in data["apps"]}
    assert apps[E2B]["sized"] and apps[E2B]["gpu_mib"] < CARD // 2
    assert [E2B, "gemma4e2btwo"] in data["groups"]
    assert data["alongside"][E2B] == ["gemma4e2btwo"] and data["alongside"][FAST] == []
    assert main(["explain", "--device", "olares-one", "--catalog", str(catalog_copy)]) == 0
    assert "together: gemma4e2bone, gemma4e2btwo" in capsys.readouterr().out
    assert main(["explain", "--device", "nosuchcard", "--catalog", str(catalog_copy)]) == 2
    # with an APP, --device is the app on that device (docs/devices.md): its own device, or one it does not target
    assert main(["explain", FAST, "--device", "olares-one", "--catalog", str(catalog_copy)]) == 0
    assert main(["explain", FAST, "--device", "nosuchcard", "--catalog", str(catalog_copy)]) == 2
    assert main(["explain", "--catalog", str(catalog_copy)]) == 2
