"""One app, several devices (generator/fit/devices.py, docs/devices.md), on tests/fixtures/catalog_devices: Llama 2 7B
on a small Ada card, a pre-Ada card and a unified-memory arm64 box, with stacks that are amd64 only, built for sm_120
only, or multi-arch. The fit is the real one (no stand-in); the CLI runs in-process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.chart.pipeline import render_app
from generator.core.errors import InputError
from generator.fit.devices import STEP_TOKENS, device_plan, device_plans, exclusions, variant_on
from generator.fit.sizing import size_gpu

from support.catalogs import FIXTURES, edit_app
from support.smoke import run_cli

DEVICES = FIXTURES / "catalog_devices"


@pytest.fixture
def cat_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(DEVICES, dest)
    return dest


def test_an_app_that_targets_one_device_has_one_plan_its_own():
    cat = load_catalog(DEVICES)
    plans = device_plans(cat.apps["plain"])
    assert [(p.device, p.primary, p.context) for p in plans] == [("small-ada", True, 1024)]
    assert plans[0].runs and plans[0].gpu_mib <= plans[0].limit_mib


def test_a_stack_without_the_devices_cpu_or_kernels_is_excluded_with_the_reason():
    cat = load_catalog(DEVICES)
    multi = {p.device: p for p in device_plans(cat.apps["multi"])}
    arm = multi["big-unified"]
    assert not arm.runs and "llamacpp-b8740" in arm.excluded[0] and "arm64" in arm.excluded[0]
    assert arm.accelerator == "nvidia-gb10"
    spread = {p.device: p for p in device_plans(cat.apps["spread"])}
    assert not spread["old-ampere"].runs
    assert "sm_120" in spread["old-ampere"].excluded[0] and "sm_86" in spread["old-ampere"].excluded[0]
    assert variant_on(cat.apps["spread"], "old-ampere") is None


def test_fp8_kv_and_nvfp4_need_their_gpu_generation():
    cat = load_catalog(DEVICES)
    r = cat.apps["multi"]  # its own device is the Ampere card (sm_86)
    fp8 = type(r)(**{**r.__dict__, "app": r.app.model_copy(update={"kv_cache_type": "fp8_e4m3"})})
    assert any("FP8" in why and "sm_89" in why for why in exclusions(fp8))
    ada = variant_on(r, "small-ada")
    assert ada is not None
    fp8_ada = type(ada)(**{**ada.__dict__, "app": ada.app.model_copy(update={"kv_cache_type": "fp8_e4m3"})})
    assert exclusions(fp8_ada) == []  # Ada has FP8


def test_the_fit_chooses_the_longest_context_that_fits_and_the_most_precise_kv_that_reaches_it():
    cat = load_catalog(DEVICES)
    multi = cat.apps["multi"]
    small = device_plan(multi, "small-ada")
    assert small is not None and small.runs and small.context_chosen
    assert 0 < small.context < small.max_context and small.context % STEP_TOKENS == 0
    assert small.verdict != "FAIL" and small.gpu_mib <= small.limit_mib
    chosen = variant_on(multi, "small-ada")
    assert chosen is not None and chosen.app.context_length == small.context
    longer = type(chosen)(**{**chosen.__dict__, "app": chosen.app.model_copy(
        update={"context_length": small.context + STEP_TOKENS})})
    assert not size_gpu(longer).fits_limit  # one step more does not fit the cap
    assert any("does not fit" in g for g in small.gave_up)
    # the unified box holds the whole context at f16, where the app's own device runs q4_0 at 1,024 tokens
    spread = cat.apps["spread"]
    big = device_plan(spread, "big-unified")
    assert big is not None and big.context == big.max_context == 4096 and big.kv == "f16"
    assert big.context > spread.app.context_length
    assert "KV f16 instead of q4_0" in big.gave_up
    assert big.roof_empty_tps is not None and big.roof_full_tps is not None
    assert big.roof_full_tps < big.roof_empty_tps  # the KV read grows with the context


def test_an_entry_that_states_its_context_keeps_it(cat_copy):
    edit_app(cat_copy, "spread", devices=[{"device": "big-unified", "stack": "llamacpp-multiarch",
                                           "context_length": 2048, "kv_cache_type": "q8_0"}])
    plan = device_plan(load_catalog(cat_copy).apps["spread"], "big-unified")
    assert plan is not None and (plan.context, plan.kv, plan.context_chosen) == (2048, "q8_0", False)


def test_an_unknown_device_or_stack_in_devices_stops_the_load_with_file_and_line(cat_copy):
    edit_app(cat_copy, "multi", devices=[{"device": "small-ada"}, {"device": "nosuchcard"},
                                         {"device": "big-unified", "stack": "nosuchstack"}])
    with pytest.raises(InputError) as err:
        load_catalog(cat_copy)
    text = str(err.value)
    assert "multi.yaml" in text and "devices.1.device" in text and "nosuchcard" in text
    assert "devices.2.stack" in text and "nosuchstack" in text


def test_a_device_listed_twice_or_the_own_device_again_is_refused(cat_copy):
    edit_app(cat_copy, "multi", devices=[{"device": "old-ampere"}])
    with pytest.raises(InputError, match="devices lists a device twice"):
        load_catalog(cat_copy)


def test_a_variant_is_checked_against_its_own_stack(cat_copy):
    edit_app(cat_copy, "spread", speculative={"method": "mtp", "tokens": 3})
    with pytest.raises(InputError) as err:
        load_catalog(cat_copy)
    assert "speculative" in str(err.value)
    edit_app(cat_copy, "spread", speculative=None)
    edit_app(cat_copy, "spread", devices=[{"device": "big-unified", "stack": "llamacpp-multiarch",
                                           "speculative": {"method": "mtp", "tokens": 3}}])
    with pytest.raises(InputError) as err:
        load_catalog(cat_copy)
    assert "devices.0.speculative" in str(err.value) and "Big Unified" in str(err.value)


def test_targets_do_not_change_the_chart_of_the_own_device(cat_copy):
    """A target of another mode adds that mode to the v3 chart (docs/devices.md "Charts") and leaves the own device's
    envelope and engine values as they were; the v2 chart (one device) does not change its content (its hash: only
    the comment block values.yaml carries for `catalog import` names the new target, generator/chart/carried.py)."""
    import yaml

    from generator.versions.state import content_hash

    before = {p: render_app(load_catalog(cat_copy).apps["plain"], p) for p in ("olares-v3", "olares-v2")}
    edit_app(cat_copy, "plain", devices=[{"device": "big-unified", "stack": "llamacpp-multiarch"}])
    after = {p: render_app(load_catalog(cat_copy).apps["plain"], p) for p in ("olares-v3", "olares-v2")}
    assert content_hash(after["olares-v2"]) == content_hash(before["olares-v2"])
    assert {k: v for k, v in after["olares-v2"].items() if k != "values.yaml"} == \
        {k: v for k, v in before["olares-v2"].items() if k != "values.yaml"}
    assert "#   stack: llamacpp-multiarch" in after["olares-v2"]["values.yaml"]
    old, new = (yaml.safe_load(t["OlaresManifest.yaml"])["spec"]["accelerator"] for t in (before["olares-v3"],
                                                                                          after["olares-v3"]))
    assert new[0] == old[0] and [e["mode"] for e in new] == ["nvidia", "nvidia-gb10"]
    old_values, new_values = (yaml.safe_load(t["values.yaml"]) for t in (before["olares-v3"], after["olares-v3"]))
    assert new_values["engine"] == old_values["engine"] and "nvidia-gb10" in new_values["modes"]


def test_explain_app_device_and_list_device(capsys):
    code, out, _ = run_cli(["explain", "spread", "--device", "big-unified", "--json", "--catalog", str(DEVICES)],
                           capsys)
    assert code == 0
    data = json.loads(out)
    assert (data["device"], data["context"], data["kv"], data["accelerator"]) == ("big-unified", 4096, "f16",
                                                                                 "nvidia-gb10")
    # a device the app does not target: no plan there, the predicted speed of its own argv on that card (issue 41)
    code, out, err = run_cli(["explain", "plain", "--device", "big-unified", "--catalog", str(DEVICES)], capsys)
    assert code == 0 and "does not target device 'big-unified'" in out and "predicted" in out
    code, out, _ = run_cli(["explain", "multi", "--json", "--catalog", str(DEVICES)], capsys)
    assert code == 0
    assert [d["device"] for d in json.loads(out)["devices"]] == ["old-ampere", "small-ada", "big-unified"]
    code, out, _ = run_cli(["list", "--device", "big-unified", "--json", "--catalog", str(DEVICES)], capsys)
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == {"multi", "spread"}
    assert rows["multi"]["status"] == "excluded" and "arm64" in rows["multi"]["excluded"][0]
    assert rows["spread"]["context"] == 4096 and rows["spread"]["stack"] == "llamacpp-multiarch"
    code, out, _ = run_cli(["list", "--device", "big-unified", "--catalog", str(DEVICES)], capsys)
    assert code == 0 and "excluded" in out and "spread" in out and "plain" not in out
    code, _, err = run_cli(["list", "--device", "nosuchcard", "--catalog", str(DEVICES)], capsys)
    assert code == 2 and "unknown device" in err


def test_the_store_card_carries_each_devices_plan():
    """The store page's card (generator/market/page.py) lists the plan of every device the app targets."""
    from generator.market.page import _card

    cat = load_catalog(DEVICES)
    plots: dict[str, bytes] = {}
    card = _card(cat.apps["spread"], {}, [], plots)
    assert [d.device for d in card.devices] == ["small-ada", "big-unified", "old-ampere"]
    assert card.devices[1].context == 4096 and not card.devices[2].runs
    assert _card(cat.apps["plain"], {}, [], plots).devices == ()  # one device: no devices line
