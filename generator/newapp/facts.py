"""A GGUF header -> the catalog's geometry facts, each with the header key it was read from, after checking that
the header's counts agree with its own tensors.

The keys are those llama.cpp's converter writes and its loader reads (`{arch}.block_count`,
`{arch}.attention.head_count_kv`, `{arch}.ssm.*`, `{arch}.full_attention_interval`, `{arch}.nextn_predict_layers`;
gguf-py constants.py `Keys.LLM`, `Keys.Attention`, `Keys.SSM`; src/llama-arch.cpp `LLM_KV_NAMES`); the tensor names
are src/llama-arch.cpp `LLM_TENSOR_NAMES`. `ARCHS` are the architectures the fit has a model for (docs/fit.md): plain
GQA attention on every layer, or Qwen's hybrid of Gated-DeltaNet and attention layers (one in
`full_attention_interval`), with or without routed experts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.core import InputError
from generator.newapp.gguf import ArrayInfo, Header, Scalar, TensorInfo

# GGUF general.architecture -> the Hugging Face model_type of its checkpoints (convert_hf_to_gguf.py registers
# each converter by the HF architectures it reads: LlamaModel, Qwen2Model, Qwen3Model, Qwen3MoeModel,
# Qwen3NextModel, Qwen3_5 text models)
DENSE = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "qwen3moe": "qwen3_moe"}
HYBRID = {"qwen35": "qwen3_5", "qwen35moe": "qwen3_5_moe", "qwen3next": "qwen3_next"}
ARCHS = {**DENSE, **HYBRID}
_BLK = re.compile(r"^blk\.([0-9]+)\.(.+)$")


@dataclass
class Facts:
    """What a header says, in the catalog's terms: `architecture` (the schema's fields), `shape` (the real shape's
    extra hyper-parameters), `facts` ((field, value, source key)) and the KV bytes per token in f16 the header
    gives (every attention layer's K and V heads)."""

    arch: str
    architecture: dict[str, object] = field(default_factory=dict)
    shape: dict[str, object] = field(default_factory=dict)
    facts: list[tuple[str, Scalar, str]] = field(default_factory=list)
    kv_bytes_per_token_f16: int = 0
    total_params: int = 0


def refuse_unknown(arch: str, where: str) -> InputError:
    known = ", ".join(sorted(ARCHS))
    return InputError(f"{where}: architecture {arch or '(none: no general.architecture)'!r} has no model in the fit "
                      f"(it knows {known}); its layers need a memory model first (docs/fit.md \"KV and state\"; "
                      "docs/new-model.md \"An architecture the fit does not know\")")


class _Reader:
    def __init__(self, header: Header, where: str):
        self.h, self.where = header, where
        self.arch = header.arch
        self.out = Facts(self.arch)

    def key(self, name: str) -> str:
        return name if name.startswith(("general.", "tokenizer.")) else f"{self.arch}.{name}"

    def int(self, name: str, default: int | None = None) -> int:
        key = self.key(name)
        value = self.h.kv.get(key)
        if value is None:
            if default is None:
                raise InputError(f"{self.where}: the header has no {key}, which llama.cpp needs for {self.arch}")
            return default
        if isinstance(value, list):
            nonzero = {v for v in value if v}
            if len(nonzero) != 1 or not all(isinstance(v, int) for v in value):
                raise InputError(f"{self.where}: {key} differs between layers ({sorted(nonzero)}); the fit models "
                                 "one value for every attention layer")
            value = nonzero.pop()
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{self.where}: {key} is {value!r}, not a whole number")
        return value

    def fact(self, field_: str, value: Scalar, *keys: str) -> None:
        self.out.facts.append((field_, value, " + ".join(self.key(k) for k in keys)))


def _lie(where: str, what: str) -> InputError:
    return InputError(f"{where}: the header contradicts its own tensors: {what}; refusing a file whose counts do not "
                      "match its tensors (a broken conversion, or not the file it claims to be)")


def read_facts(header: Header, where: str, file_bytes: int | None) -> Facts:
    """The facts of `header` (`where` names the file); InputError for an architecture the fit has no model for, a
    missing key, or the first count that disagrees with the tensors."""
    if header.arch not in ARCHS:
        raise refuse_unknown(header.arch, where)
    split = header.kv.get("split.count")
    if isinstance(split, int) and not isinstance(split, bool) and split > 1:
        raise InputError(f"{where}: one part of a GGUF split in {split} (split.count): its header lists this part's "
                         "tensors only; `catalog new` reads single-file GGUFs")
    g = _Geometry(_Reader(header, where))
    g.basics()
    attn = g.attention()
    if header.arch in HYBRID:
        g.hybrid(attn)
    else:
        g.dense(attn)
    g.moe()
    g.data_section(file_bytes)
    return g.finish(attn)


class _Geometry:
    """The checks and facts of read_facts, one step each, in the order a reader would look."""

    def __init__(self, r: _Reader):
        self.r, self.h, self.where, self.out = r, r.h, r.where, r.out
        self.by_name = {t.name: t for t in self.h.tensors}
        self.layers: dict[int, dict[str, TensorInfo]] = {}
        for t in self.h.tensors:
            m = _BLK.match(t.name)
            if m:
                self.layers.setdefault(int(m.group(1)), {})[m.group(2)] = t
        self.n_all = r.int("block_count")
        self.nextn = r.int("nextn_predict_layers", 0)
        self.trunk = self.n_all - self.nextn
        self.hidden = r.int("embedding_length")
        self.n_head = r.int("attention.head_count")
        self.kv_heads = r.int("attention.head_count_kv", self.n_head)
        self.k_len = r.int("attention.key_length", self.hidden // self.n_head if self.n_head else 0)
        self.v_len = r.int("attention.value_length", self.k_len)
        tokens = self.h.kv.get("tokenizer.ggml.tokens")
        self.vocab = tokens.count if isinstance(tokens, ArrayInfo) else len(tokens) if isinstance(tokens, list) \
            else r.int("vocab_size", 0)
        self.experts = self.used = self.expert_ff = self.shared_ff = 0

    def basics(self) -> None:
        r, where = self.r, self.where
        top = max(self.layers) + 1 if self.layers else 0
        if top != self.n_all:
            raise _lie(where, f"{r.key('block_count')} is {self.n_all} but the tensors have blocks 0-{top - 1} ({top})")
        embd = self.by_name.get("token_embd.weight")
        if embd is None:
            raise _lie(where, "there is no token_embd.weight")
        if embd.ne[0] != self.hidden:
            raise _lie(where, f"{r.key('embedding_length')} is {self.hidden} but token_embd.weight rows are "
                              f"{embd.ne[0]} wide")
        if self.vocab and len(embd.ne) > 1 and embd.ne[1] != self.vocab:
            raise _lie(where, f"the vocabulary has {self.vocab} tokens but token_embd.weight has {embd.ne[1]} rows")
        self.vocab = self.vocab or (embd.ne[1] if len(embd.ne) > 1 else 0)
        if self.k_len != self.v_len:
            raise InputError(f"{where}: K and V heads differ in size ({r.key('attention.key_length')} {self.k_len}, "
                             f"value_length {self.v_len}); the fit models one head_dim for both")

    def attention(self) -> list[int]:
        """The trunk's attention layers (those with attn_k), their K and Q widths checked against the header."""
        r, where, kv, k_len = self.r, self.where, self.kv_heads, self.k_len
        attn = sorted(i for i, ts in self.layers.items() if "attn_k.weight" in ts and i < self.trunk)
        for i in attn:
            k = self.layers[i]["attn_k.weight"]
            if k.ne[-1] != kv * k_len:
                raise _lie(where, f"{r.key('attention.head_count_kv')} {kv} x key_length {k_len} = {kv * k_len} but "
                                  f"blk.{i}.attn_k.weight has {k.ne[-1]} outputs")
            q = self.layers[i].get("attn_q.weight")
            if q is not None and q.ne[-1] not in (self.n_head * k_len, 2 * self.n_head * k_len):
                raise _lie(where, f"{r.key('attention.head_count')} {self.n_head} x key_length {k_len} = "
                                  f"{self.n_head * k_len} but blk.{i}.attn_q.weight has {q.ne[-1]} outputs")
        return attn

    def hybrid(self, attn: list[int]) -> None:
        r, where, trunk = self.r, self.where, self.trunk
        interval = r.int("full_attention_interval", 4)
        full = trunk // interval
        if len(attn) != full:
            raise _lie(where, f"{r.key('block_count')} {self.n_all} - nextn {self.nextn} with one attention layer in "
                              f"{interval} ({r.key('full_attention_interval')}) gives {full} attention layers, but "
                              f"{len(attn)} blocks have attn_k.weight")
        v_heads, k_heads = r.int("ssm.time_step_rank"), r.int("ssm.group_count")
        state, conv = r.int("ssm.state_size"), r.int("ssm.conv_kernel")
        inner = r.int("ssm.inner_size", state * v_heads)
        if inner != state * v_heads:
            raise _lie(where, f"{r.key('ssm.inner_size')} {inner} is not ssm.state_size {state} x "
                              f"ssm.time_step_rank {v_heads}")
        rec = sorted(i for i, ts in self.layers.items() if "ssm_a" in ts and i < trunk)
        if len(rec) != trunk - full:
            raise _lie(where, f"{trunk - full} recurrent layers expected but {len(rec)} blocks have ssm_a")
        if rec and self.layers[rec[0]]["ssm_a"].ne[0] != v_heads:
            raise _lie(where, f"{r.key('ssm.time_step_rank')} {v_heads} but blk.{rec[0]}.ssm_a has "
                              f"{self.layers[rec[0]]['ssm_a'].ne[0]} heads")
        self.out.architecture["full_attention"] = {"layers": full, "kv_heads": self.kv_heads, "head_dim": self.k_len}
        self.out.architecture["recurrent"] = {"layers": trunk - full, "k_heads": k_heads, "v_heads": v_heads,
                                              "head_dim": state, "conv_kernel": conv}
        layer_keys = ("block_count", "nextn_predict_layers", "full_attention_interval")
        r.fact("architecture.full_attention.layers", full, *layer_keys)
        r.fact("architecture.recurrent.layers", trunk - full, *layer_keys)
        r.fact("architecture.recurrent.k_heads", k_heads, "ssm.group_count")
        r.fact("architecture.recurrent.v_heads", v_heads, "ssm.time_step_rank")
        r.fact("architecture.recurrent.head_dim", state, "ssm.state_size")
        r.fact("architecture.recurrent.conv_kernel", conv, "ssm.conv_kernel")

    def dense(self, attn: list[int]) -> None:
        if len(attn) != self.trunk:
            raise _lie(self.where, f"{self.r.key('block_count')} {self.n_all} but {len(attn)} blocks have "
                                   "attn_k.weight")
        self.out.architecture["full_attention"] = {"layers": self.trunk, "kv_heads": self.kv_heads,
                                                   "head_dim": self.k_len}
        self.r.fact("architecture.full_attention.layers", self.trunk, "block_count")

    def moe(self) -> None:
        r = self.r
        self.experts = r.int("expert_count", 0)
        if not self.experts:
            return
        self.used = r.int("expert_used_count", 0)
        self.expert_ff = r.int("expert_feed_forward_length", 0)
        self.shared_ff = r.int("expert_shared_feed_forward_length", 0)
        for i, ts in sorted(self.layers.items()):
            exps = ts.get("ffn_up_exps.weight") or ts.get("ffn_gate_exps.weight")
            if exps is None:
                continue
            held = exps.ne[2] if len(exps.ne) == 3 else 1
            if held != self.experts:
                raise _lie(self.where, f"{r.key('expert_count')} is {self.experts} but {exps.name} holds {held} "
                                       "experts")
            if self.expert_ff and exps.ne[1] != self.expert_ff:
                raise _lie(self.where, f"{r.key('expert_feed_forward_length')} is {self.expert_ff} but blk.{i} "
                                       f"experts are {exps.ne[1]} wide")
            return

    def data_section(self, file_bytes: int | None) -> None:
        end = 0
        for t in sorted(self.h.tensors, key=lambda t: t.offset):
            if t.offset < end:
                raise _lie(self.where, f"tensor {t.name} starts at data offset {t.offset:,}, inside the tensor "
                                       "before it")
            end = t.offset + t.nbytes
        if file_bytes is not None and self.h.data_offset + end > file_bytes:
            raise _lie(self.where, f"the tensors end at byte {self.h.data_offset + end:,} but the file has "
                                   f"{file_bytes:,}")

    def finish(self, attn: list[int]) -> Facts:
        r, out = self.r, self.out
        total = sum(_count(t) for t in self.h.tensors)
        expert_params = sum(_count(t) for t in self.h.tensors if "_exps." in t.name)
        active = total - (expert_params * (self.experts - self.used) // self.experts if self.experts else 0)
        context = r.int("context_length")
        out.total_params = total
        out.architecture.update({
            "arch": self.h.arch, "layers": self.trunk, "hidden_size": self.hidden, "vocab_size": self.vocab,
            "mtp_layers": self.nextn, "total_params_b": max(0.01, round(total / 1e9, 2)),
            "active_params_b": max(0.01, round(active / 1e9, 2)), "max_context": context})
        r.fact("architecture.full_attention.kv_heads", self.kv_heads, "attention.head_count_kv")
        r.fact("architecture.full_attention.head_dim", self.k_len, "attention.key_length")
        r.fact("architecture.arch", self.h.arch, "general.architecture")
        r.fact("architecture.layers", self.trunk, "block_count", "nextn_predict_layers")
        r.fact("architecture.hidden_size", self.hidden, "embedding_length")
        r.fact("architecture.vocab_size", self.vocab, "tokenizer.ggml.tokens")
        r.fact("architecture.max_context", context, "context_length")
        if self.nextn:
            r.fact("architecture.mtp_layers", self.nextn, "nextn_predict_layers")
        n_ff = r.int("feed_forward_length", 0)
        out.shape = {"n_head": self.n_head, "n_ff": n_ff, "expert_count": self.experts, "expert_used": self.used,
                     "expert_ff": self.expert_ff, "shared_expert_ff": self.shared_ff,
                     "tied_embeddings": "output.weight" not in self.by_name}
        r.fact("shape.n_head", self.n_head, "attention.head_count")
        for name, value, key in (("n_ff", n_ff, "feed_forward_length"), ("expert_count", self.experts, "expert_count"),
                                 ("expert_used", self.used, "expert_used_count"),
                                 ("expert_ff", self.expert_ff, "expert_feed_forward_length"),
                                 ("shared_expert_ff", self.shared_ff, "expert_shared_feed_forward_length")):
            if value:
                r.fact(f"shape.{name}", value, key)
        out.kv_bytes_per_token_f16 = len(attn) * self.kv_heads * (self.k_len + self.v_len) * 2
        return out


def _count(t: TensorInfo) -> int:
    n = 1
    for d in t.ne:
        n *= d
    return n


__all__ = ["ARCHS", "DENSE", "Facts", "HYBRID", "read_facts", "refuse_unknown"]
