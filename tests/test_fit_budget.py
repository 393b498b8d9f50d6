"""vLLM's budget as measured: util x the total vLLM reads, which on the Olares One is the card's 24,463 MiB.

Measured (github.com/aamsellem/orales-one-market vllmqwen36turbo27bone/OlaresManifest.yaml@6a34b5bb upgradeDescription):
- v2.5.1/v2.5.6: 2.97 GiB KV available at gpu_memory_utilization 0.97 under a 23000m HAMi cap; 96K needs 3.17 GiB,
  128K 3.94 GiB; "vLLM estimate 88704" tokens.
- v2.5.7: at the 24300m cap vLLM "still reports the practical cap at 88704 tokens (3.94 GiB KV needed at 128K vs only
  2.97 GiB available)", "because vLLM allocates gpu_memory_utilization=0.97 * total_vram first".
- v2.5.2: the 24300m cap is "~150 MB margin under hardware 24463 MB cap".
vLLM's code (vllm/v1/worker/utils.py `request_memory` at v0.20.0): requested = ceil(total_memory x utilization),
total_memory from cudaMemGetInfo (docs/fit.md "Which total vLLM reads").

The market fixture's Fast is the 2.5.6 app (131,072 tokens) with the one 23000m row; the 24300m figure is predicted.
"""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from generator.catalog import load_catalog
from generator.cli import main
from generator.engines import engine_for
from generator.engines.settings import settings_for
from generator.fit.estimate import estimate

from support.catalogs import edit_yaml
from support.checks import DENSE, E4B, FAST, add_env, check, findings, one, set_app

VLLM_ESTIMATE = 88_704  # tokens (v2.5.1, v2.5.7)
AVAILABLE_GIB = 2.97
TOLERANCE = 0.03


def _fit(catalog, **app):
    if app:
        set_app(catalog, FAST, **app)
    r = load_catalog(catalog).apps[FAST]
    engine = engine_for(r)
    return estimate(r, settings_for(r, engine))


def close(value: float, expected: float, tolerance: float = TOLERANCE) -> bool:
    return abs(value / expected - 1) <= tolerance


@pytest.mark.parametrize("cap", [23000, 24300])
def test_both_measured_rows_2_97_gib_at_23000m_and_24300m(catalog_copy, cap):
    result = _fit(catalog_copy, gpu_memory_mib=cap)
    assert close(result.kv_available_mib() / 1024, AVAILABLE_GIB)
    budget = next(p for p in result.pools if p.key == "budget")
    assert budget.capacity_mib == pytest.approx(0.97 * 24463)  # util x the card, whatever the cap
    assert "24,463 MiB" in budget.note


def test_the_hami_cap_reading_would_predict_more_kv_at_24300m(catalog_copy):
    """What the fit said before: HAMi reports its cap as the total, so 0.97 x 1300 MiB more KV at 24300m (4.20 GiB,
    the maintainer's own 2.5.6 guess "~4.27 GiB"). vLLM said 2.97 GiB: that reading is refuted by the 24300m row."""
    edit_yaml(catalog_copy / "devices" / "olares-one.yaml", reported_total="hami_cap")
    result = _fit(catalog_copy, gpu_memory_mib=24300)
    assert close(result.kv_available_mib() / 1024, 4.20)
    assert not close(result.kv_available_mib() / 1024, AVAILABLE_GIB, 0.2)


def test_two_rows_at_two_caps_agree_only_under_the_device_total(catalog_copy):
    """Adding the 24300m row: under the device total both rows give the same non-KV memory (one mean, the same
    prediction); under the cap reading they would disagree by 0.97 x 1300 MiB."""
    path = catalog_copy / "apps" / f"{FAST}.yaml"
    yaml = YAML(typ="rt")
    data = yaml.load(path.read_text(encoding="utf-8"))
    first = next(row for row in data["calibration"] if row["measure"] == "kv_available")
    second = dict(first, cap_mib=24300, what="vLLM boot at 24300m: still 2.97 GiB KV available",
                  source="github.com/aamsellem/orales-one-market vllmqwen36turbo27bone/OlaresManifest.yaml v2.5.7")
    data["calibration"].append(second)
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)
    both = _fit(catalog_copy)
    assert close(both.kv_available_mib() / 1024, AVAILABLE_GIB, 0.001)
    assert "from 2 measured row(s)" in " ".join(both.calibrated)


def test_check_fails_fast_at_131072_and_names_vllms_largest_context(catalog_copy, capsys):
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "FIT001")
    assert code == 1 and f["severity"] == "error" and f["message"].startswith("FAIL at 131,072 tokens")
    assert "vLLM budget (util x total)" in f["message"]
    tokens = int(f["fix"].split("at most ")[1].split(" tokens")[0].replace(",", ""))
    assert close(tokens, VLLM_ESTIMATE)


def test_fast_at_88000_passes(catalog_copy, capsys):
    set_app(catalog_copy, FAST, context_length=88000,
            description="Qwen3.6 27B fastest stack — vLLM Turbo + Genesis, TurboQuant K8V4 KV and MTP, 88K context.")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 0 and data["errors"] == 0
    assert all(f["severity"] == "warning" for f in findings(data, "FIT001"))
    result = _fit(catalog_copy)
    assert result.kv_needed_mib() <= result.kv_available_mib()  # vLLM boots: 88,000 < 88,704
    assert result.margin("outside") > 0  # P38's 512 MiB fits in the 571 MiB the cap leaves above the budget


def test_explain_states_the_total_it_multiplies(catalog_copy, capsys):
    assert main(["explain", FAST, "--catalog", str(catalog_copy), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    budget = next(p for p in data["fit"]["pools"] if p["key"] == "budget")
    assert budget["note"].startswith("0.97 (from gpu_memory_utilization) x Olares One's total 24,463 MiB")
    assert any("does NOT fit" in line for line in data["fit"]["facts"])


def test_cuda_graphs_are_profiled_inside_the_budget_from_vllm_0_20(catalog_copy):
    """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1 from v0.20.0 (vllm/envs.py@v0.20.0), 0 in v0.19.1: the
    graphs sit in the budget on the nightly (E4B), after it on 0.19.1 (the dense 27B app), and the env wins."""
    def graphs(app: str) -> str:
        r = load_catalog(catalog_copy).apps[app]
        engine = engine_for(r)
        fit = estimate(r, settings_for(r, engine))
        return next(p.pool for p in fit.parts if p.component.startswith("CUDA graphs"))

    assert graphs(E4B) == "budget" and graphs(DENSE) == "outside"
    add_env(catalog_copy, E4B, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS="0")
    add_env(catalog_copy, DENSE, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS="1")
    assert graphs(E4B) == "outside" and graphs(DENSE) == "budget"
