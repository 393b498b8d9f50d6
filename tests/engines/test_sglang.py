"""SGLang's KV-token budget (generator/engines/sglang.py) against public SGLang boot logs, each within 2 %.

Every case quotes the log lines it uses and where they were posted. The geometry of each model is its
config.json's (cited per case); `Budget` is SGLang v0.5.14's `_profile_available_bytes` and pool configurators.
"""

from __future__ import annotations

import pytest

from generator.engines import sglang
from generator.schema import Architecture, AttentionGroup, RecurrentGroup

GIB = 1 << 30


def _arch(layers: int, full: AttentionGroup, recurrent: RecurrentGroup | None = None) -> Architecture:
    return Architecture(arch="x", hf_model_type="x", layers=layers, hidden_size=4096, vocab_size=151936,
                        full_attention=full, recurrent=recurrent, total_params_b=1.0, active_params_b=1.0,
                        max_context=262144)


def close(got: float, want: float, tol: float = 0.02) -> bool:
    return abs(got - want) <= tol * abs(want)


def test_rest_memory_reproduces_pr_18263_qwen3_30b_a3b():
    """github.com/sgl-project/sglang/pull/18263 (Qwen/Qwen3-30B-A3B-Instruct, one MI-series GPU):
    "Load weight end. ... avail mem=230.20 GB, mem usage=56.98 GB." with mem_fraction_static 0.911 ->
    "initial available_bytes 219721119039 / 204.63 GB" (main's formula before that PR's AITER change), and
    "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1669816, K size: 76.44 GB".
    Qwen3-30B-A3B config.json: 48 layers, 4 KV heads, head_dim 128."""
    budget = sglang.Budget(pre_load_gib=230.20 + 56.98, after_weights_gib=230.20, mem_fraction_static=0.911,
                           cell=sglang.cell_bytes(_arch(48, AttentionGroup(layers=48, kv_heads=4, head_dim=128))))
    assert close(budget.rest_gib, 219721119039 / GIB)
    assert close(1669816 * budget.cell / 2 / GIB, 76.44)  # K is half the cell


def test_weights_above_the_fraction_fail_naming_the_minimum_inferencex_2128():
    """github.com/SemiAnalysisAI/InferenceX/issues/2128 (DeepSeek-V4-Pro FP8, 8 x H200, --mem-fraction-static 0.88):
    "Load weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB, mem usage=125.65 GB." -> SGLang refuses to start and
    names the minimum viable fraction 0.9113."""
    budget = sglang.Budget(pre_load_gib=12.25 + 125.65, after_weights_gib=12.25, mem_fraction_static=0.88,
                           cell=1.0)
    assert budget.rest_gib <= 0 and budget.tokens == 0
    assert close(budget.minimum_fraction, 0.9113, tol=0.001)


# Qwen3.5-397B-A17B at TP 2 (github.com/kvcache-ai/ktransformers/issues/1870, two RTX 4090):
#   "Mamba Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB"
#   "KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB"
# The model class is Qwen3_5MoeForConditionalGeneration; the geometry below is Qwen3.5-397B-A17B's as the log's own
# figures imply it (K size / #tokens = 15 layers x 1 KV head of 256 per rank: 60 layers with full attention every
# 4th; the state slots fit 45 Gated-DeltaNet layers of 16 key / 64 value heads of 128, conv kernel 4, half per rank).
# It was not re-read from huggingface.co/Qwen/Qwen3.5-397B-A17B config.json in this session.
QWEN35_397B = _arch(60, AttentionGroup(layers=15, kv_heads=2, head_dim=256),
                    RecurrentGroup(layers=45, k_heads=16, v_heads=64, head_dim=128, conv_kernel=4))


def test_hybrid_cell_counts_only_full_attention_layers_ktransformers_1870():
    cell = sglang.cell_bytes(QWEN35_397B, tp=2)
    assert close(580364 * cell / 2 / GIB, 4.15)


def test_mamba_state_per_request_ktransformers_1870():
    per_req = sglang.mamba_per_request_bytes(QWEN35_397B, tp=2)
    assert close(82 * per_req / GIB, 7.29 + 0.13)


def test_mamba_split_by_the_memory_ratio_ktransformers_1870():
    """rest x 0.9 / 1.9 goes to the state slots, the remainder to the KV pool: with the logged pool sizes, the
    budget that reproduces the state slots gives the logged token count."""
    cell = sglang.cell_bytes(QWEN35_397B, tp=2)
    per_req = sglang.mamba_per_request_bytes(QWEN35_397B, tp=2)
    rest = (4.15 + 4.15) + (7.29 + 0.13)  # the static pool the log's two caches add up to (GiB)
    # mem_fraction_static 1: rest = the free memory after the weights (the log gives the pools, not the fraction)
    budget = sglang.Budget(pre_load_gib=rest, after_weights_gib=rest, mem_fraction_static=1.0, cell=cell,
                           mamba_per_req=per_req)
    assert close(budget.rest_gib, rest)
    assert close(budget.mamba_slots, 82)
    assert close(budget.tokens, 580364)


def test_cell_reproduces_vllm_21348_qwen3_235b_fp8_tp4():
    """github.com/vllm-project/vllm/issues/21348 (Qwen3-235B-A22B-FP8, 4 x H100, sglang --tp 4
    --mem-fraction-static 0.93): "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB".
    config.json: 94 layers, 4 KV heads of 128 (one per TP rank)."""
    cell = sglang.cell_bytes(_arch(94, AttentionGroup(layers=94, kv_heads=4, head_dim=128)), tp=4)
    assert close(367404 * cell / 2 / GIB, 8.23)


def test_default_fraction_on_a_24_gib_card():
    """server_args.py:3276-3315: 512 + 2048 x 1.5 + 24 x 2 + 1/8 x 1024 = 3,760 MiB reserved."""
    assert sglang.reserved_mib() == 3760
    assert sglang.default_mem_fraction_static(24463) == round((24463 - 3760) / 24463, 3)


def test_boot_log_lines_are_read():
    text = ("[2026-02-27 17:10:27 TP0] Load weight end. elapsed=653.47 s, type=Qwen3_5MoeForConditionalGeneration, "
            "dtype=torch.bfloat16, avail mem=19.08 GB, mem usage=3.76 GB.\n"
            "[2026-02-27 17:10:28 TP0] KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB\n"
            "[2026-02-27 17:10:29 TP0] max_total_num_tokens=580364, chunked_prefill_size=2048, "
            "max_prefill_tokens=16384, max_running_requests=1, context_len=8192, available_gpu_mem=3.63 GB\n")
    log = sglang.read_boot_log(text)
    assert (log.kv_tokens, log.k_gib, log.v_gib) == (580364, 4.15, 4.15)
    assert (log.max_total_num_tokens, log.context_len) == (580364, 8192)
    assert (log.avail_after_weights_gib, log.weights_gib) == (19.08, 3.76)


@pytest.mark.parametrize("argv,shape", [
    (["python3", "-m", "sglang.launch_server", "--model-path", "x"], ("python3", "-m", "sglang.launch_server")),
    (["sglang", "serve", "--model-path", "x"], ("sglang", "serve")),
    (["vllm", "serve", "x"], None),
])
def test_launcher_shapes(argv, shape):
    assert sglang.FAMILY.launcher is not None and sglang.FAMILY.launcher.shape(argv) == shape


@pytest.mark.parametrize("image,program,script", [
    # beclab/apps sglangqwen359bawq4bitv3/templates/sglang.yaml@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049
    ("docker.io/lmsysorg/sglang:v0.5.14-cu130", "/bin/sh", "/bin/sh\n/llm-init/wrappers/sglang.sh"),
    ("example.org/any:1", "python3", "python3\n-m\nsglang.launch_server\n--model-path\nx"),
    ("example.org/any:1", "sglang", "sglang\nserve\n--model-path\nx"),
])
def test_import_recognises_an_sglang_container_through_the_engine_module(image, program, script):
    from generator.importer.programs import unsupported

    found = unsupported(image, program, script)
    assert found is not None and found.kind == "SGLang" and found.why == sglang.recognise(image, program, script)


def test_import_leaves_other_python_servers_alone():
    from generator.importer.programs import unsupported

    found = unsupported("example.org/tts:1", "python3", "python3\napp.py")
    assert found is not None and found.kind == "Python server"
