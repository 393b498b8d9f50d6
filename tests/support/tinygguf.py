"""Write a tiny random-weight llama GGUF that a real `llama-server` can serve (docs/testing.md).

The defaults are a recipe measured to boot a real llama-server: architecture `llama`, n_embd 128,
4 blocks, 4 heads / 2 KV heads, head_dim 32, n_ff 256, context 512, F32 weights drawn from
`numpy.random.default_rng(seed)` with sigma 0.02 and norms of ones, a 404-token byte-fallback
SentencePiece vocabulary and a tiny chat template. `draft()` gives the matching 1-block draft model
(n_embd 64) for speculative decoding (`-md draft.gguf --spec-type draft-simple`).

Two opt-in knobs shape what the model says, through one constant "bias" channel: embedding
dimension 0 is set to 1.0 for every token, so after the final RMSNorm that dimension is large and
the same sign for every position, and column 0 of `output.weight` then acts as a per-token logit bias.
- `never_eos=True`: `</s>` gets a large negative bias, so sampled output runs to max_tokens.
- `text_only=True`: also the special and the 256 byte-fallback tokens, so every generated token is
  a whole text piece (a server then streams exactly one chunk per token).
- `dominant_token="▁ok"`: that token gets a large positive bias and wins every step — a model
  that answers one token over and over (a degenerate output with HTTP 200).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# The shape, vocabulary and chat template are the package's own (the writer `catalog smoke --local` uses); this
# module adds the numpy/gguf-py writer with the opt-in knobs above, for the tests.
from generator.smoke.tinygguf import BIAS, CHAT_TEMPLATE, CHARS, DRAFT, MAIN, SPACE, WORDS, Dims, vocabulary

__all__ = ["BIAS", "CHARS", "CHAT_TEMPLATE", "DRAFT", "MAIN", "SPACE", "WORDS", "Dims", "draft", "vocabulary", "write"]


def _tensors(dims: Dims, vocab: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    def rand(*shape: int) -> np.ndarray:
        return rng.normal(0.0, 0.02, size=shape).astype(np.float32)

    e, d, f = dims.n_embd, dims.head_dim, 2 * dims.n_embd
    out = {"token_embd.weight": rand(vocab, e), "output_norm.weight": np.ones(e, np.float32),
           "output.weight": rand(vocab, e)}
    for n in range(dims.n_layer):
        out |= {
            f"blk.{n}.attn_norm.weight": np.ones(e, np.float32),
            f"blk.{n}.attn_q.weight": rand(dims.n_head * d, e),
            f"blk.{n}.attn_k.weight": rand(dims.n_head_kv * d, e),
            f"blk.{n}.attn_v.weight": rand(dims.n_head_kv * d, e),
            f"blk.{n}.attn_output.weight": rand(e, dims.n_head * d),
            f"blk.{n}.ffn_norm.weight": np.ones(e, np.float32),
            f"blk.{n}.ffn_gate.weight": rand(f, e),
            f"blk.{n}.ffn_up.weight": rand(f, e),
            f"blk.{n}.ffn_down.weight": rand(e, f),
        }
    return out


def _bias(tensors: dict[str, np.ndarray], tokens: list[str], never_eos: bool, text_only: bool,
          dominant: str | None) -> None:
    if not (never_eos or text_only or dominant):
        return
    tensors["token_embd.weight"][:, 0] = 1.0
    column = np.zeros(len(tokens), np.float32)
    if never_eos:
        column[tokens.index("</s>")] = -BIAS
    if text_only:
        column[: 3 + 256] = -BIAS
    if dominant is not None:
        column[tokens.index(dominant)] = BIAS
    tensors["output.weight"][:, 0] = column


def write(path: Path, dims: Dims = MAIN, *, seed: int = 0, name: str = "tiny-llama",
          never_eos: bool = False, text_only: bool = False, dominant_token: str | None = None) -> Path:
    """Write the GGUF to `path` (about 2.8 MB with the default dimensions) and return it."""
    import gguf

    tokens, scores, types = vocabulary()
    tensors = _tensors(dims, len(tokens), np.random.default_rng(seed))
    _bias(tensors, tokens, never_eos, text_only, dominant_token)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(name)
    writer.add_context_length(dims.context)
    writer.add_embedding_length(dims.n_embd)
    writer.add_block_count(dims.n_layer)
    writer.add_feed_forward_length(2 * dims.n_embd)
    writer.add_head_count(dims.n_head)
    writer.add_head_count_kv(dims.n_head_kv)
    writer.add_rope_dimension_count(dims.head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    for key, array in tensors.items():
        writer.add_tensor(key, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def draft(path: Path, **options) -> Path:
    """The matching draft model (1 block, n_embd 64, same tokenizer)."""
    return write(path, DRAFT, name="tiny-draft", **options)
