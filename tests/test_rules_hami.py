"""HAMi rules: docs/domain.md crash rule 1 (the `0m` limit) and every malformed or inconsistent limit.

Each test copies the embedded catalog, applies the setting through the app's `env` (the resolved env is what
is judged), and runs `catalog check` through the CLI entry point.
"""

from __future__ import annotations

import pytest

from generator.rules.hami import hami_bytes

from support.checks import E2B, FAST, add_env, check, findings, line_of, one, set_app


def test_zero_limit_override_is_the_0m_crash(catalog_copy, capsys):
    add_env(catalog_copy, FAST, CUDA_DEVICE_MEMORY_LIMIT_0="0m")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1
    f = one(data, "HAMI002")
    assert f["severity"] == "error"
    assert "`CUDA_DEVICE_MEMORY_LIMIT_0=0m` (from env)" in f["message"]
    assert "invalid argument" in f["message"]
    assert f["file"].endswith(f"apps/{FAST}.yaml")
    assert f["line"] == line_of(catalog_copy, FAST, "CUDA_DEVICE_MEMORY_LIMIT_0")
    assert "24300m" in f["fix"]


def test_zero_limit_on_a_llamacpp_fork_too(catalog_copy, capsys):
    add_env(catalog_copy, E2B, CUDA_DEVICE_MEMORY_LIMIT_0="0")
    code, data = check(capsys, catalog_copy, E2B)
    assert code == 1 and "`CUDA_DEVICE_MEMORY_LIMIT_0=0`" in one(data, "HAMI002")["message"]


def test_empty_override_leaves_no_limit(catalog_copy, capsys):
    add_env(catalog_copy, FAST, CUDA_DEVICE_MEMORY_LIMIT_0="")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "no `CUDA_DEVICE_MEMORY_LIMIT_0`" in one(data, "HAMI001")["message"]


@pytest.mark.parametrize("value, read_as", [("24300Mi", "24300 bytes"), ("024300m", "10,432 MiB"), ("23.5g", "23,552 MiB")])
def test_kubernetes_units_octal_and_decimals_are_misread(catalog_copy, capsys, value, read_as):
    add_env(catalog_copy, FAST, CUDA_DEVICE_MEMORY_LIMIT_0=value)
    code, data = check(capsys, catalog_copy, FAST)
    f = one(data, "HAMI003")
    assert code == 1 and f"`CUDA_DEVICE_MEMORY_LIMIT_0={value}`" in f["message"] and read_as in f["message"]


def test_limit_above_the_card(catalog_copy, capsys):
    add_env(catalog_copy, FAST, CUDA_DEVICE_MEMORY_LIMIT_0="30g")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "30,720 MiB, above the 24,463 MiB" in one(data, "HAMI004")["message"]


def test_limit_differs_from_gpumem_and_manifest(catalog_copy, capsys):
    """The maintainer's vLLM workaround used 24000m; the catalog states one cap everywhere (docs/domain.md, HAMi)."""
    add_env(catalog_copy, FAST, CUDA_DEVICE_MEMORY_LIMIT_0="24000m")
    code, data = check(capsys, catalog_copy, FAST)
    places = {f["message"].split(" but ")[1] for f in findings(data, "HAMI005")}
    assert code == 1
    assert "values engine.resources.limits nvidia.com/gpumem is 24,300 MiB" in places
    assert "manifest requiredGPUMemory is 24,300 MiB" in places
    assert "24,000 MiB" in one(data, "CON005")["message"]


def test_global_limit_is_judged_too(catalog_copy, capsys):
    add_env(catalog_copy, FAST, CUDA_DEVICE_MEMORY_LIMIT="0m")
    code, data = check(capsys, catalog_copy, FAST)
    assert code == 1 and "`CUDA_DEVICE_MEMORY_LIMIT=0m`" in one(data, "HAMI002")["message"]


def test_request_above_the_device_cap_warns(catalog_copy, capsys):
    set_app(catalog_copy, E2B, gpu_memory_mib=24400)
    code, data = check(capsys, catalog_copy, E2B)
    assert one(data, "HAMI006")["severity"] == "warning"


@pytest.mark.parametrize("value, expected", [("24300m", 24300 * 2**20), ("1g", 2**30), ("1048576k", 2**30),
                                             ("1073741824", 2**30), ("0x10m", 16 * 2**20), ("010m", 8 * 2**20),
                                             ("0m", 0), ("abc", 0), ("24300Mi", 24300)])
def test_hami_parser_follows_get_limit_from_env(value, expected):
    assert hami_bytes(value) == expected


# --- three numbers: the scheduler request, the in-container cap, the engine's budget (chart/gpumem.py) ---------

BELT = {"field": "gpu_memory_mib", "value": "30000", "note": "a belt against HAMi-core's accounting underflow",
        "source": "a fixture measurement"}


def test_a_request_above_the_card_is_an_error(catalog_copy, capsys):
    set_app(catalog_copy, E2B, gpu_memory_mib=30000)
    code, data = check(capsys, catalog_copy, E2B)
    f = one(data, "HAMI007")
    assert code == 1 and f["severity"] == "error"
    assert "is 30,000 MiB, above the 24,463 MiB of Olares One" in f["message"]


def test_a_measured_belt_raises_only_the_in_container_cap(catalog_copy, capsys):
    from generator.catalog import load_catalog
    from generator.chart.plan import plan
    from generator.chart.render import render

    set_app(catalog_copy, E2B, gpu_memory_mib=30000, measured=[BELT])
    code, data = check(capsys, catalog_copy, E2B)
    assert not findings(data, "HAMI007") and not findings(data, "HAMI005") and not findings(data, "HAMI006")
    assert one(data, "HAMI004")["severity"] == "warning"
    spec = plan(load_catalog(catalog_copy).select([E2B])[0])
    assert spec.gpu is not None
    assert (spec.gpu.scheduler.mib, spec.gpu.hami_cap.mib, spec.gpu.engine_budget.mib) == (24300, 30000, 24463)
    assert "measured belt" in spec.gpu.hami_cap.origin and "hami_cap_mib" in spec.gpu.scheduler.origin
    tree = render(spec)
    assert tree["values.yaml"].count("nvidia.com/gpumem: 24300") == 2
    assert "value: 30000m" in tree["values.yaml"]
    assert "requiredGPUMemory: 24300Mi" in tree["OlaresManifest.yaml"]
    assert "limitedGPUMemory: 24300Mi" in tree["OlaresManifest.yaml"]


def test_explain_shows_the_three_values_with_their_origin(catalog_copy, capsys):
    import json

    from generator.cli import main

    assert main(["explain", E2B, "--catalog", str(catalog_copy), "--json"]) == 0
    gpu = json.loads(capsys.readouterr().out)["gpu_memory"]
    assert set(gpu) == {"scheduler_request", "hami_cap", "engine_budget"}
    assert gpu["scheduler_request"]["mib"] == gpu["hami_cap"]["mib"] and gpu["hami_cap"]["origin"]
