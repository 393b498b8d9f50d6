"""A GGUF no catalog model describes, written with the project's real-shape writer (gguf-py's GGUFWriter underneath):
the input of the `catalog new` tests (tests/newapp/)."""

from __future__ import annotations

from generator.fit.realshape import Spec, Tensor, _vocab


def tiny_spec(arch: str = "qwen3", *, layers: int = 4, kv_heads: int = 2, lie_kv: int | None = None,
              vocab: int = 320) -> Spec:
    """A dense GQA model llama.cpp loads (its qwen3 loader: Q/K norms, SwiGLU FFN): hidden 256, 4 heads of 64,
    `kv_heads` KV heads, FFN 512, Q8_0 matrices, F32 norms, a `vocab`-token vocabulary."""
    e, heads, head, ff = 256, 4, 64, 512
    spec = Spec(arch=arch, name="tiny")
    spec.meta("general.name", "Tiny Qwen3 4L", "str")
    spec.meta("general.basename", "Tiny-Qwen3", "str")
    spec.meta("general.size_label", "4L", "str")
    spec.meta("block_count", layers)
    spec.meta("context_length", 32768)
    spec.meta("embedding_length", e)
    spec.meta("feed_forward_length", ff)
    spec.meta("attention.head_count", heads)
    spec.meta("attention.head_count_kv", kv_heads if lie_kv is None else lie_kv)
    spec.meta("attention.key_length", head)
    spec.meta("attention.value_length", head)
    spec.meta("attention.layer_norm_rms_epsilon", 1e-6, "f32")
    _vocab(spec, vocab)  # the real-shape writer's SentencePiece-style vocabulary: llama.cpp loads it
    spec.tensors.append(Tensor("token_embd.weight", (e, vocab), "Q8_0"))
    spec.tensors.append(Tensor("output_norm.weight", (e,), "F32"))
    spec.tensors.append(Tensor("output.weight", (e, vocab), "Q8_0"))
    for i in range(layers):
        b = f"blk.{i}"
        spec.tensors += [Tensor(f"{b}.attn_norm.weight", (e,), "F32"),
                         Tensor(f"{b}.attn_q.weight", (e, heads * head), "Q8_0"),
                         Tensor(f"{b}.attn_k.weight", (e, kv_heads * head), "Q8_0"),
                         Tensor(f"{b}.attn_v.weight", (e, kv_heads * head), "Q8_0"),
                         Tensor(f"{b}.attn_output.weight", (heads * head, e), "Q8_0"),
                         Tensor(f"{b}.attn_q_norm.weight", (head,), "F32"),  # qwen3's Q/K norms
                         Tensor(f"{b}.attn_k_norm.weight", (head,), "F32"),
                         Tensor(f"{b}.ffn_norm.weight", (e,), "F32"),
                         Tensor(f"{b}.ffn_gate.weight", (e, ff), "Q8_0"),
                         Tensor(f"{b}.ffn_up.weight", (e, ff), "Q8_0"),
                         Tensor(f"{b}.ffn_down.weight", (ff, e), "Q8_0")]
    return spec
