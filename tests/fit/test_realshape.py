"""Real-shape GGUFs (generator/fit/realshape.py) and the probes built from the apps, without a server.

That llama-server loads them and allocates what the fit says: tests/fit/test_realshape_server.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.fit import realshape
from generator.fit.probe import probe_for

from support.realshape import LLAMA_APPS, NOT_PROBED, market

MIB = 2**20


def test_every_llamacpp_app_has_a_probe_or_a_reason() -> None:
    llama = sorted(name for name, r in market().apps.items() if r.stack.engine == "llamacpp")
    assert llama == sorted((*LLAMA_APPS, *NOT_PROBED))
    for name in LLAMA_APPS:
        assert probe_for(market().apps[name]) is not None
    for name in NOT_PROBED:
        assert probe_for(market().apps[name]) is None
    assert {market().apps[name].model.id for name in LLAMA_APPS} <= set(realshape.SHAPES)


def test_a_real_shape_file_is_sparse_and_reads_back(tmp_path: Path) -> None:
    import gguf

    model = market().models["qwen36-27b"]
    path = tmp_path / "q.gguf"
    spec = realshape.write(model, "q4km-mtp", path, mtp=True)
    stat = path.stat()
    assert stat.st_size > spec.tensor_bytes > 14 * 1024 * MIB  # a 15 GiB file ...
    assert stat.st_blocks * 512 < 64 * MIB  # ... that costs a few MiB of disk
    reader = gguf.GGUFReader(str(path))
    fields = reader.fields
    assert bytes(fields["general.architecture"].parts[-1]).decode() == "qwen35"
    assert int(fields["qwen35.block_count"].parts[-1][0]) == 64 + 1  # the trunk and its NextN (MTP) layer
    assert int(fields["qwen35.nextn_predict_layers"].parts[-1][0]) == 1
    assert len(fields["tokenizer.ggml.tokens"].data) == model.architecture.vocab_size
    names = {t.name: t for t in reader.tensors}
    assert len(names) == len(spec.tensors)
    assert list(names["blk.3.attn_k.weight"].shape) == [5120, 4 * 256]  # full attention every 4th layer
    assert list(names["blk.0.ssm_out.weight"].shape) == [128 * 48, 5120]  # GDN value heads x head_dim
    assert "blk.64.nextn.eh_proj.weight" in names
    assert names["output.weight"].tensor_type == gguf.GGMLQuantizationType.Q6_K  # Q4_K_M keeps output in Q6_K
    assert sum(int(t.n_bytes) for t in reader.tensors) == spec.tensor_bytes


@pytest.mark.parametrize("model_id,quant,full_kv,swa_kv,shared", [
    ("gemma4-26b-a4b", "ud-q4kxl", 2, 8, 0),
    ("gemma4-e2b", "q8_0", 1, 1, 20),
])
def test_gemma4_layers_follow_the_catalog(model_id: str, quant: str, full_kv: int, swa_kv: int, shared: int) -> None:
    model = market().models[model_id]
    arch = model.architecture
    spec = realshape.spec_for(model, quant)
    meta = {key: value for key, value, _ in spec.metadata}
    pattern = meta["gemma4.attention.sliding_window_pattern"]
    owners = arch.layers - shared  # layers that hold their own KV
    assert sum(1 for il in range(owners) if not pattern[il]) == arch.full_attention.layers
    assert sum(1 for il in range(owners) if pattern[il]) == arch.sliding_attention.layers
    assert set(meta["gemma4.attention.head_count_kv"]) == {full_kv, swa_kv}
    keys = [t for t in spec.tensors if t.name.endswith(".attn_k.weight")]
    assert len(keys) == owners  # KV-shared layers have no K projection
    if arch.full_attention.k_eq_v:
        values = [t for t in spec.tensors if t.name.endswith(".attn_v.weight")]
        assert len(values) == arch.sliding_attention.layers  # global layers use K as V


def test_probe_flags_follow_the_app_and_name_every_substitution() -> None:
    long = probe_for(market().apps["llamacppqwen36mtpone"])
    assert long is not None and long.mtp
    assert list(long.args) == ["-c", "131072", "-ctk", "q4_0", "-ctv", "q4_0", "-b", "512", "-ub", "512", "-np", "1",
                               "-fa", "on", "--spec-type", "draft-mtp", "--spec-draft-n-max", "5"]
    assert long.notes == ()
    gemma = probe_for(market().apps["gemma426ba4bone"])
    assert gemma is not None and not gemma.mtp
    assert "turbo3" not in gemma.args and gemma.args[gemma.args.index("-ctk") + 1] == "q4_0"
    assert any("turbo3" in note for note in gemma.notes) and any("drafter" in note for note in gemma.notes)
    assert "--mlock" not in gemma.args  # a 16 GiB sparse file must not be locked into RAM


def test_weights_follow_the_quantization_name() -> None:
    assert realshape.quant_types("q4km") == ("Q4_K", "Q6_K")
    assert realshape.quant_types("ud-q4kxl") == ("Q4_K", "Q6_K")
    assert realshape.quant_types("q8_0") == ("Q8_0", "Q8_0")
    assert realshape.quant_types("nvfp4") == ("NVFP4", "NVFP4")


# ---- the loaders added for the catalog's other llama.cpp models (fixture: tests/fixtures/catalog_shapes) ----------

def _shapes():
    from generator.catalog import load_catalog

    from support.catalogs import FIXTURES

    return load_catalog(FIXTURES / "catalog_shapes")


def _meta(spec: realshape.Spec) -> dict:
    return {key: value for key, value, _ in spec.metadata}


def _elements(spec: realshape.Spec) -> int:
    total = 0
    for t in spec.tensors:
        count = 1
        for n in t.ne:
            count *= n
        total += count
    return total


def test_qwen3moe_follows_llamacpp_qwen3moe_loader() -> None:
    """src/models/qwen3moe.cpp: per layer attn_norm, Q/K/V/O, Q/K norms, ffn_norm, router and three expert tensors
    (12), plus token_embd, output_norm, output: 3 + 48 x 12 = 579 tensors, 30.5 B parameters."""
    model = _shapes().models["qwen3-coder-30b-a3b"]
    spec = realshape.spec_for(model, "ud-q4_k_xl")
    meta = _meta(spec)
    assert spec.arch == "qwen3moe" and len(spec.tensors) == 3 + 48 * 12 == 579
    assert meta["qwen3moe.block_count"] == 48 and meta["qwen3moe.attention.head_count"] == 32
    assert meta["qwen3moe.attention.head_count_kv"] == 4 and meta["qwen3moe.attention.key_length"] == 128
    assert meta["qwen3moe.rope.dimension_count"] == 128  # the graph asserts n_rot == head_dim (2048 / 32 = 64)
    assert (meta["qwen3moe.expert_count"], meta["qwen3moe.expert_used_count"],
            meta["qwen3moe.expert_feed_forward_length"]) == (128, 8, 768)
    shapes = {t.name: t.ne for t in spec.tensors}
    assert shapes["blk.0.attn_q.weight"] == (2048, 32 * 128)  # Q wider than the hidden size
    assert shapes["blk.0.attn_k.weight"] == (2048, 4 * 128)
    assert shapes["blk.47.ffn_down_exps.weight"] == (768, 2048, 128)
    assert "blk.0.ffn_gate_inp_shexp.weight" not in shapes  # no shared expert
    assert _elements(spec) / 1e9 == pytest.approx(model.architecture.total_params_b, rel=0.01)


def test_llama_follows_mistral_as_llamacpp_converts_it() -> None:
    """src/models/llama.cpp with n_expert 0: 9 tensors a layer, 3 + 40 x 9 = 363; head_dim 128 (not 5120 / 32)."""
    model = _shapes().models["devstral-small-2507"]
    spec = realshape.spec_for(model, "ud-q5_k_xl")
    meta = _meta(spec)
    assert spec.arch == "llama" and len(spec.tensors) == 3 + 40 * 9 == 363
    assert meta["llama.attention.key_length"] == meta["llama.rope.dimension_count"] == 128
    assert meta["llama.attention.head_count_kv"] == 8 and meta["llama.feed_forward_length"] == 32768
    shapes = {t.name: t for t in spec.tensors}
    assert shapes["blk.0.attn_output.weight"].ne == (32 * 128, 5120)
    assert shapes["blk.39.ffn_down.weight"].ne == (32768, 5120)
    assert shapes["output.weight"].type == "Q6_K" and shapes["blk.1.attn_q.weight"].type == "Q5_K"
    assert not any(t.name.startswith("blk.0.attn_k_norm") for t in spec.tensors)
    assert _elements(spec) / 1e9 == pytest.approx(model.architecture.total_params_b, rel=0.02)  # 23.6 of "24B"


def test_qwen35moe_trunk_of_qwen35_35b_a3b() -> None:
    """qwen35moe without MTP: 3 + 30 Gated-DeltaNet layers x (2 norms + 9 + 8 MoE) + 10 attention layers x
    (2 norms + 6 + 8 MoE) = 733 tensors; the KV of the 10 attention layers only."""
    model = _shapes().models["qwen3.5-35b-a3b"]
    spec = realshape.spec_for(model, "ud-iq4_xs")
    meta = _meta(spec)
    assert spec.arch == "qwen35moe" and len(spec.tensors) == 3 + 30 * 19 + 10 * 16 == 733
    assert meta["qwen35moe.block_count"] == 40 and "qwen35moe.nextn_predict_layers" not in meta
    assert sum(1 for t in spec.tensors if t.name.endswith(".attn_k.weight")) == 10
    assert {t.type for t in spec.tensors if "_exps" in t.name} == {"IQ4_XS"}
    assert _elements(spec) / 1e9 == pytest.approx(model.architecture.total_params_b, rel=0.02)


def test_qwen35_dense_27b_has_the_qwen36_27b_shape() -> None:
    model = _shapes().models["qwen3.5-27b"]
    spec = realshape.spec_for(model, "q4km", mtp=True)
    assert realshape.SHAPES["qwen3.5-27b"].n_ff == realshape.SHAPES["qwen36-27b"].n_ff
    assert len(spec.tensors) == len(realshape.spec_for(market().models["qwen36-27b"], "q4km", mtp=True).tensors)
    assert _elements(spec) / 1e9 == pytest.approx(model.architecture.total_params_b, rel=0.03)


def test_more_weight_types_follow_the_quantization_name() -> None:
    assert realshape.quant_types("ud-q5_k_xl") == ("Q5_K", "Q6_K")
    assert realshape.quant_types("ud-iq4_xs") == ("IQ4_XS", "IQ4_XS")
    assert realshape.quant_types("ud-q3kxl-mtp") == ("Q3_K", "Q4_K")
    assert realshape.Tensor("x", (256, 10), "IQ4_XS").nbytes == 10 * 136  # block_iq4_xs: 256 values in 136 bytes
    assert realshape.Tensor("x", (256, 10), "Q3_K").nbytes == 10 * 110  # block_q3_K: 256 values in 110 bytes


def test_rows_not_a_multiple_of_256_take_llama_quants_fallback() -> None:
    """src/llama-quant.cpp llama_tensor_get_type: Q4_K -> Q5_0, Q6_K -> Q8_0, IQ4_XS -> IQ4_NL, else F16."""
    down = (1856, 2688, 128)  # Nemotron 3 Nano's expert down projection: 1856 = 7 x 256 + 64
    assert realshape._type_for("blk.10.ffn_down_exps.weight", down, 10, 52, "ud-q4kxl") == "Q5_0"
    assert realshape._type_for("blk.0.ffn_down_exps.weight", down, 0, 52, "ud-q4kxl") == "Q8_0"  # use_more_bits
    assert realshape._type_for("blk.10.ffn_down_exps.weight", down, 10, 52, "ud-iq4_xs") == "IQ4_NL"
    assert realshape._type_for("blk.10.ffn_up.weight", (2700, 64), 10, 52, "q4km") == "F16"  # 2700 % 32 != 0


@pytest.mark.parametrize("model_id,quant,mtp", [("gemma4-e2b", "q8_0", False), ("gemma4-26b-a4b", "ud-q4kxl", False)])
def test_tensor_sizes_are_the_files_tensors_without_building_its_vocabulary(model_id: str, quant: str,
                                                                             mtp: bool) -> None:
    """The fit's cached sizes (realshape.tensor_sizes) equal the full spec's tensors, token list left out."""
    model = market().models[model_id]
    full = realshape.spec_for(model, quant, mtp=mtp)
    assert realshape.tensor_sizes(model, quant, mtp=mtp) == {t.name: t.nbytes for t in full.tensors}
    lean = realshape.spec_for(model, quant, mtp=mtp, vocab=False)
    assert [(t.name, t.nbytes) for t in lean.tensors] == [(t.name, t.nbytes) for t in full.tensors]
    assert "tokenizer.ggml.tokens" not in {key for key, _, _ in lean.metadata}


def test_the_sizes_of_named_tensors_are_those_of_the_whole_file() -> None:
    """`names=` (what the host-memory fit asks: two embeddings) types and sizes each named tensor as the whole file
    does, for every real-shape model of the market in each of its GGUF weight files; a name the file lacks is
    absent, and nothing else is kept."""
    from generator.fit.llamacpp import HOST_TENSORS

    models = [m for m in market().models.values() if m.id in realshape.SHAPES]
    assert len(models) >= 5
    seen: set[str] = set()
    for model in models:
        for weight in (w for w in model.weights if w.format == "gguf"):
            full = {t.name: t.nbytes for t in realshape.spec_for(model, weight.quant, vocab=False).tensors}
            for names in (HOST_TENSORS, frozenset({"output.weight", "blk.0.attn_k.weight", "no.such.tensor"})):
                some = realshape.tensor_sizes(model, weight.quant, names=names)
                assert some == {name: size for name, size in full.items() if name in names}, (model.id, weight.quant)
                seen |= set(some)
    assert seen >= HOST_TENSORS and "no.such.tensor" not in seen  # Gemma 4 has per-layer embeddings, all a token_embd
