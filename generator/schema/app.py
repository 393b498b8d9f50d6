"""One app of the market: a model on a stack, with its settings, version, status and figures."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from generator.schema.common import (
    AppName,
    Date,
    EnvName,
    Id,
    PositiveFloat,
    PositiveInt,
    SemVer,
    Strict,
    Text,
    Title,
)
from generator.schema.calibration import Calibration
from generator.schema.stack import SpecMethod

Quantity = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$")]
HttpsUrl = Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$")]
Status = Literal["active", "deprecated", "removed"]
PipPackage = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(==[A-Za-z0-9.+!-]{1,40})?$")]


class Speculative(Strict):
    method: SpecMethod
    tokens: PositiveInt | None = None  # draft tokens per step (vLLM num_speculative_tokens, llama.cpp n-max)
    drafter: Id | None = None  # a drafter of the app's model; None = the model's own MTP head


class Benchmark(Strict):
    """A measured figure, as the maintainer reports it (mean of warm runs)."""

    tokens_per_s: PositiveFloat
    acceptance: Annotated[float, Field(ge=0, le=1)] | None = None
    runs: tuple[PositiveFloat, ...] = ()
    tokens: PositiveInt | None = None
    seconds: PositiveFloat | None = None
    context: PositiveInt | None = None
    image: str | None = None
    date: Date
    method: str
    source: str


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

    mib: PositiveInt
    beside: Annotated[str, StringConstraints(min_length=3)]  # what uses the room
    source: Annotated[str, StringConstraints(min_length=3)]


class Probe(Strict):
    """The smoke prompt and, when known, a string its answer must contain."""

    prompt: Text
    expect: str | None = None


class App(Strict):
    name: AppName
    title: Title
    description: Text
    full_description: Text | None = None
    icon: HttpsUrl
    owners: tuple[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]{1,39}$")], ...] = Field(min_length=1)
    model: Id
    quantization: Id
    stack: Id
    device: Id
    context_length: PositiveInt
    served_name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")] | None = None
    kv_cache_type: str | None = None  # vLLM --kv-cache-dtype; llama.cpp K (and V unless kv_cache_type_v)
    kv_cache_type_v: str | None = None  # llama.cpp V cache type when it differs from K
    speculative: Speculative | None = None
    vision: bool = False
    audio: bool = False  # vLLM: audio input (--limit-mm-per-prompt audio 1)
    chat_template: Id | None = None  # catalog/chat_templates/<id>.yaml: shipped with the chart, passed to the server
    slot_save: bool = False  # llama.cpp: --slot-save-path on an emptyDir (slot save/restore over HTTP)
    python_packages: tuple[PipPackage, ...] = ()  # pip-installed before the server starts (the image lacks them)
    genesis_patches: tuple[str, ...] = ()
    gpu_memory_mib: PositiveInt | None = None  # the HAMi cap; None: the fit sizes it (generator/fit/sizing.py)
    gpu_room: GpuRoom | None = None  # memory the app leaves free on the card; the sized cap keeps it
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] | None = None  # vLLM only
    resources: Resources = Resources()
    env: dict[EnvName, str] = Field(default_factory=dict)
    extra_args: tuple[str, ...] = ()
    version: SemVer
    status: Status = "active"
    replaced_by: AppName | None = None
    reason: str | None = None
    removed_on: Date | None = None
    upgrade_description: str | None = None
    probe: Probe | None = None
    benchmarks: tuple[Benchmark, ...] = ()
    calibration: tuple[Calibration, ...] = ()  # measured memory figures for this app (generator/fit/estimate.py)

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
        return self

    @property
    def model_alias(self) -> str:
        """The model name the server answers to (`/v1/models`)."""
        return self.served_name or self.name

    @property
    def last_benchmark(self) -> Benchmark | None:
        return max(self.benchmarks, key=lambda b: b.date, default=None)
