"""An engine family that reuses none of llama.cpp's parts, added on a copy of the code: its own settings type, its own
KV dtype table and its own memory model, and nothing else edited.

tests/engines/test_add_an_engine.py adds a llama.cpp clone (llama-server's argv, settings and memory model under
another name). This test adds ToyKV, whose every engine-specific part is its own: the module
`generator/engines/toykv.py` (its argv, its `ToySettings` subclass of engines/values.py `Settings` with its KV dtype
table `TOY_KV_BYTES`, in which `int4` is half a byte, a type neither llama.cpp's nor vLLM's table has), its memory
model `generator/fit/toykv.py` (loaded by the family's `fit` name: weights + its own KV cache + a fixed runtime), the
registry entry, and in a copy of the fixture catalog its flag table, a stack and an app. The copied code then renders,
checks (rules, flag table, chart lint) and explains the app with the real CLI, and the test asserts that the fit and
the roofline both charge the KV cache with ToyKV's own 0.5 bytes per value, and that the two new modules and the
registry entry are the only code that changed.

ToyKV is a stand-in: no such server exists; what is under test is the seam, not an engine.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engines.test_add_an_engine import FIXTURE, REPO, _catalog, _changed, _json, add_engine

ENGINE_MODULE = '''"""ToyKV: a stand-in engine family for tests/engines/test_add_a_family.py (no such server exists). Nothing of it is
llama.cpp's: its argv, its settings type and its KV dtype table are its own; its memory model is generator/fit/toykv.py.
"""

from __future__ import annotations

from typing import ClassVar

from generator.catalog import Resolved
from generator.engines.argv import Argv, Flag, Given
from generator.engines.base import Arg, EngineSpec, Head, Own, build, given_args
from generator.engines.interface import EngineFamily, Get, Knobs, Said, Server, Text, semver
from generator.engines.values import EngineFamily as FamilyName, Settings, Value
from generator.schema import Stack
from generator.schema.engines import Family, declaration

TOY_KV_BYTES = {"fp16": 2.0, "int8": 1.0, "int4": 0.5}  # bytes per cached value
TOY_DEFAULT_KV = "fp16"
RUNTIME_MIB = 300  # what the toy server holds beside weights and KV


@dataclass_kw
class ToySettings(Settings):
    FAMILY: ClassVar[FamilyName] = Family("toykv")
    slots: Value[int]

    def kv_slot_bytes(self, head_dim: int) -> float:
        return head_dim * 2 * TOY_KV_BYTES.get(str(self.kv_k.value), 2.0)

    def kv_type_supported(self, dtype: str, stack: Stack) -> bool:
        return dtype in TOY_KV_BYTES


def own(head: Head) -> Own:
    app = head.r.app
    args = [Arg(("--model", str(head.weight.repo)), "app.model + app.quantization"),
            Arg(("--served-name", app.model_alias), "app.served_name"), head.listen(),
            Arg(("--context", str(app.context_length)), "app.context_length")]
    if app.kv_cache_type:
        args.append(Arg(("--kv-dtype", app.kv_cache_type), "app.kv_cache_type"))
    return Own(args)


def engine(r: Resolved) -> EngineSpec:
    return build(r, own)


def settings(r: Resolved, spec: EngineSpec) -> ToySettings:
    return _settings(r, Argv(spec))


def decide(r: Resolved) -> ToySettings:
    """The settings from the app's fields (the flags `own` writes), overridden by the stack's args and extra_args."""
    app = r.app
    flags = {"--context": Flag("--context", str(app.context_length), "app.context_length", 0)}
    if app.kv_cache_type:
        flags["--kv-dtype"] = Flag("--kv-dtype", app.kv_cache_type, "app.kv_cache_type", 0)
    return _settings(r, Given(flags, given_args(r)))


def _settings(r: Resolved, argv: Argv | Given) -> ToySettings:
    ctx, kv = argv.last("--context"), argv.last("--kv-dtype")
    context = int(ctx.value) if ctx and ctx.value and ctx.value.isdigit() else r.app.context_length
    kv_value = Value(kv.value if kv and kv.value else TOY_DEFAULT_KV, kv, "ToyKV default")
    return ToySettings(context=Value(context, ctx), kv_k=kv_value, kv_v=kv_value,
                       slots=Value(1, None, "ToyKV serves one sequence"))


def _said(said: Said, get: Get, text: Text) -> tuple[str | None, str | None, int | None]:
    return (text(said.version.get("version")) if said.version else None, None, None)


FAMILY = EngineFamily(declaration("toykv"), engine, lambda argv: frozenset(), settings, decide, fit="toykv",
                      server=Server("ToyKV", "toykv", _said, semver),
                      knobs=Knobs(("--context",), False, (), "", None, "%d", None))
'''.replace("@dataclass_kw", "@dataclass(frozen=True, kw_only=True)").replace(
    "from typing import ClassVar", "from dataclasses import dataclass\nfrom typing import ClassVar")

FIT_MODULE = '''"""ToyKV's memory model (tests/engines/test_add_a_family.py): one pool, the HAMi cap, holding the weights, a fixed
runtime and the KV cache at the engine's own bytes per value (its settings' `kv_slot_bytes`)."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.toykv import RUNTIME_MIB, ToySettings
from generator.fit.ledger import Ledger
from generator.fit.memory import MIB, Geometry, group_bytes_per_token


def build(r: Resolved, s: ToySettings, ledger: Ledger) -> None:
    cap = r.app.gpu_memory_mib
    assert cap is not None
    weight = r.model.weight(r.app.quantization)
    assert weight is not None
    ledger.pool("cap", "HAMi cap", cap, "app.gpu_memory_mib")
    ledger.add("cap", "weights", weight.size_gib * 1024, "the weight files' size")
    ledger.add("cap", "ToyKV runtime", RUNTIME_MIB, "fixed")
    geo = Geometry.of(r.model.architecture)
    per_token = group_bytes_per_token(geo.full, s.kv_slot_bytes(geo.full.head_dim))
    if geo.sliding is not None:
        per_token += group_bytes_per_token(geo.sliding, s.kv_slot_bytes(geo.sliding.head_dim))
    ledger.add("cap", f"KV ToyKV cache at {s.context.value:,} tokens", per_token * s.context.value / MIB,
               f"{s.kv_k.value}: every layer keeps every token")
'''

REGISTRY_ENTRY = '    Declared("toykv", "toykv"),\n'
IMAGE = "docker.io/example/toykv:1.0.0"

FLAG_TABLE = f"""id: toykv-1
engine: toykv
fork: upstream
image: {IMAGE}
version: toykv 1.0.0
provenance:
  method: generated
  generator: tests/engines/test_add_a_family.py
  input: the toy engine's options, as this test declares them
  date: 2026-12-06
  sources:
    - ref: tests/engines/test_add_a_family.py (test data)
syntax:
  equals_values: false
  underscores: false
  dotted_json: false
flags:
  - name: --model
  - name: --served-name
  - name: --host
  - name: --port
    type: int
  - name: --context
    type: int
  - name: --kv-dtype
"""

STACK = f"""id: toykv-1
title: ToyKV 1.0.0
engine: toykv
fork: upstream
image: {IMAGE}
version: 1.0.0
port: 8000
command: [toykv-serve]
flag_table: toykv-1
sources:
  - ref: tests/engines/test_add_a_family.py (test data)
"""

CONTEXT = 16384


def _toy_app(fixture: Path) -> str:
    """The fixture's Gemma app on ToyKV: no speculative decoding, no vision, an int4 KV cache, GPU memory left to the
    fit (so that sizing runs the toy's memory model too)."""
    keep = ("name", "title", "description", "icon", "owners", "model", "quantization", "device", "served_name",
            "resources", "version", "status")
    lines = [line for line in (fixture / "apps" / "gemmalab.yaml").read_text(encoding="utf-8").splitlines()
             if line.split(":", 1)[0] in keep]
    text = "\n".join(lines) + f"\nstack: toykv-1\ncontext_length: {CONTEXT}\nkv_cache_type: int4\n"
    return (text.replace("name: gemmalab", "name: toykvlab").replace("title: Gemma 4 E4B Lab - MTP", "title: Gemma Toy")
            .replace('description: "Gemma 4 E4B + MTP drafter on vLLM nightly, {{ not a template }}, 32K context."',
                     "description: Gemma 4 E4B on ToyKV, 16K context."))


@pytest.fixture(scope="module")
def added(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return add_engine(tmp_path_factory.mktemp("toykv"),
                      {"engines/toykv.py": ENGINE_MODULE, "fit/toykv.py": FIT_MODULE}, REGISTRY_ENTRY,
                      {"flags/toykv-1.yaml": FLAG_TABLE, "stacks/toykv-1.yaml": STACK,
                       "apps/toykvlab.yaml": _toy_app(FIXTURE)})


ROOFLINE = """
import dataclasses, json
from generator.catalog import load_catalog
from generator.fit.roofline import roofline
r = load_catalog("catalog").select(["toykvlab"])[0]
r = dataclasses.replace(r, device=r.device.model_copy(update={"memory_bandwidth_gb_s": 1000.0}))
print(json.dumps(roofline(r, CONTEXT).as_dict()))
""".replace("CONTEXT", str(CONTEXT))


def _run(root: Path, snippet: str) -> dict[str, Any]:
    """`snippet` run by the copied code (its process imports the copy, not this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(root / "code")}
    done = subprocess.run([sys.executable, "-c", snippet], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    return _json(done)


def test_only_its_modules_its_data_and_the_registry_changed(added: Path) -> None:
    assert _changed(REPO / "generator", added / "code" / "generator") == [
        "engines/toykv.py", "fit/toykv.py", "schema/engines.py"]
    assert _changed(FIXTURE, added / "catalog") == ["apps/toykvlab.yaml", "flags/toykv-1.yaml", "stacks/toykv-1.yaml"]


def test_render_and_check_run_it(added: Path) -> None:
    code = added / "code"
    rendered = _catalog(code, "render", "--catalog", "catalog", "--out", "charts", "toykvlab", cwd=added)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    values = (added / "charts" / "toykvlab" / "values.yaml").read_text(encoding="utf-8")
    assert "toykv-serve" in values and "--kv-dtype" in values and "int4" in values

    checked = _catalog(code, "check", "--catalog", "catalog", "toykvlab", cwd=added)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 passed, 0 failed" in checked.stdout + checked.stderr


def test_fit_and_roofline_charge_its_own_kv_bytes(added: Path) -> None:
    out = _json(_catalog(added / "code", "explain", "toykvlab", "--catalog", "catalog", "--json", cwd=added))
    fit = out["fit"]
    assert fit["engine"] == "toykv" and fit["verdict"] == "FIT", fit
    parts = {p["component"]: p for p in fit["parts"]}
    assert set(parts) == {"weights", "ToyKV runtime", f"KV ToyKV cache at {CONTEXT:,} tokens"}, parts

    from generator.catalog import load_catalog
    from generator.fit.memory import Geometry, group_bytes_per_token

    arch = load_catalog(FIXTURE).models["gemma4-e4b"].architecture
    geo = Geometry.of(arch)
    half_byte = sum(group_bytes_per_token(g, g.head_dim * 2 * 0.5) for g in (geo.full, geo.sliding) if g is not None)
    kv = parts[f"KV ToyKV cache at {CONTEXT:,} tokens"]
    assert kv["mib"] == pytest.approx(half_byte * CONTEXT / 2**20)  # int4: ToyKV's 0.5 B, not ggml's or vLLM's 2 B

    # the roofline reads the same table (the fixture device states no bandwidth: one is given here, in the copy's
    # own process): the full and sliding layers' KV, 0.5 B a value, read again by the 18 KV-shared layers (3 full +
    # 15 sliding: the 4 : 20 pattern, generator/fit/roofline.py _shared)
    roof = _run(added, ROOFLINE)
    window = min(CONTEXT, geo.sliding.window) if geo.sliding is not None and geo.sliding.window else CONTEXT
    assert (geo.full.layers, geo.sliding.layers if geo.sliding else 0, geo.kv_shared_layers) == (4, 20, 18)
    expected = group_bytes_per_token(geo.full, geo.full.head_dim * 2 * 0.5) * CONTEXT * (4 + 3) / 4 + (
        group_bytes_per_token(geo.sliding, geo.sliding.head_dim * 2 * 0.5) * window * (20 + 15) / 20
        if geo.sliding else 0)
    assert roof["context"] == CONTEXT and roof["kv_bytes"] == pytest.approx(expected), roof

    # the sizing ran its memory model: the app leaves its GPU memory out, and gets the need + margin in 256 MiB steps
    need = sum(p["mib"] for p in fit["parts"])
    assert fit["cap_mib"] == math.ceil((need + max(512, math.ceil(0.05 * need))) / 256) * 256, fit


def test_its_rules_hook_is_asked(added: Path) -> None:
    """A KV type outside ToyKV's own table fails ENG004 through ToySettings.kv_type_supported."""
    app = added / "catalog" / "apps" / "toykvlab.yaml"
    original = app.read_text(encoding="utf-8")
    try:
        app.write_text(original.replace("kv_cache_type: int4", "kv_cache_type: q4_0"), encoding="utf-8")
        bad = _catalog(added / "code", "check", "--catalog", "catalog", "--no-lint", "toykvlab", cwd=added)
        assert bad.returncode != 0 and "ENG004" in bad.stdout and "q4_0" in bad.stdout, bad.stdout + bad.stderr
    finally:
        app.write_text(original, encoding="utf-8")
