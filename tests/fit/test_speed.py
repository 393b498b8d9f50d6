"""The speed model (generator/fit/speed.py): predictions, their bands, and the errors on bad input.

Logic tests run on tests/fixtures/catalog_roofline (Llama 2 7B Q4_0 on desktop cards, public llama.cpp figures as
benchmarks: devices no fit row was measured on); tests/test_embedded_catalog.py checks that every active app of the
embedded catalog gets a number on every device of it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from generator.catalog import load_catalog, load_device_file
from generator.core.errors import InputError, UsageError
from generator.fit.speed import (ANY_ARCH, BAND_NO_FAMILY, BAND_OTHER_DEVICE, Coefficients, blocks, on_device, predict,
                                 speeds, weights_class)

from support.catalogs import FIXTURES
from support.smoke import run_cli

ROOF = FIXTURES / "catalog_roofline"
H100 = Path(__file__).resolve().parents[2] / "bench" / "speed" / "devices" / "h100-sxm.yaml"
H200 = H100.with_name("h200-sxm.yaml")


@pytest.fixture(scope="module")
def roof_cat():
    return load_catalog(str(ROOF))


def test_public_measurements_fall_in_the_stated_band(roof_cat):
    """Llama 2 7B Q4_0 on an RTX 3090, 3090 Ti and 4090 (llama.cpp PRs 6766, 4812): none of these cards is in the
    fit; each prediction's band holds the published figure."""
    for name in ("llama7b3090", "llama7b3090ti", "llama7b4090"):
        r = roof_cat.apps[name]
        bench = r.app.last_benchmark
        p = predict(r, 0, served=False)
        assert p.tokens_per_s is not None
        assert p.low <= bench.tokens_per_s <= p.high, (name, p.line, bench.tokens_per_s)
        assert "another device architecture" in p.basis  # stated: no fit row on Ampere / Ada


def test_more_context_is_slower_and_the_full_context_is_the_apps(roof_cat):
    r = roof_cat.apps["llama7b4090"]
    found = speeds(r)
    assert found is not None
    assert found.full.context == 4096 and found.short.context == 0
    assert found.full.tokens_per_s < found.short.tokens_per_s
    data = found.as_dict()
    assert data["predicted_tokens_per_s"] == round(found.short.tokens_per_s, 1)
    assert data["predicted_full_context_tokens_per_s"] == round(found.full.tokens_per_s, 1)


def test_more_bandwidth_is_faster_but_not_proportionally(roof_cat):
    """The launch overhead and the sampling do not shrink with bandwidth: twice the bandwidth is less than twice the
    speed."""
    r = roof_cat.apps["llama7b4090"]
    bw = r.device.memory_bandwidth_gb_s
    fast = replace(r, device=r.device.model_copy(update={"memory_bandwidth_gb_s": 2 * bw}))
    slow, quick = predict(r, 0).tokens_per_s, predict(fast, 0).tokens_per_s
    assert slow < quick < 2 * slow


def test_a_device_without_bandwidth_is_a_clear_error(roof_cat):
    r = roof_cat.apps["llama7bnobw"]
    assert speeds(r) is None  # explain / list show no number, as for the roofline
    with pytest.raises(UsageError, match="states no memory_bandwidth_gb_s"):
        predict(r, 0)


def test_an_architecture_without_a_family_gives_a_band_not_a_number(roof_cat):
    r = roof_cat.apps["llama7b4090"]
    arch = r.model.architecture.model_copy(update={"arch": "brand-new-arch"})
    odd = replace(r, model=r.model.model_copy(update={"architecture": arch}))
    p = predict(odd, 0)
    assert p.tokens_per_s is None
    assert p.band == BAND_NO_FAMILY and 0 < p.low < p.high
    assert "no speed family" in p.basis and "band only" in p.line


def test_speculation_with_measured_acceptance_is_faster_than_without(roof_cat):
    r = roof_cat.apps["qwenmtp"]
    with_spec = predict(r, 0, acceptance=0.8)
    plain = predict(r, 0, speculative=False)
    assert with_spec.tokens_per_step > 1 and with_spec.step_cost > 1
    assert with_spec.tokens_per_s > plain.tokens_per_s


def test_the_drafters_time_is_a_fixed_part_and_a_share_of_the_plain_step(roof_cat):
    """Measured on the H100 (bench/speed/h100-run6): the MTP step of a 4.9 ms and a 14.1 ms target costs 2.3 and 1.8
    ms more at N = 1, so the drafter's time is not a ratio of the target's step: a step of a shorter target costs
    more plain steps."""
    r = roof_cat.apps["qwenmtp"]
    coef = replace(Coefficients.fitted(), spec_first_s=2e-3, spec_next_s=1e-3, spec_next_share=0.2)
    p = predict(r, 0, acceptance=0.5, served=False, coef=coef)
    plain = p.overhead_s + p.memory_s
    n = round((p.tokens_per_step - 1) / 0.5)  # the app's draft length
    assert p.spec_fixed_s == pytest.approx(2e-3 + 1e-3 * (n - 1)) and p.spec_share == pytest.approx(0.2 * (n - 1))
    assert p.tokens_per_s == pytest.approx(p.tokens_per_step / (plain * (1 + 0.2 * (n - 1)) + 2e-3 + 1e-3 * (n - 1)))
    faster_card = r.device.model_copy(update={"memory_bandwidth_gb_s": r.device.memory_bandwidth_gb_s * 4})
    faster = predict(on_device(r, faster_card), 0,
                     acceptance=0.5, served=False, coef=coef)
    assert faster.step_cost > p.step_cost  # the fixed part weighs more on a shorter step


def test_an_unmeasured_architecture_takes_the_fit_across_architectures(roof_cat):
    """A device whose architecture has no fit row gets the launch cost and the efficiency fitted across every
    measured architecture (ANY_ARCH), not one measured architecture's: stated in the basis, with the wider band; a
    measured architecture keeps its own."""
    coef = Coefficients(
        {("llamacpp", "dense", "Hopper"): 0.5, ("llamacpp", "dense", ANY_ARCH): 0.4}, {},
        {("llamacpp", "Hopper"): 0.0, ("llamacpp", ANY_ARCH): 50e-6}, {}, 0.0, 0.0, 0.0)
    r = roof_cat.apps["llama7b4090"]  # Ada: no fit row
    layers = r.model.architecture.layers
    unseen = predict(r, 0, coef=coef)
    # a transformer layer is two kernel blocks (attention, FFN): the launch cost is counted per block
    assert unseen.efficiency == 0.4 and unseen.overhead_s == pytest.approx(2 * layers * 50e-6)
    assert "across architectures" in unseen.basis and unseen.band == BAND_OTHER_DEVICE
    hopper = predict(on_device(r, load_device_file(H100)), 0, coef=coef)
    assert hopper.efficiency == 0.5 and hopper.overhead_s == 0.0 and "fitted for dense on Hopper" in hopper.basis


def test_more_bandwidth_of_one_architecture_from_the_device_file_alone(roof_cat):
    """The H200's file (Hopper, 4,800 GB/s, public specification only) against the H100's (3,350 GB/s): faster, by
    less than the bandwidth ratio (the launch overhead stays), with the same fitted basis."""
    r = roof_cat.apps["llama7b4090"]
    h100, h200 = load_device_file(H100), load_device_file(H200)
    slow, fast = predict(on_device(r, h100), 0), predict(on_device(r, h200), 0)
    assert fast.basis == slow.basis and "Hopper" in fast.basis
    assert slow.tokens_per_s < fast.tokens_per_s < slow.tokens_per_s * h200.memory_bandwidth_gb_s / h100.memory_bandwidth_gb_s
    assert fast.overhead_s == slow.overhead_s


def test_a_device_file_with_its_public_specification_only(roof_cat, tmp_path):
    card = load_device_file(H100)
    p = predict(on_device(roof_cat.apps["llama7b4090"], card), 0)
    assert p.device == "h100-sxm" and p.tokens_per_s is not None and "Hopper" in p.basis
    broken = tmp_path / "broken.yaml"
    broken.write_text(H100.read_text().replace("memory_bandwidth_gb_s: 3350", "memory_bandwidth_gb_s: -1"))
    with pytest.raises(InputError):
        load_device_file(broken)


def test_explain_device_file_json_and_no_bandwidth_error(tmp_path, capsys):
    code, out, _ = run_cli(["explain", "llama7b4090", "--device", str(H100), "--json", "--catalog", str(ROOF)],
                           capsys)
    assert code == 0
    data = json.loads(out)
    assert data["device"] == "h100-sxm" and data["targets"] is False
    assert data["predicted_tokens_per_s"] > 0 and data["predicted_full_context_tokens_per_s"] > 0
    nobw = tmp_path / "nobw.yaml"
    nobw.write_text(H100.read_text().replace("memory_bandwidth_gb_s: 3350  # HBM3, NVIDIA's H100 SXM datasheet: "
                                             "3.35 TB/s\n", ""))
    code, _, err = run_cli(["explain", "llama7b4090", "--device", str(nobw), "--catalog", str(ROOF)], capsys)
    assert code == 2 and "states no memory_bandwidth_gb_s" in err


def test_list_json_and_table_carry_the_prediction(capsys):
    code, out, _ = run_cli(["list", "--json", "--catalog", str(ROOF)], capsys)
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["llama7b4090"]["predicted_tokens_per_s"] > rows["llama7b4090"]["predicted_full_context_tokens_per_s"]
    assert rows["llama7bnobw"]["predicted_tokens_per_s"] is None  # no bandwidth: no number, as for the roofline
    code, out, _ = run_cli(["list", "--catalog", str(ROOF)], capsys)
    assert code == 0 and "pred t/s" in out


def test_launch_cost_is_counted_per_kernel_block(roof_cat):
    """A transformer layer runs two kernel blocks (a mixer, an FFN); a Nemotron-H layer runs one (a Mamba-2 mixer, an
    attention or an FFN alone): the same layer count costs half the launches."""
    coef = Coefficients({("llamacpp", "dense", ANY_ARCH): 0.5}, {}, {("llamacpp", ANY_ARCH): 40e-6}, {}, 0.0, 0.0, 0.0)
    r = roof_cat.apps["llama7b4090"]
    layers = r.model.architecture.layers
    assert blocks(r) == 2 * layers
    arch = r.model.architecture.model_copy(update={"arch": "nemotron_h"})
    hybrid = replace(r, model=r.model.model_copy(update={"architecture": arch}))
    assert blocks(hybrid) == layers
    plain, thin = predict(r, 0, coef=coef), predict(hybrid, 0, coef=coef)
    assert plain.overhead_s == pytest.approx(2 * thin.overhead_s)
    assert plain.weights_s == pytest.approx(thin.weights_s)  # the same bytes at the same (dense) efficiency


def test_dense_families_share_one_weights_efficiency_moe_families_keep_their_own(roof_cat):
    """Dense matrices stream through the same matrix-vector kernels whatever the family: a dense family without a fit
    row of its own takes the `dense` class's efficiency as fitted; a MoE family is kept by its family."""
    assert weights_class("gemma4/dense") == weights_class("gqa/dense") == "dense"
    assert weights_class("gemma4/moe") == "gemma4/moe" and weights_class(None) is None
    coef = Coefficients({("llamacpp", "dense", "Hopper"): 0.6}, {}, {("llamacpp", "Hopper"): 0.0}, {}, 0.0, 0.0, 0.0)
    r = on_device(roof_cat.apps["llama7b4090"], load_device_file(H100))
    arch = r.model.architecture.model_copy(update={"arch": "gemma4"})
    gemma = replace(r, model=r.model.model_copy(update={"architecture": arch}))
    for app in (r, gemma):
        p = predict(app, 0, coef=coef)
        assert p.efficiency == 0.6 and "fitted for dense on Hopper" in p.basis
