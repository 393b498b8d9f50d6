"""Architecture arithmetic for the memory fit: bytes per cached value, KV per token, recurrent state.

Pure functions of the model geometry (catalog/models) and the KV type; `generator/fit/estimate.py` adds what each
engine allocates around them. Byte sizes and their sources:
- vLLM `--kv-cache-dtype`: bf16/fp16 2 B, fp8* 1 B per value (docs/domain.md).
- vLLM TurboQuant stores one slot per token and KV head: `turboquant_k8v4` = FP8 keys (1 B) + 4-bit values
  (0.5 B) per element + 4 B of norms = 388 B at head_dim 256, i.e. 0.379x bf16 (docs/domain.md "0.375x + norms";
  the 388-byte slot appears in Genesis's P5 docstring shape `[524, 16, 1, 388]`, and with 4 KV heads it gives
  the 2080-token hybrid block the maintainer's Fast 2.0.2 note records). `turboquant_4bit_nc` 4+4 bits,
  `turboquant_k3v4_nc` 3+4, `turboquant_3bit_nc` 3+3, each + 4 B norms (assumption: same norm layout).
- llama.cpp ggml blocks of 32 values: q8_0 34 B (1.0625 B/value), q4_0 18 B (0.5625), q4_1 20, q5_0 22, q5_1 24,
  iq4_nl 18; TurboQuant forks: turbo3 = fp16 norm + 12 B of 3-bit indices = 14 B (0.4375 B/value),
  turbo4 = 18 B (0.5625), turbo2 = 10 B (0.3125) (block layouts of the atomic/buun forks' ggml-common.h).
  Lucebox `tq3_0` is counted like turbo3 (assumption: also a 3-bit TurboQuant block).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.schema import Architecture, AttentionGroup, RecurrentGroup

MIB = 1024 * 1024
GIB = 1024 * MIB

# llama.cpp cache types: bytes per cached value.
GGML_BYTES: dict[str, float] = {
    "f32": 4.0, "f16": 2.0, "bf16": 2.0,
    "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32, "q5_0": 22 / 32, "q5_1": 24 / 32, "iq4_nl": 18 / 32,
    "turbo2": 10 / 32, "turbo3": 14 / 32, "turbo4": 18 / 32, "tq3_0": 14 / 32,
    "turbo2_tcq": 10 / 32, "turbo3_tcq": 14 / 32,  # buun trellis variants: counted as their base type
}
GGML_DEFAULT = "f16"

# vLLM dtypes with a plain per-value size.
VLLM_BYTES: dict[str, float] = {
    "auto": 2.0, "float16": 2.0, "bfloat16": 2.0, "half": 2.0,
    "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0, "fp8_inc": 1.0,
}
# vLLM TurboQuant: (key bits, value bits) per element; + TQ_NORM_BYTES per token and head.
TURBOQUANT_BITS: dict[str, tuple[int, int]] = {
    "turboquant_k8v4": (8, 4), "turboquant_4bit_nc": (4, 4), "turboquant_k3v4_nc": (3, 4), "turboquant_3bit_nc": (3, 3),
}
TQ_NORM_BYTES = 4

QUANTIZED_V = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "turbo2", "turbo3", "turbo4", "tq3_0",
               "turbo2_tcq", "turbo3_tcq"}


def known_kv_type(engine: str, dtype: str) -> bool:
    return dtype in (VLLM_BYTES if engine == "vllm" else GGML_BYTES) or dtype in TURBOQUANT_BITS


def vllm_slot_bytes(dtype: str, head_dim: int) -> float:
    """Bytes vLLM stores per token and KV head (K and V together)."""
    if dtype in TURBOQUANT_BITS:
        k_bits, v_bits = TURBOQUANT_BITS[dtype]
        return head_dim * (k_bits + v_bits) / 8 + TQ_NORM_BYTES
    return head_dim * 2 * VLLM_BYTES.get(dtype, 2.0)


def ggml_slot_bytes(k_type: str, v_type: str, head_dim: int) -> float:
    """Bytes llama.cpp stores per token and KV head (K and V caches)."""
    return head_dim * (GGML_BYTES.get(k_type, 2.0) + GGML_BYTES.get(v_type, 2.0))


def group_bytes_per_token(group: AttentionGroup, slot: float, *, k_eq_v_shared: bool = False) -> float:
    """KV bytes one token costs in every layer of an attention group."""
    factor = 0.5 if (group.k_eq_v and k_eq_v_shared) else 1.0
    return group.layers * group.kv_heads * slot * factor


def recurrent_state_bytes(rec: RecurrentGroup, *, ssm_bytes: float = 4, conv_bytes: float = 2) -> float:
    """Per-sequence state of every recurrent layer: the SSM state (v_heads x head_dim^2) and the conv state.

    Gated-DeltaNet: state v_heads x head_dim x head_dim in fp32 (docs/domain.md-6.2); the conv state holds
    (kernel - 1) past rows of the q/k/v projections: (2 x k_heads + v_heads) x head_dim values.
    """
    return rec.layers * recurrent_layer_bytes(rec, ssm_bytes=ssm_bytes, conv_bytes=conv_bytes)


def recurrent_layer_bytes(rec: RecurrentGroup, *, ssm_bytes: float = 4, conv_bytes: float = 2) -> float:
    ssm = rec.v_heads * rec.head_dim * rec.head_dim * ssm_bytes
    conv_dim = (2 * rec.k_heads + rec.v_heads) * rec.head_dim
    return ssm + conv_dim * (rec.conv_kernel - 1) * conv_bytes


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def align_up(value: int, step: int) -> int:
    return cdiv(value, step) * step


@dataclass(frozen=True)
class Geometry:
    """The KV-relevant shape of a model: what holds KV, what is bounded, what is shared."""

    full: AttentionGroup
    sliding: AttentionGroup | None
    recurrent: RecurrentGroup | None
    mtp_layers: int
    kv_shared_layers: int

    @classmethod
    def of(cls, arch: Architecture) -> Geometry:
        return cls(arch.full_attention, arch.sliding_attention, arch.recurrent, arch.mtp_layers, arch.kv_shared_layers)

    @property
    def hybrid(self) -> bool:
        return self.recurrent is not None


__all__ = [
    "GGML_BYTES", "GGML_DEFAULT", "GIB", "Geometry", "MIB", "QUANTIZED_V", "TURBOQUANT_BITS", "VLLM_BYTES",
    "align_up", "cdiv", "ggml_slot_bytes", "group_bytes_per_token", "known_kv_type", "recurrent_layer_bytes",
    "recurrent_state_bytes", "vllm_slot_bytes",
]
