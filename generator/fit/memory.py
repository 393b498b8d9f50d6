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

from generator.engines import (GGML_BYTES, GGML_DEFAULT, TQ_NORM_BYTES, TURBOQUANT_BITS, VLLM_BYTES,
                                     ggml_slot_bytes, vllm_slot_bytes)
from generator.schema import Architecture, AttentionGroup, Mamba2Group, RecurrentGroup

Recurrent = RecurrentGroup | Mamba2Group

MIB = 1024 * 1024
GIB = 1024 * MIB

QUANTIZED_V = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "turbo2", "turbo3", "turbo4", "tq3_0",
               "turbo2_tcq", "turbo3_tcq"}


def group_bytes_per_token(group: AttentionGroup, slot: float, *, k_eq_v_shared: bool = False) -> float:
    """KV bytes one token costs in every layer of an attention group (slot: bytes per token and KV head)."""
    factor = 0.5 if (group.k_eq_v and k_eq_v_shared) else 1.0
    return group.layers * group.kv_heads * slot * factor


def mla_latent(group: AttentionGroup) -> int:
    """Values one token caches per layer under multi-head latent attention: the kv_lora_rank latent plus the
    decoupled RoPE key. llama.cpp (b8740) converts DeepSeek-V2-style MLA into one KV head of key_length =
    kv_lora_rank + qk_rope_head_dim (convert_hf_to_gguf.py DeepseekV2Model.set_gguf_parameters: num_key_value_heads
    = 1, add_key_length(kv_lora_rank + qk_rope_head_dim)) and allocates no V cache (src/llama-kv-cache.cpp
    `has_v = !is_mla`: V is a view of K); vLLM's MLAAttentionSpec caches the same single latent (no separate V)."""
    assert group.kv_lora_rank is not None and group.rope_head_dim is not None
    return group.kv_lora_rank + group.rope_head_dim


def ggml_group_bytes_per_token(group: AttentionGroup, k_type: str, v_type: str) -> float:
    """llama.cpp KV bytes one token costs in every layer of an attention group: K and V of every KV head, or the
    MLA latent in the K cache type alone."""
    if group.mla:
        return group.layers * mla_latent(group) * GGML_BYTES.get(k_type, 2.0)
    return group_bytes_per_token(group, ggml_slot_bytes(k_type, v_type, group.head_dim))


def vllm_group_bytes_per_token(group: AttentionGroup, dtype: str) -> float:
    """vLLM KV bytes per token and layer of an attention group (TurboQuant slots included); MLA: one latent."""
    if group.mla:
        return mla_latent(group) * VLLM_BYTES.get(dtype, 2.0)
    return group.kv_heads * vllm_slot_bytes(dtype, group.head_dim)


def recurrent_state_bytes(rec: Recurrent, *, ssm_bytes: float = 4, conv_bytes: float = 2) -> float:
    """Per-sequence state of every recurrent layer: the SSM state and the conv state (recurrent_layer_bytes)."""
    return rec.layers * recurrent_layer_bytes(rec, ssm_bytes=ssm_bytes, conv_bytes=conv_bytes)


def recurrent_layer_bytes(rec: Recurrent, *, ssm_bytes: float = 4, conv_bytes: float = 2) -> float:
    """One recurrent layer's state per sequence.

    Gated-DeltaNet: state v_heads x head_dim x head_dim in fp32 (docs/domain.md-6.2); the conv state holds
    (kernel - 1) past rows of the q/k/v projections: (2 x k_heads + v_heads) x head_dim values.
    Mamba-2: state heads x head_dim x state_size (llama.cpp n_embd_s() = ssm_d_state x ssm_d_inner, d_inner = heads x
    head_dim); conv (kernel - 1) rows of d_inner + 2 x groups x state_size (the x, B, C channels: llama.cpp
    n_embd_r() = (ssm_d_conv - 1) x (ssm_d_inner + 2 x ssm_n_group x ssm_d_state), src/llama-hparams.cpp at b8740;
    vLLM's mamba2 state shapes are the same).
    """
    if isinstance(rec, Mamba2Group):
        inner = rec.heads * rec.head_dim
        ssm = inner * rec.state_size * ssm_bytes
        conv_dim = inner + 2 * rec.groups * rec.state_size
        return ssm + conv_dim * (rec.conv_kernel - 1) * conv_bytes
    ssm = rec.v_heads * rec.head_dim * rec.head_dim * ssm_bytes
    conv_dim = (2 * rec.k_heads + rec.v_heads) * rec.head_dim
    return ssm + conv_dim * (rec.conv_kernel - 1) * conv_bytes


def recurrent_kind(rec: Recurrent) -> str:
    return "Mamba-2" if isinstance(rec, Mamba2Group) else "GDN"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def align_up(value: int, step: int) -> int:
    return cdiv(value, step) * step


@dataclass(frozen=True)
class Geometry:
    """The KV-relevant shape of a model: what holds KV, what is bounded, what is shared."""

    full: AttentionGroup
    sliding: AttentionGroup | None
    recurrent: Recurrent | None
    mtp_layers: int
    kv_shared_layers: int

    @classmethod
    def of(cls, arch: Architecture) -> Geometry:
        return cls(arch.full_attention, arch.sliding_attention, arch.recurrent, arch.mtp_layers, arch.kv_shared_layers)

    @property
    def hybrid(self) -> bool:
        return self.recurrent is not None


__all__ = [
    "GGML_BYTES", "GGML_DEFAULT", "GIB", "Geometry", "MIB", "QUANTIZED_V", "TQ_NORM_BYTES", "TURBOQUANT_BITS",
    "VLLM_BYTES",
    "Recurrent", "align_up", "cdiv", "ggml_group_bytes_per_token", "ggml_slot_bytes", "group_bytes_per_token",
    "mla_latent", "recurrent_kind", "recurrent_layer_bytes", "recurrent_state_bytes",
    "vllm_group_bytes_per_token", "vllm_slot_bytes",
]
