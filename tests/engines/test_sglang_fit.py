"""An SGLang app end to end on a fixture catalog (tests/fixtures/catalog_small plus an SGLang stack and app made
here): the argv carries the computed fraction and request cap, the fit places SGLang's pools under the HAMi cap,
and a context the KV pool cannot hold FAILs, the fit naming the largest context that fits."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from generator.catalog import load_catalog
from generator.engines import engine_for, sglang
from generator.engines.settings import SglangSettings, settings_for
from generator.fit.estimate import estimate
from generator.fit.sizing import sized
from support.sglang_app import APP, STACK

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "catalog_small"


def _app(tmp_path: Path, context: int):
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURE, cat)
    (cat / "stacks" / "sglang-test.yaml").write_text(STACK, encoding="utf-8")
    (cat / "apps" / "gemmasglang.yaml").write_text(APP.format(context=context), encoding="utf-8")
    r = sized(load_catalog(cat).apps["gemmasglang"])
    spec = engine_for(r)
    return r, spec, estimate(r)


def test_the_argv_carries_the_computed_budget(tmp_path):
    r, spec, fit = _app(tmp_path, 32768)
    argv = spec.argv
    assert argv[:2] == ["--model-path", "google/gemma-4-E4B-it"]
    fraction = float(argv[argv.index("--mem-fraction-static") + 1])
    plan = sglang.plan(r, r.app.gpu_memory_mib or 0)
    assert fraction == plan.mem_fraction_static and 0.5 < fraction < 0.99
    s = settings_for(r, spec)
    assert isinstance(s, SglangSettings) and s.fraction.value == fraction and s.context.value == 32768
    assert fit.verdict in ("FIT", "TIGHT") and fit.engine == "sglang"
    # the static pool, SGLang's reserve and the CUDA context fit under the cap the chart gets
    assert fit.used("cap") <= fit.cap_mib


def test_a_context_the_pool_cannot_hold_fails_naming_the_largest(tmp_path):
    r, spec, fit = _app(tmp_path, 131072)
    assert fit.verdict == "FAIL" and fit.tightest.key == "kv"
    kv = next(p for p in fit.parts if p.component.startswith("KV full attention"))
    largest = int(re.search(r"holds ([\d,]+) tokens", kv.note).group(1).replace(",", ""))
    assert 0 < largest < 131072
    # the largest context fits when asked for
    _, _, ok = _app(tmp_path / "again", largest)
    assert ok.margin("kv") >= 0


def test_catalog_check_fails_the_context_and_names_the_largest(tmp_path, capsys):
    from generator.cli import main

    _app(tmp_path, 131072)
    code = main(["check", "gemmasglang", "--no-lint", "--catalog", str(tmp_path / "catalog")])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1 and "FIT001" in text and "FAIL at 131,072 tokens" in text
    assert re.search(r"lower the context to at most [\d,]+ tokens", text)


def test_the_fit_and_the_roofline_charge_the_same_kv_bytes(tmp_path):
    """An fp8 KV cache is 1 byte a value in SGLang's fit (engines/sglang.py cell_bytes) and in its roofline: both read
    SGLang's own dtype table (the settings' kv_slot_bytes), not llama.cpp's, which has no fp8_e4m3 and charged 2."""
    import dataclasses

    from generator.fit.memory import Geometry, group_bytes_per_token
    from generator.fit.roofline import roofline

    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURE, cat)
    (cat / "stacks" / "sglang-test.yaml").write_text(STACK, encoding="utf-8")
    (cat / "apps" / "gemmasglang.yaml").write_text(APP.format(context=16384) + "kv_cache_type: fp8_e4m3\n",
                                                   encoding="utf-8")
    r = sized(load_catalog(cat).apps["gemmasglang"])
    s = settings_for(r, engine_for(r))
    geo = Geometry.of(r.model.architecture)
    assert s.kv_slot_bytes(geo.full.head_dim) == geo.full.head_dim * 2 * 1.0
    assert s.kv_element_bytes == 1.0
    r = dataclasses.replace(r, device=r.device.model_copy(update={"memory_bandwidth_gb_s": 1000.0}))
    roof = roofline(r, 4096)
    assert roof is not None
    # the 4 full layers + the 3 of the 18 KV-shared layers that read one of their KV again (roofline.py _shared)
    full = group_bytes_per_token(geo.full, geo.full.head_dim * 2 * 1.0) * 4096 * (4 + 3) / 4
    assert sglang.cell_bytes(r.model.architecture, "fp8_e4m3") < sglang.cell_bytes(r.model.architecture, "auto")
    assert roof.kv_bytes >= full and roof.kv_bytes < 2 * full, roof
