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
