"""`catalog calibrate` for SGLang: the boot-log lines the family reads (generator/engines/sglang.py
`read_boot_line`), the rows generator/fit/calibrate.py makes of them, and public logs reproduced within 2 %.

Each public log is quoted as posted. The token count a log reports (`#tokens` of "KV Cache is allocated", the
scheduler's `max_total_num_tokens`, the same number: the QwQ-32B log prints both) is reproduced from the row's
K + V GiB and the model's bytes per token (`sglang.cell_bytes`, config.json geometry cited per case).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.cli import main
from generator.engines import sglang
from generator.fit import calibrate as cal
from generator.schema import AttentionGroup

from .test_sglang import QWEN35_397B, _arch

GIB = 1 << 30
CATALOG = Path(__file__).resolve().parents[2] / "catalog"

# github.com/didier-durand/llms-in-clouds docs/sglang.md@b001c8690e894d234cf3a2e2345d259173acf293 (Qwen/QwQ-32B,
# 4 x L4, --tensor-parallel-size 4, sglang 0.4.3.post4). QwQ-32B config.json: 64 layers, 8 KV heads of 128.
QWQ_LOG = """\
[2025-03-08 12:29:21 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=6.09 GB, mem usage=15.54 GB.
[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB
[2025-03-08 12:29:21 TP1] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB
[2025-03-08 12:29:29 TP0] max_total_num_tokens=46611, chunked_prefill_size=2048, max_prefill_tokens=16384, max_running_requests=2049, context_len=131072
"""
QWQ = _arch(64, AttentionGroup(layers=64, kv_heads=8, head_dim=128))

# github.com/vllm-project/vllm/issues/21348 (Qwen3-235B-A22B-FP8, 4 x H100, sglang --tp 4
# --mem-fraction-static 0.93). config.json: 94 layers, 4 KV heads of 128.
QWEN3_235B_LOG = "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB\n"
QWEN3_235B = _arch(94, AttentionGroup(layers=94, kv_heads=4, head_dim=128))

# github.com/kvcache-ai/ktransformers/issues/1870 (Qwen3.5-397B-A17B, SGLang at TP 2, two RTX 4090), the geometry
# tests/engines/test_sglang.py QWEN35_397B documents.
QWEN35_LOG = ("[2026-02-27 17:10:28 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, "
              "V size: 4.15 GB\n")

PUBLIC = [
    pytest.param(QWQ_LOG, QWQ, 4, 46611, id="llms-in-clouds-qwq-32b-tp4"),
    pytest.param(QWEN3_235B_LOG, QWEN3_235B, 4, 367404, id="vllm-21348-qwen3-235b-tp4"),
    pytest.param(QWEN35_LOG, QWEN35_397B, 2, 580364, id="ktransformers-1870-qwen3.5-397b-tp2"),
]


@pytest.mark.parametrize("log,arch,tp,tokens", PUBLIC)
def test_public_logs_reproduce_max_total_num_tokens(log, arch, tp, tokens):
    parsed = cal.parse(log, "log")
    assert parsed.engine == "sglang"
    rows = cal.rows_of(parsed, cal.Provenance(source="a public log", quant="bf16"))
    (kv,) = [r.row for r in rows if r.row.measure == "kv_needed"]
    assert kv.context == tokens
    assert kv.value_gib is not None
    got = kv.value_gib * GIB / sglang.cell_bytes(arch, tp=tp)
    assert abs(got - tokens) <= 0.02 * tokens, (got, tokens)


def test_the_lines_become_rows_with_their_figures():
    parsed = cal.parse(QWQ_LOG, "log")
    assert parsed.n_ctx == 131072
    rows = {r.row.measure: r for r in cal.rows_of(parsed, cal.Provenance(source="a public log", quant="bf16"))}
    assert rows["weights_loaded"].target == "model" and rows["weights_loaded"].row.value_gib == 15.54
    assert rows["kv_needed"].target == "app" and rows["kv_needed"].row.value_gib == 2.84
    assert "max_total_num_tokens=46,611" in rows["kv_needed"].row.what


def test_newer_kv_line_with_its_dtype_and_the_model_of_server_args():
    """The pool line of newer releases names its dtype first (github.com/sgl-project/sglang/pull/18263: "KV Cache is
    allocated. dtype: torch.bfloat16, #tokens: 1669816, K size: 76.44 GB", V the same for MHA)."""
    fig = sglang.read_boot_line("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1669816, K size: 76.44 GB, "
                                "V size: 76.44 GB")
    assert fig is not None and (fig.kind, fig.tokens) == ("kv_allocated", 1669816)
    assert abs(fig.value - 152.88) < 1e-9
    parsed = cal.parse("[2025-03-08 12:29:04] server_args=ServerArgs(model_path='/home/model/Qwen/QwQ-32B', "
                       "tokenizer_path='/home/model/Qwen/QwQ-32B')\n" + QWQ_LOG, "log")
    assert parsed.model == "/home/model/Qwen/QwQ-32B"


def test_a_figure_that_is_none_is_refused_at_its_line():
    with pytest.raises(cal.InputError) as info:
        cal.parse("x\nKV Cache is allocated. #tokens: " + "9" * 60 + ", K size: 1.0 GB, V size: 1.0 GB\n", "log")
    assert info.value.problems[0].line == 2


def test_cli_calibrate_reads_an_sglang_log_into_the_app(tmp_path, capsys):
    """`catalog calibrate sglanggemma4e4bone --log FILE --write` on a copy of the catalog. The log is in SGLang's
    format (the lines above), its figures written here for the app's Gemma 4 E4B (not a measured boot)."""
    catalog = tmp_path / "catalog"
    shutil.copytree(CATALOG, catalog)
    log = tmp_path / "boot.log"
    log.write_text("[2026-12-02 10:00:00] server_args=ServerArgs(model_path='google/gemma-4-E4B-it', "
                   "tokenizer_path='google/gemma-4-E4B-it')\n"
                   "[2026-12-02 10:00:30 TP0] KV Cache is allocated. #tokens: 250000, K size: 2.10 GB, "
                   "V size: 2.10 GB\n"
                   "[2026-12-02 10:00:31 TP0] max_total_num_tokens=250000, chunked_prefill_size=2048, "
                   "max_prefill_tokens=16384, max_running_requests=48, context_len=32768, "
                   "available_gpu_mem=3.10 GB\n")
    code = main(["calibrate", "sglanggemma4e4bone", "--log", str(log), "--catalog", str(catalog), "--write",
                 "--source", "a test log", "--date", "2026-12-02"])
    out = capsys.readouterr()
    assert code == 0, out.err
    text = (catalog / "apps" / "sglanggemma4e4bone.yaml").read_text()
    assert "measure: kv_needed" in text and "context: 250000" in text


def test_a_vllm_log_for_an_sglang_app_is_refused(tmp_path, capsys):
    log = tmp_path / "boot.log"
    log.write_text("Available KV cache memory: 4.5 GiB\n")
    code = main(["calibrate", "sglanggemma4e4bone", "--log", str(log), "--catalog", str(CATALOG)])
    assert code != 0
    assert "vllm log" in capsys.readouterr().err
