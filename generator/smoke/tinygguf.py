"""A tiny random-weight llama GGUF that a real llama-server serves on a CPU in a second (`catalog smoke --local`).

Written with the standard library only (no numpy, no gguf package), so every installation of the tool can write
it. The format is GGUF version 3 as ggml-org/llama.cpp documents it (docs `gguf.md`, the header, the typed
key/value pairs, the tensor infos, then the tensor data, each aligned to 32 bytes: `general.alignment`'s
default) and as gguf-py's `GGUFWriter` writes it (`gguf-py/gguf/gguf_writer.py`, `constants.py`
`GGUFValueType`); tests/test_smoke_local.py reads the file back with gguf-py's own `GGUFReader` and compares it
with the file the test suite's writer makes through gguf-py.

The model is the test suite's measured recipe (tests/support/tinygguf.py): architecture `llama`, n_embd 128,
4 blocks, 4 heads / 2 KV heads, n_ff 256, F32 weights of sigma 0.02 from a seeded generator, norms of ones,
a 404-token byte-fallback SentencePiece-style vocabulary and a tiny chat template. One constant "bias" channel
shapes what it says: embedding dimension 0 is 1.0 for every token, so column 0 of `output.weight` acts as a
per-token logit bias; `</s>`, the specials and the 256 byte tokens get a negative one, so every answer runs to
max_tokens in whole text pieces (a server then streams one chunk per token). `draft()` is the matching 1-block
draft model (n_embd 64) for speculative decoding.
"""

from __future__ import annotations

import random
import struct
from array import array
from dataclasses import dataclass
from pathlib import Path

SPACE = "\u2581"
WORDS = ("the", "a", "is", "of", "and", "to", "in", "model", "hello", "world", "Helm", "chart", "vLLM",
         "llama", "server", "test", "ok", "yes", "no", "user")
CHARS = ("abcdefghijklmnopqrstuvwxyz" "ABCDEFGHIJKLMNOPQRSTUVWXYZ" "0123456789" ".,!?:;-'\"()")
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
BIAS = 3.0  # weight on the constant channel; the normed channel is ~11, so the logit shift is ~33
ALIGNMENT = 32
MAGIC, VERSION = b"GGUF", 3
# GGUFValueType (gguf-py constants.py)
UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
F32 = 0  # GGMLQuantizationType.F32


@dataclass(frozen=True)
class Dims:
    n_embd: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_head_kv: int = 2
    context: int = 512

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


MAIN = Dims()
DRAFT = Dims(n_embd=64, n_layer=1)


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """Tokens, scores and token types: 3 specials + 256 bytes + 145 pieces = 404."""
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        scores.append(0.0)
        types.append(6)
    pieces = [SPACE + w for w in WORDS] + [SPACE] + list(CHARS) + [SPACE + c for c in CHARS[:52]]
    for i, piece in enumerate(dict.fromkeys(pieces)):  # each piece once, in order
        tokens.append(piece)
        scores.append(-1000.0 - i if len(piece) == 1 else -float(i))
        types.append(1)
    return tokens, scores, types


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


FORMATS = {UINT32: "<I", INT32: "<i", FLOAT32: "<f", BOOL: "<?"}


def _value(kind: int, value: object) -> bytes:
    if kind == STRING:
        assert isinstance(value, str)
        return _string(value)
    return struct.pack(FORMATS[kind], value)


def _kv(key: str, kind: int, value: object, item: int | None = None) -> bytes:
    head = _string(key) + struct.pack("<I", kind)
    if kind != ARRAY:
        return head + _value(kind, value)
    assert item is not None and isinstance(value, list)
    return head + struct.pack("<IQ", item, len(value)) + b"".join(_value(item, v) for v in value)


def _tensors(dims: Dims, vocab: int, rng: random.Random, bias: list[float] | None) -> list[tuple[str, tuple[int, ...],
                                                                                             array[float]]]:
    """(name, numpy-order shape (rows, cols), row-major F32 data) of every tensor, in gguf-py's writing order."""
    def rand(rows: int, cols: int) -> tuple[tuple[int, ...], array[float]]:
        return (rows, cols), array("f", (rng.gauss(0.0, 0.02) for _ in range(rows * cols)))

    def ones(n: int) -> tuple[tuple[int, ...], array[float]]:
        return (n,), array("f", [1.0]) * n

    e, d, f = dims.n_embd, dims.head_dim, 2 * dims.n_embd
    out = [("token_embd.weight", *rand(vocab, e)), ("output_norm.weight", *ones(e)), ("output.weight", *rand(vocab, e))]
    if bias is not None:
        for row in range(vocab):  # column 0 of both: the constant channel, and the per-token logit bias
            out[0][2][row * e] = 1.0
            out[2][2][row * e] = bias[row]
    for n in range(dims.n_layer):
        out += [
            (f"blk.{n}.attn_norm.weight", *ones(e)),
            (f"blk.{n}.attn_q.weight", *rand(dims.n_head * d, e)),
            (f"blk.{n}.attn_k.weight", *rand(dims.n_head_kv * d, e)),
            (f"blk.{n}.attn_v.weight", *rand(dims.n_head_kv * d, e)),
            (f"blk.{n}.attn_output.weight", *rand(e, dims.n_head * d)),
            (f"blk.{n}.ffn_norm.weight", *ones(e)),
            (f"blk.{n}.ffn_gate.weight", *rand(f, e)),
            (f"blk.{n}.ffn_up.weight", *rand(f, e)),
            (f"blk.{n}.ffn_down.weight", *rand(e, f)),
        ]
    return out


def _pad(n: int) -> int:
    return (ALIGNMENT - n % ALIGNMENT) % ALIGNMENT


def write(path: Path, dims: Dims = MAIN, *, seed: int = 0, name: str = "tiny-llama", talkative: bool = True) -> Path:
    """Write the GGUF to `path` (about 2.8 MB with the default dimensions) and return it. `talkative`: the bias
    that makes every answer run to max_tokens in whole text pieces."""
    tokens, scores, types = vocabulary()
    bias = None
    if talkative:
        bias = [0.0] * len(tokens)
        for i in range(3 + 256):  # the specials (</s> among them) and the byte-fallback tokens
            bias[i] = -BIAS
    tensors = _tensors(dims, len(tokens), random.Random(seed), bias)
    kvs = [
        _kv("general.architecture", STRING, "llama"),
        _kv("general.name", STRING, name),
        _kv("llama.context_length", UINT32, dims.context),
        _kv("llama.embedding_length", UINT32, dims.n_embd),
        _kv("llama.block_count", UINT32, dims.n_layer),
        _kv("llama.feed_forward_length", UINT32, 2 * dims.n_embd),
        _kv("llama.attention.head_count", UINT32, dims.n_head),
        _kv("llama.attention.head_count_kv", UINT32, dims.n_head_kv),
        _kv("llama.rope.dimension_count", UINT32, dims.head_dim),
        _kv("llama.attention.layer_norm_rms_epsilon", FLOAT32, 1e-5),
        _kv("llama.vocab_size", UINT32, len(tokens)),
        _kv("general.file_type", UINT32, 0),  # LlamaFileType.ALL_F32
        _kv("tokenizer.ggml.model", STRING, "llama"),
        _kv("tokenizer.ggml.tokens", ARRAY, tokens, STRING),
        _kv("tokenizer.ggml.scores", ARRAY, scores, FLOAT32),
        _kv("tokenizer.ggml.token_type", ARRAY, types, INT32),
        _kv("tokenizer.ggml.bos_token_id", UINT32, 1),
        _kv("tokenizer.ggml.eos_token_id", UINT32, 2),
        _kv("tokenizer.ggml.unknown_token_id", UINT32, 0),
        _kv("tokenizer.ggml.add_bos_token", BOOL, True),
        _kv("tokenizer.ggml.add_eos_token", BOOL, False),
        _kv("tokenizer.chat_template", STRING, CHAT_TEMPLATE),
    ]
    infos, offset = [], 0
    for tensor_name, shape, data in tensors:
        ne = tuple(reversed(shape))  # ggml's ne[0] is the fastest-moving (numpy's last) dimension
        infos.append(_string(tensor_name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
                     + struct.pack("<IQ", F32, offset))
        size = len(data) * 4
        offset += size + _pad(size)
    head = MAGIC + struct.pack("<IQQ", VERSION, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(infos)
    with path.open("wb") as out:
        out.write(head + b"\0" * _pad(len(head)))
        for _, _, data in tensors:
            assert data.itemsize == 4  # array("f") is a C float: 4 bytes on every platform CPython runs on
            raw = data.tobytes() if struct.pack("=f", 1.0) == struct.pack("<f", 1.0) else _swapped(data)
            out.write(raw + b"\0" * _pad(len(raw)))
    return path


def _swapped(data: array[float]) -> bytes:
    copy = array("f", data)
    copy.byteswap()  # GGUF is little-endian; a big-endian host writes the bytes swapped
    return copy.tobytes()


def draft(path: Path, *, context: int, seed: int = 1) -> Path:
    """The matching draft model (1 block, n_embd 64, the same tokenizer) for `--spec-type draft-simple`."""
    return write(path, Dims(n_embd=DRAFT.n_embd, n_layer=DRAFT.n_layer, context=context), seed=seed,
                 name="tiny-draft")
