"""Model architecture facts (what memory depends on) and weight files per quantization."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from generator.schema.calibration import Calibration
from generator.schema.common import Id, NonNegInt, PositiveFloat, PositiveInt, Sources, Strict


class AttentionGroup(Strict):
    """A set of attention layers sharing one KV geometry."""

    layers: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    window: PositiveInt | None = None  # sliding window in tokens; None = full attention
    k_eq_v: bool = False  # K and V share storage (Gemma 4 global layers)


class RecurrentGroup(Strict):
    """Gated-DeltaNet / Mamba-style layers: fixed state per sequence."""

    layers: PositiveInt
    k_heads: PositiveInt
    v_heads: PositiveInt
    head_dim: PositiveInt
    conv_kernel: PositiveInt = 4


class Architecture(Strict):
    arch: str  # GGUF general.architecture
    hf_model_type: str
    layers: PositiveInt
    hidden_size: PositiveInt
    vocab_size: PositiveInt
    full_attention: AttentionGroup
    sliding_attention: AttentionGroup | None = None
    recurrent: RecurrentGroup | None = None
    kv_shared_layers: NonNegInt = 0
    mtp_layers: NonNegInt = 0
    total_params_b: PositiveFloat
    active_params_b: PositiveFloat
    max_context: PositiveInt
    vision: bool = False
    audio: bool = False  # an audio encoder the engine can feed (Gemma 4 E2B/E4B)

    @model_validator(mode="after")
    def _layers_add_up(self) -> "Architecture":
        counted = self.full_attention.layers
        counted += self.sliding_attention.layers if self.sliding_attention else 0
        counted += self.recurrent.layers if self.recurrent else 0
        if counted + self.kv_shared_layers != self.layers:
            raise ValueError(
                f"full ({self.full_attention.layers}) + sliding + recurrent + kv_shared layers = "
                f"{counted + self.kv_shared_layers}, but layers is {self.layers}"
            )
        if self.sliding_attention is not None and self.sliding_attention.window is None:
            raise ValueError("sliding_attention needs a window")
        if self.full_attention.window is not None:
            raise ValueError("full_attention must not have a window")
        if self.active_params_b > self.total_params_b:
            raise ValueError("active_params_b cannot exceed total_params_b")
        return self


class WeightFile(Strict):
    """One downloadable quantization of a model (or of a drafter)."""

    quant: Id
    format: Literal["bf16", "fp8", "nvfp4", "int4", "gguf"]
    repo: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$")
    file: str | None = None  # GGUF file inside the repo
    revision: str | None = Field(default=None, pattern=r"^[0-9a-f]{7,40}$")
    size_gib: PositiveFloat
    mtp_weights: bool = False  # carries the MTP head usable for self-speculation
    sources: Sources


class Drafter(Strict):
    """A separate draft / assistant model for speculative decoding."""

    id: Id
    kind: Literal["mtp-assistant", "dflash", "draft-model", "eagle"]
    weights: tuple[WeightFile, ...] = Field(min_length=1)
    params_b: PositiveFloat | None = None
    sources: Sources


class ChatTemplate(Strict):
    """A chat template file (catalog/chat_templates/<file>) shipped with the charts that name it."""

    id: Id
    file: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,62}\.jinja$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the file's bytes: a changed file is noticed
    purpose: Annotated[str, Field(min_length=3)]
    sources: Sources


class Model(Strict):
    id: Id
    name: str
    family: str
    architecture: Architecture
    weights: tuple[WeightFile, ...] = Field(min_length=1)
    drafters: tuple[Drafter, ...] = ()
    mmproj: WeightFile | None = None
    calibration: tuple[Calibration, ...] = ()  # measured figures per weight file (`quant`)
    sources: Sources

    @model_validator(mode="after")
    def _calibration_quants(self) -> "Model":
        known = {w.quant for w in self.weights}
        for row in self.calibration:
            if row.quant not in known:
                raise ValueError(f"calibration {row.what!r}: `quant` must name a weight file: {', '.join(sorted(known))}")
        return self

    def weight(self, quant: str) -> WeightFile | None:
        return next((w for w in self.weights if w.quant == quant), None)

    def drafter(self, drafter_id: str) -> Drafter | None:
        return next((d for d in self.drafters if d.id == drafter_id), None)
