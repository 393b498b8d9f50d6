"""The bounded GGUF header reader against gguf-py's own reader and type table, and the compact tensor form."""

from __future__ import annotations

import gguf
import pytest

from generator.core.errors import InputError
from generator.fit.realshape import write_spec
from generator.newapp.gguf import ArrayInfo, Short, parse
from generator.schema.gguf import GGML_TYPE_TABLE, compact, expand, layers_of
from support.newgguf import tiny_spec


def test_the_type_table_is_gguf_pys():
    for type_id, (name, block, size) in GGML_TYPE_TABLE.items():
        q = gguf.GGMLQuantizationType(type_id)
        assert q.name == name
        assert gguf.GGML_QUANT_SIZES[q] == (block, size)
    assert {int(q) for q in gguf.GGML_QUANT_SIZES} <= set(GGML_TYPE_TABLE)


def test_the_header_reads_as_gguf_py_reads_it_and_a_prefix_is_short(tmp_path):
    path = write_spec(tiny_spec(), tmp_path / "t.gguf")
    data = path.read_bytes()
    header = parse(data, "t.gguf")
    reader = gguf.GGUFReader(path)
    assert [(t.name, tuple(int(n) for n in t.shape), int(t.tensor_type)) for t in reader.tensors] == \
        [(t.name, t.ne, t.type_id) for t in header.tensors]
    assert header.data_offset == reader.data_offset
    assert header.kv["qwen3.attention.head_count_kv"] == 2
    assert header.kv["tokenizer.ggml.tokens"] == ArrayInfo(8, 320)
    with pytest.raises(Short):
        parse(data[:header.data_offset - 40], "t.gguf")
    with pytest.raises(InputError, match="not a GGUF"):
        parse(b"PK\x03\x04" + data[4:], "t.gguf")


def test_compact_tensors_round_trip():
    tensors = [("token_embd.weight", (8, 16), "Q8_0")]
    tensors += [(f"blk.{i}.attn_k.weight", (8, 4), "Q4_K" if i % 4 == 3 else "Q6_K") for i in range(64)]
    entries = compact(tensors)
    assert entries == ("token_embd.weight Q8_0 8x16", "blk.#.attn_k.weight Q6_K 8x4 @0-62:2,1-61:4",
                       "blk.#.attn_k.weight Q4_K 8x4 @3-63:4")
    assert sorted(expand(entries)) == sorted(tensors)
    assert layers_of("0-2,5,7-11:2") == [0, 1, 2, 5, 7, 9, 11]
