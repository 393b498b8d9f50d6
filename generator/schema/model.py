"""Model architecture facts (what memory depends on) and weight files per quantization."""

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from generator.schema.calibration import Calibration
from generator.schema.gguf import ENTRY, expand, tensor_bytes
from generator.schema.common import MAX_ITEMS, Count, Id, Name, Sources, Strict, Tokens

# Sizes of a model: the largest published models have ~2 T parameters; 100 T and 64 TiB leave room.
Billions = Annotated[float, Field(gt=0, le=100_000)]
Gib = Annotated[float, Field(gt=0, le=65536)]
Layers = Annotated[int, Field(ge=0, le=65536)]


def _no_dotdot(value: str) -> str:
    if ".." in value:
        raise ValueError(f"{value!r} holds `..`; it must not climb out of its folder")
    return value


def _no_double_dash(value: str) -> str:
    if "--" in value:
        raise ValueError(f"{value!r} holds `--`, which a Hugging Face repo id never does")
    return value


# A Hugging Face repo id `owner/name`: letters, digits, `-`, `_`, `.`, at most 96 characters, neither `--`
# nor `..` (huggingface_hub's validate_repo_id,
# https://huggingface.co/docs/huggingface_hub/package_reference/utilities#huggingface_hub.utils.validate_repo_id).
HfRepo = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$",
                      max_length=96),
    AfterValidator(lambda v: _no_dotdot(_no_double_dash(v))),
]
# A file inside the repo: relative, `/`-separated parts that start with a letter, digit or `_` (so no `.`,
# `..` or hidden part, no absolute path), and no `$`, space or quote that a shell or Kubernetes' `$(VAR)`
# expansion would read (it lands in the init container's env: templates/chart/templates/deployment.yaml.j2).
HfFile = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9._+-]*(/[A-Za-z0-9_][A-Za-z0-9._+-]*)*$", max_length=255),
    AfterValidator(_no_dotdot),
]
# A revision: a full 40-hex commit, or a branch or tag name (no `/`: it is one segment of the resolve URL).
Revision = Annotated[
    str,
    StringConstraints(pattern=r"^([0-9a-f]{40}|[A-Za-z0-9][A-Za-z0-9._-]{0,127})$"),
    AfterValidator(_no_dotdot),
]


class AttentionGroup(Strict):
    """A set of attention layers sharing one KV geometry."""

    layers: Count
    kv_heads: Count
    head_dim: Count
    window: Tokens | None = None  # sliding window in tokens; None = full attention
    k_eq_v: bool = False  # K and V share storage (Gemma 4 global layers)
    # Multi-head latent attention (DeepSeek-V2 style: GLM-4.7-Flash): the cache holds one compressed latent of
    # kv_lora_rank values plus the rope_head_dim decoupled RoPE key per token and layer, not kv_heads x head_dim K
    # and V (config.json `kv_lora_rank`, `qk_rope_head_dim`; docs/fit.md "MLA"). Both or neither.
    kv_lora_rank: Count | None = None
    rope_head_dim: Count | None = None

    @model_validator(mode="after")
    def _mla_pair(self) -> "AttentionGroup":
        if (self.kv_lora_rank is None) != (self.rope_head_dim is None):
            raise ValueError("kv_lora_rank and rope_head_dim come together (multi-head latent attention)")
        return self

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank is not None


class RecurrentGroup(Strict):
    """Gated-DeltaNet layers (Qwen3.5/3.6): fixed state per sequence."""

    kind: Literal["gated_deltanet"] = "gated_deltanet"
    layers: Count
    k_heads: Count
    v_heads: Count
    head_dim: Count
    conv_kernel: Count = 4


class Mamba2Group(Strict):
    """Mamba-2 layers (Nemotron-H): fixed state per sequence. config.json `mamba_num_heads`, `mamba_head_dim`,
    `ssm_state_size`, `n_groups`, `conv_kernel`; GGUF `ssm.inner_size` = heads x head_dim, `ssm.state_size`,
    `ssm.group_count`, `ssm.conv_kernel` (docs/fit.md "Mamba-2")."""

    kind: Literal["mamba2"]
    layers: Count
    heads: Count
    head_dim: Count
    state_size: Count
    groups: Count
    conv_kernel: Count = 4


class Architecture(Strict):
    arch: Name  # GGUF general.architecture
    hf_model_type: Name
    layers: Count
    hidden_size: Annotated[int, Field(gt=0, le=2**20)]
    vocab_size: Tokens
    full_attention: AttentionGroup
    sliding_attention: AttentionGroup | None = None
    recurrent: RecurrentGroup | Mamba2Group | None = None
    # layers with neither KV nor state: Nemotron-H's MLP / MoE blocks (hybrid_override_pattern `-` / `E`)
    ffn_layers: Layers = 0
    kv_shared_layers: Layers = 0
    mtp_layers: Layers = 0
    total_params_b: Billions
    active_params_b: Billions
    max_context: Tokens
    vision: bool = False
    audio: bool = False  # an audio encoder the engine can feed (Gemma 4 E2B/E4B)

    @model_validator(mode="after")
    def _layers_add_up(self) -> "Architecture":
        counted = self.full_attention.layers
        counted += self.sliding_attention.layers if self.sliding_attention else 0
        counted += self.recurrent.layers if self.recurrent else 0
        counted += self.ffn_layers
        if counted + self.kv_shared_layers != self.layers:
            raise ValueError(
                f"full ({self.full_attention.layers}) + sliding + recurrent + ffn + kv_shared layers = "
                f"{counted + self.kv_shared_layers}, but layers is {self.layers}"
            )
        if self.sliding_attention is not None and self.sliding_attention.window is None:
            raise ValueError("sliding_attention needs a window")
        if self.full_attention.window is not None:
            raise ValueError("full_attention must not have a window")
        if self.active_params_b > self.total_params_b:
            raise ValueError("active_params_b cannot exceed total_params_b")
        return self


def _entries(value: tuple[str, ...]) -> tuple[str, ...]:
    for entry in value:
        if not ENTRY.match(entry):
            raise ValueError(f"tensor entry {entry!r}: write `NAME TYPE NE0xNE1 [@LAYERS]` (generator/schema/gguf.py)")
    return value


class GgufRecord(Strict):
    """What a weight file's GGUF header says (`catalog new` reads it): the file's size, where its tensor data starts,
    the tensors' bytes and the tensors themselves in compact form (generator/schema/gguf.py). The fit uses them
    as the file's real shape (generator/fit/realshape.py `recorded_spec`)."""

    url: Annotated[str, StringConstraints(min_length=3, max_length=2000)]  # the file read (no credentials)
    file_bytes: Annotated[int, Field(gt=0, le=2**50)]
    data_offset: Annotated[int, Field(gt=0, le=2**40)]
    tensor_bytes: Annotated[int, Field(gt=0, le=2**50)]
    tensors: Annotated[tuple[str, ...], Field(min_length=1, max_length=8192), AfterValidator(_entries)]

    @model_validator(mode="after")
    def _adds_up(self) -> "GgufRecord":
        """The record is one file's: its tensors' bytes are `tensor_bytes`, and they end inside the file."""
        try:
            total = sum(tensor_bytes(type_name, ne) for _, ne, type_name in expand(self.tensors))
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        if total != self.tensor_bytes:
            raise ValueError(f"the tensors add up to {total:,} bytes, not tensor_bytes {self.tensor_bytes:,}: "
                             "a hand edit broke the record (`catalog new` writes it whole)")
        if self.data_offset + self.tensor_bytes > self.file_bytes:
            raise ValueError(f"data_offset {self.data_offset:,} + tensor_bytes {self.tensor_bytes:,} is past "
                             f"file_bytes {self.file_bytes:,}")
        return self


class WeightFile(Strict):
    """One downloadable quantization of a model (or of a drafter)."""

    quant: Id
    format: Literal["bf16", "fp8", "nvfp4", "int4", "gguf"]
    repo: HfRepo
    file: HfFile | None = None  # GGUF file inside the repo
    revision: Revision | None = None
    size_gib: Gib
    mtp_weights: bool = False  # carries the MTP head usable for self-speculation
    header: GgufRecord | None = None  # its GGUF header's tensors, where `catalog new` read them
    sources: Sources


class Drafter(Strict):
    """A separate draft / assistant model for speculative decoding."""

    id: Id
    kind: Literal["mtp-assistant", "dflash", "draft-model", "eagle"]
    weights: tuple[WeightFile, ...] = Field(min_length=1, max_length=MAX_ITEMS)
    params_b: Billions | None = None
    sources: Sources


class ChatTemplate(Strict):
    """A chat template file (catalog/chat_templates/<file>) shipped with the charts that name it."""

    id: Id
    file: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,62}\.jinja$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the file's bytes: a changed file is noticed
    purpose: Annotated[str, Field(min_length=3)]
    sources: Sources


FactValue = int | float | bool | str


class Fact(Strict):
    """One geometry fact of a model and the file key it was read from (`catalog new`): `field` is the catalog's
    (`architecture.layers`, `shape.n_head`), `source` the file and key (`URL general.architecture`,
    `URL#config.json num_attention_heads`)."""

    field: Annotated[str, StringConstraints(pattern=r"^[a-z_]+(\.[a-z_]+)*$", max_length=100)]
    value: FactValue
    source: Annotated[str, StringConstraints(min_length=3, max_length=2000)]


class RecordedShape(Strict):
    """What llama.cpp needs beyond `architecture` to lay out a model's tensors (generator/fit/realshape.py `Shape`),
    recorded from its file instead of typed by hand: query heads, FFN widths, experts, tied embeddings."""

    n_head: Count
    n_ff: Layers = 0
    expert_count: Layers = 0
    expert_used: Layers = 0
    expert_ff: Layers = 0
    shared_expert_ff: Layers = 0
    tied_embeddings: bool = False


class Model(Strict):
    id: Id
    name: Name
    family: Name
    architecture: Architecture
    weights: tuple[WeightFile, ...] = Field(min_length=1, max_length=MAX_ITEMS)
    drafters: Annotated[tuple[Drafter, ...], Field(max_length=MAX_ITEMS)] = ()
    mmproj: WeightFile | None = None
    # further projectors of this model (another repository's conversion, another precision); an app loads one of
    # them by naming its `quant` (app `mmproj`), else `mmproj`
    mmproj_variants: Annotated[tuple[WeightFile, ...], Field(max_length=MAX_ITEMS)] = ()
    # measured figures per weight file (`quant`)
    calibration: Annotated[tuple[Calibration, ...], Field(max_length=MAX_ITEMS)] = ()
    # the real shape read from the model's own files (`catalog new`), and where each geometry fact comes from
    shape: RecordedShape | None = None
    facts: Annotated[tuple[Fact, ...], Field(max_length=MAX_ITEMS)] = ()
    sources: Sources

    @model_validator(mode="after")
    def _calibration_quants(self) -> "Model":
        known = {w.quant for w in self.weights}
        for row in self.calibration:
            if row.quant not in known:
                raise ValueError(f"calibration {row.what!r}: `quant` must name a weight file: "
                                 f"{', '.join(sorted(known))}")
        return self

    @model_validator(mode="after")
    def _projector_quants(self) -> "Model":
        if self.mmproj_variants and self.mmproj is None:
            raise ValueError("mmproj_variants needs the default `mmproj`")
        quants = [p.quant for p in self.projectors()]
        if len(set(quants)) != len(quants):
            raise ValueError(f"projector quants must differ (an app picks one by it): {', '.join(quants)}")
        return self

    def projectors(self) -> tuple[WeightFile, ...]:
        return ((self.mmproj,) if self.mmproj else ()) + self.mmproj_variants

    def projector(self, quant: str | None = None) -> WeightFile | None:
        """The projector an app loads: the one of that `quant`, or the default `mmproj`."""
        if quant is None:
            return self.mmproj
        return next((p for p in self.projectors() if p.quant == quant), None)

    def weight(self, quant: str) -> WeightFile | None:
        return next((w for w in self.weights if w.quant == quant), None)

    def drafter(self, drafter_id: str) -> Drafter | None:
        return next((d for d in self.drafters if d.id == drafter_id), None)
