"""Bytes an engine stores per cached value: the KV dtype tables of the engine families, and the KV cache types each
llama.cpp fork accepts.

The families' settings types (generator/engines/settings.py) answer `kv_slot_bytes` from these tables, so the memory
fit, the roofline and the speed model charge one app's KV cache the same bytes. generator/fit/memory.py re-exports
them for the fit's arithmetic. Byte sizes and their sources are in generator/fit/memory.py's docstring.
"""

from __future__ import annotations

# llama.cpp cache types: bytes per cached value.
GGML_BYTES: dict[str, float] = {
    "f32": 4.0, "f16": 2.0, "bf16": 2.0,
    "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32, "q5_0": 22 / 32, "q5_1": 24 / 32, "iq4_nl": 18 / 32,
    "turbo2": 10 / 32, "turbo3": 14 / 32, "turbo4": 18 / 32, "tq3_0": 14 / 32,
    "turbo2_tcq": 10 / 32, "turbo3_tcq": 14 / 32,  # buun trellis variants: counted as their base type
}
GGML_DEFAULT = "f16"
GGML_CONV_BYTES = 4  # llama.cpp keeps a recurrent layer's conv state in f32

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
MODEL_DTYPE_CONV_BYTES = 2  # vLLM and SGLang keep the conv state in the model dtype (docs/domain.md)

# SGLang `--kv-cache-dtype`: bytes per cached value (generator/engines/sglang.py `cell_bytes`, its sources there).
SGLANG_KV_BYTES: dict[str, float] = {"auto": 2, "bf16": 2, "bfloat16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp4_e2m1": 0.5}

# llama.cpp KV types per fork (docs/domain.md): TurboQuant types exist only in these forks.
TURBO_TYPES: dict[str, set[str]] = {
    "upstream": set(),
    "atomic": {"turbo2", "turbo3", "turbo4"},
    "buun": {"turbo2", "turbo3", "turbo4", "turbo8", "turbo1_tcq", "turbo2_tcq", "turbo3_tcq", "vbr"},
    # github.com/Anbeeld/beellama.cpp@0ef12a52c35eeff894ca4ef8019f2510f5e3ded8 common/arg.cpp:389-404 (kv_cache_types)
    "beellama": {"turbo2", "turbo3", "turbo4", "turbo3_tcq", "turbo2_tcq"},
    "lucebox": {"tq3_0"},
    "genesis": set(), "": set(),
}
ALL_TURBO: set[str] = set().union(*TURBO_TYPES.values())


def vllm_slot_bytes(dtype: str, head_dim: int) -> float:
    """Bytes vLLM stores per token and KV head (K and V together)."""
    if dtype in TURBOQUANT_BITS:
        k_bits, v_bits = TURBOQUANT_BITS[dtype]
        return head_dim * (k_bits + v_bits) / 8 + TQ_NORM_BYTES
    return head_dim * 2 * VLLM_BYTES.get(dtype, 2.0)


def ggml_slot_bytes(k_type: str, v_type: str, head_dim: int) -> float:
    """Bytes llama.cpp stores per token and KV head (K and V caches)."""
    return head_dim * (GGML_BYTES.get(k_type, 2.0) + GGML_BYTES.get(v_type, 2.0))


__all__ = ["ALL_TURBO", "GGML_BYTES", "GGML_CONV_BYTES", "GGML_DEFAULT", "MODEL_DTYPE_CONV_BYTES", "SGLANG_KV_BYTES",
           "TQ_NORM_BYTES",
           "TURBOQUANT_BITS", "TURBO_TYPES", "VLLM_BYTES", "ggml_slot_bytes", "vllm_slot_bytes"]
