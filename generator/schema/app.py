"""One app of the market: a model on a stack, with its settings, version, status and figures."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from generator.schema.common import (
    MAX_ITEMS,
    AppName,
    Args,
    Date,
    Env,
    Id,
    MiB,
    Name,
    Note,
    PositiveFloat,
    SemVer,
    Strict,
    Text,
    Title,
    Tokens,
)
from generator.schema.calibration import Calibration
from generator.schema.stack import SpecMethod
from generator.schema.market import FormName
from generator.schema.measured import Measured

Quantity = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$", max_length=24)]
HttpsUrl = Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$", max_length=2000)]
# upgrade_description grows by one line per bump (versions/appfile.py); Olares shows it on the update page.
LongText = Annotated[str, StringConstraints(max_length=32000)]
Status = Literal["active", "deprecated", "removed"]
PipPackage = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(==[A-Za-z0-9.+!-]{1,40})?$")]
# A label of the market's own taxonomy ("LLM Chat", "AI Agents", "Vision": the maintainer's market keeps them in
# scripts/market-taxonomy.json @59296d35 for its worker, apart from the manifest's Olares 1.12 category "AI").
MarketCategory = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9 -]{0,39}$")]
# A Market locale of i18n/<locale>/OlaresManifest.yaml (manifest.md "i18n": en-US, zh-CN, ...).
Locale = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}-[A-Z]{2}$")]
SOURCE_LOCALE = "en-US"  # the locale of the app's own title and descriptions


class Speculative(Strict):
    method: SpecMethod
    # draft tokens per step (vLLM num_speculative_tokens, llama.cpp n-max): single digits to a few dozen in
    # practice; a draft of more than 256 tokens a step is a typo
    tokens: Annotated[int, Field(gt=0, le=256)] | None = None
    drafter: Id | None = None  # a drafter of the app's model; None = the model's own MTP head


class DeviceTarget(Strict):
    """One more device the app targets beside its own `device` (docs/devices.md). The fit plans it from the same model
    facts: a field left out is the app's own, except the context (left out: the largest that fits the device, up to the
    model's) and the GPU memory (left out: sized). `speculative: off` drops the app's speculation there."""

    device: Id
    stack: Id | None = None  # a stack that runs on that device (one publishing its CPU's images, with its kernels)
    context_length: Tokens | None = None
    kv_cache_type: Name | None = None
    kv_cache_type_v: Name | None = None
    speculative: Speculative | Literal["off"] | None = None
    extra_args: Args | None = None  # replaces the app's (a fork's flags on another stack)
    gpu_memory_mib: MiB | None = None


class Benchmark(Strict):
    """A measured figure, as the maintainer reports it (mean of warm runs)."""

    tokens_per_s: PositiveFloat
    acceptance: Annotated[float, Field(ge=0, le=1)] | None = None
    runs: Annotated[tuple[PositiveFloat, ...], Field(max_length=MAX_ITEMS)] = ()
    tokens: Tokens | None = None
    seconds: PositiveFloat | None = None
    context: Tokens | None = None
    image: Name | None = None
    date: Date
    method: Note
    source: Note


class Resources(Strict):
    """CPU and memory of the engine container (GPU memory is `gpu_memory_mib`)."""

    cpu_request: Quantity = "1"
    cpu_limit: Quantity = "8"
    memory_request: Quantity = "8Gi"
    memory_limit: Quantity = "32Gi"
    disk_request: Quantity = "50Mi"
    disk_limit: Quantity = "200Gi"


class GpuRoom(Strict):
    """GPU memory an app leaves free on its device for something that runs beside it (a speech stack)."""

    mib: MiB
    beside: Annotated[str, StringConstraints(min_length=3)]  # what uses the room
    source: Annotated[str, StringConstraints(min_length=3)]


class Probe(Strict):
    """The smoke prompt and, when known, a string its answer must contain."""

    prompt: Text
    expect: Note | None = None


class License(Strict):
    """One `spec.license` entry (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e
    docs/developer/develop/package/manifest.md "Spec": `license: [{text, url}]`)."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    url: HttpsUrl | None = None


class Translation(Strict):
    """The fields the Market translates for one locale (manifest.md "i18n": metadata.title, description,
    spec.fullDescription); left out, the app's own text."""

    title: Title
    description: Text
    full_description: Text | None = None


class App(Strict):
    name: AppName
    title: Title
    description: Text
    full_description: Text | None = None
    icon: HttpsUrl
    owners: tuple[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]{1,39}$")], ...] = Field(min_length=1,
                                                                                                 max_length=32)
    model: Id
    quantization: Id
    stack: Id
    device: Id
    # more devices the app targets (docs/devices.md): each planned by the fit, rendered as one accelerator entry
    devices: Annotated[tuple[DeviceTarget, ...], Field(max_length=8)] = ()
    context_length: Tokens
    served_name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")] | None = None
    kv_cache_type: Name | None = None  # vLLM --kv-cache-dtype; llama.cpp K (and V unless kv_cache_type_v)
    kv_cache_type_v: Name | None = None  # llama.cpp V cache type when it differs from K
    speculative: Speculative | None = None
    vision: bool = False
    mmproj: Id | None = None  # llama.cpp: which of the model's projectors `vision` loads (its `quant`); None: `mmproj`
    audio: bool = False  # vLLM: audio input (--limit-mm-per-prompt audio 1)
    chat_template: Id | None = None  # catalog/chat_templates/<id>.yaml: shipped with the chart, passed to the server
    slot_save: bool = False  # llama.cpp: --slot-save-path on an emptyDir (slot save/restore over HTTP)
    # pip-installed before the server starts (the image lacks them)
    python_packages: Annotated[tuple[PipPackage, ...], Field(max_length=MAX_ITEMS)] = ()
    genesis_patches: Annotated[tuple[Name, ...], Field(max_length=MAX_ITEMS)] = ()
    gpu_memory_mib: MiB | None = None  # the HAMi cap; None: the fit sizes it (generator/fit/sizing.py)
    gpu_room: GpuRoom | None = None  # memory the app leaves free on the card; the sized cap keeps it
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None  # vLLM only
    resources: Resources = Resources()
    env: Env = Field(default_factory=dict)
    extra_args: Args = ()
    version: SemVer
    status: Status = "active"
    replaced_by: AppName | None = None
    reason: Annotated[str, StringConstraints(max_length=8000)] | None = None  # prune appends one line a run
    removed_on: Date | None = None
    upgrade_description: LongText | None = None
    probe: Probe | None = None
    benchmarks: Annotated[tuple[Benchmark, ...], Field(max_length=MAX_ITEMS)] = ()
    # measured memory figures for this app (generator/fit/estimate.py)
    calibration: Annotated[tuple[Calibration, ...], Field(max_length=MAX_ITEMS)] = ()
    # values upstream set on a measured ground, kept over the fit (docs/fit.md "Measured beats modeled")
    measured: Annotated[tuple[Measured, ...], Field(max_length=MAX_ITEMS)] = ()
    # the market's own taxonomy (not written in the manifest, whose category is Olares 1.12's "AI")
    categories: Annotated[tuple[MarketCategory, ...], Field(max_length=8)] = ()
    # translations by locale, written as i18n/<locale>/OlaresManifest.yaml (olares-v3); en-US is the app's own text
    i18n: Annotated[dict[Locale, Translation], Field(max_length=32)] = Field(default_factory=dict)
    # spec.developer / submitter / website / sourceCode / license of the manifest (beclab/Olares@3b1fb4b4a3bb
    # docs/developer/develop/package/manifest.md "Spec"); developer and submitter default to the first owner
    developer: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    submitter: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    website: HttpsUrl | None = None
    source_code: HttpsUrl | None = None
    license: Annotated[tuple[License, ...], Field(max_length=8)] = ()
    # the app form (docs/forms.md); None: the store's (catalog/market.yaml `form`)
    form: FormName | None = None
    # facts of an imported chart the catalog cannot express (`file:line: what`); not rendered
    unmapped: Annotated[tuple[str, ...], Field(max_length=MAX_ITEMS)] = ()

    @field_validator("version", mode="before")
    @classmethod
    def _quoted_version(cls, value: object) -> object:
        """`version: 1.1` is a YAML number (1.1), never the string "1.1.0": say how to write it."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts = (str(value).split(".") + ["0", "0"])[:3]
            raise ValueError(f"{value!r} is a YAML number; quote versions: '{'.'.join(parts)}'")
        return value

    @model_validator(mode="after")
    def _status_fields(self) -> "App":
        if self.status != "active" and not self.reason:
            raise ValueError(f"status {self.status!r} needs a `reason`")
        if self.status == "active" and (self.replaced_by or self.removed_on):
            raise ValueError("an active app has no `replaced_by` or `removed_on`; set status: deprecated")
        if self.replaced_by == self.name:
            raise ValueError("an app cannot be replaced by itself")
        if self.removed_on and self.status != "removed":
            raise ValueError("`removed_on` is only for status: removed")
        if len(set(self.genesis_patches)) != len(self.genesis_patches):
            raise ValueError("genesis_patches lists a patch twice")
        targets = [t.device for t in self.devices]
        if len(set(targets)) != len(targets) or self.device in targets:
            raise ValueError("devices lists a device twice (or the app's own `device`)")
        if len(set(self.categories)) != len(self.categories):
            raise ValueError("categories lists a label twice")
        if SOURCE_LOCALE in self.i18n:
            raise ValueError(f"i18n.{SOURCE_LOCALE}: the app's own title and descriptions are its {SOURCE_LOCALE} "
                             "text; translate into other locales only")
        return self

    @property
    def model_alias(self) -> str:
        """The model name the server answers to (`/v1/models`)."""
        return self.served_name or self.name

    @property
    def last_benchmark(self) -> Benchmark | None:
        return max(self.benchmarks, key=lambda b: b.date, default=None)
