"""Public decode speeds per device against the roofline of the catalog's devices (docs/devices.md "Speeds").

Each row is a single-stream decode speed someone published for a model of the catalog on one of its devices, with
where it comes from; the test builds the catalog app as it runs on that device (generator/fit/devices.py, the
measured quantization where the model has it) and asserts the measurement sits under the roofline and within the
band docs/devices.md states (BAND_LOW to 100 % of the bound). A measurement above the bound means a wrong bandwidth,
a wrong byte count or a wrong measurement; one far below it, a bound too loose to tell anything. The embedded
catalog is read: what is tested is its device data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from generator.catalog import Resolved, Target, load_catalog
from generator.fit.devices import variant_on
from generator.fit.roofline import roofline
from generator.schema import DeviceTarget

from support.catalogs import EMBEDDED

BAND_LOW = 0.10  # docs/devices.md "Speeds": a published speed is at least a tenth of its device's roofline


@dataclass(frozen=True)
class Published:
    app: str  # the catalog app whose model, quantization and engine family the measurement used
    device: str
    tokens_per_s: float
    source: str
    quantization: str | None = None  # the measured file where it differs from the app's (the model has it)
    stack: str | None = None  # for a device the app does not target: the stack to build it on
    acceptance: float | None = None  # the measured speculative acceptance, when published
    context: int = 0  # tokens in the cache while decoding, when published (0: an empty cache, the loosest bound)


PUBLISHED = (
    # vLLM, Qwen3.6 27B AutoRound INT4 + MTP 3 + TurboQuant KV, one RTX 3090, 125K context window
    Published("vllmqwen36turbo27bone", "rtx-3090", 80.0,
              "https://github.com/noonghunna/qwen36-27b-single-3090/issues/1 (a reported 'qwen3.6-27b-autoround on RTX "
              "3090 — 126k cntx — 80 tok/s', MTP with 3 draft tokens)"),
    # llama.cpp, Qwen3.6 27B Q4_K_M + MTP, one RTX 3090 at 230 W (the better of the two figures, 48.29 / 56.02)
    Published("llamacppqwen36mtpone", "rtx-3090", 56.02,
              "https://github.com/noonghunna/club-3090/issues/518 (single-unsloth-q4km-mtp, 3x 3090 at 230 W/card, "
              "'48.29 / 56.02')", quantization="q4km-mtp"),
    # llama.cpp, Qwen3.6 35B-A3B Q8 on a DGX Spark: 50-56 tok/s steady. The catalog has the model's UD-Q4_K_XL only:
    # its smaller file gives a higher (looser) bound than Q8's, so the row checks the device's bandwidth from above.
    Published("llamacppqwen36a3bone", "dgx-spark", 56.0,
              "https://github.com/NVIDIA/dgx-spark-playbooks/issues/79 ('Qwen3.6-35B-A3B Q8 via llama.cpp on the same "
              "box steady-states 50-56 tok/s')", quantization="ud-q4kxl", stack="llamacpp-beclab-b10068"),
    # the Olares One: the maintainer's own measurements (the apps' benchmarks), at their context and acceptance
    Published("llamacppqwen36mtpone", "olares-one", 65.0, "catalog/apps/llamacppqwen36mtpone.yaml benchmarks",
              acceptance=0.64, context=131072),
    Published("vllmqwen36turbo27bone", "olares-one", 88.0, "catalog/apps/vllmqwen36turbo27bone.yaml benchmarks",
              acceptance=0.75, context=90112),
    Published("gemma426ba4bone", "olares-one", 140.0, "catalog/apps/gemma426ba4bone.yaml benchmarks",
              context=131072),
    Published("gemma4e2bone", "olares-one", 230.0, "catalog/apps/gemma4e2bone.yaml benchmarks", context=32768),
)


def _on_device(row: Published) -> Resolved:
    cat = load_catalog(EMBEDDED)
    app = cat.apps[row.app]
    r = variant_on(app, row.device)
    if r is None:  # a device the app does not target: build it there on the stated stack, without speculation
        assert row.stack is not None, f"{row.app} does not target {row.device}: give the row a stack"
        entry = DeviceTarget(device=row.device, stack=row.stack, speculative="off")
        r = app.on(Target(device=cat.devices[row.device], stack=cat.stacks[row.stack], entry=entry, index=0))
    if row.quantization is not None:
        r = replace(r, app=r.app.model_copy(update={"quantization": row.quantization}))
    return r


@pytest.mark.parametrize("row", PUBLISHED, ids=lambda row: f"{row.app}@{row.device}")
def test_a_published_speed_sits_under_its_devices_roofline_and_within_the_band(row: Published):
    r = _on_device(row)
    roof = roofline(r, row.context, acceptance=row.acceptance)
    assert roof is not None, f"{row.device} states no bandwidth"
    fraction = row.tokens_per_s / roof.bound_tps
    assert fraction <= 1, f"{row.source}: {row.tokens_per_s} t/s is above the {roof.bound_tps:.1f} t/s roofline"
    assert fraction >= BAND_LOW, (f"{row.source}: {row.tokens_per_s} t/s is {fraction:.0%} of the "
                                  f"{roof.bound_tps:.1f} t/s roofline, below the {BAND_LOW:.0%} band")


def test_every_device_of_the_catalog_with_a_bandwidth_has_a_published_speed_or_is_named_here():
    """A device without a published single-stream speed for one of the catalog's models is named, so the gap shows."""
    cat = load_catalog(EMBEDDED)
    measured = {row.device for row in PUBLISHED}
    unmeasured = {d for d, dev in cat.devices.items() if dev.memory_bandwidth_gb_s and d not in measured}
    assert unmeasured == {"rtx-5090", "rtx-4090"}  # no public Qwen3.6 27B / Gemma 4 single-stream figure found yet
