"""The vLLM fit against public boot logs: each log's `Available KV cache memory`, `GPU KV cache size` and
`Maximum concurrency` lines, with the GPU, model and flags the same post gives, are the test half (issue 25).

What the arithmetic relies on (vllm-project/vllm@001cabc1be16a59a70d720ed61a13b678c060a18
`vllm/v1/core/kv_cache_utils.py`, the functions named; the lines quoted come from v0.24.0 images, which log them
from kv_cache_utils.py:2146-2147):
- `get_num_blocks`: num_blocks = available // page_size // group_size, and one request needs
  `get_max_concurrency_for_kv_cache_config`'s cdiv(group_size x sum of every group's max_memory_usage_bytes,
  page_size x group_size) blocks; concurrency = num_blocks / that. So concurrency ~ available / (the KV one
  max_model_len request needs), which is what `generator.fit.vllm.kv_need_bytes` computes.
- "GPU KV cache size" = int(concurrency x max_model_len) in these v0.24.0 logs (the last test checks that every
  log's two lines agree so; the commit above still printed num_blocks // groups x block): on hybrid models it is
  not a per-token capacity (the GDN state pages are in the per-request need).
- GDN state per layer: `MambaStateShapeCalculator.gated_delta_net_state_shape`
  (vllm/model_executor/layers/mamba/mamba_utils.py) gives the conv state kernel - 1 + num_spec rows, so the
  27B's TP=2 MTP-3 block is 1,600 tokens, not 1,568 (club-3090#642: 426 blocks / 179 a request = 623,873 /
  262,144); the fit's `block_layout` takes the speculative tokens since these logs showed it.
- `_get_kv_cache_groups_uniform_page_size`: hybrid layers are grouped by the smallest layer count (16 full
  attention + 1 MTP = 17 for Qwen3.6 27B with MTP, 48 GDN layers -> 3 groups of 17 and "Add 3 padding layers",
  which club-3090#617 logs for that model); the fit counts them (generator/fit/vllm.py `hybrid_padding`).
- Tensor parallel: vLLM sizes the pool per worker ("Worker_TP0 ... Available KV cache memory"), each worker
  holding kv_heads / tp attention heads and v_heads / tp GDN heads; the per-GPU geometry below divides them.

Prefix caching on a hybrid model sets the Mamba "align" mode (2 state copies a request) plus one per speculative
token (docs/domain.md; generator/fit/vllm.py module docstring).
The logs give neither the utilization nor the non-KV memory (club-3090 bench posts quote the KV lines only), so
these cases test the KV side; the budget side has no public test point yet (bench/fit-accuracy.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from generator.catalog import Resolved, load_catalog
from generator.engines.settings import Value, VllmSettings
from generator.fit.memory import GIB
from generator.fit.vllm import block_layout, kv_need_bytes

from support.catalogs import MARKET_CATALOG

TOLERANCE = 0.02


@dataclass(frozen=True)
class BootLog:
    url: str
    gpu: str
    model: str  # catalog model id (the fixture catalog's copy of catalog/models)
    max_model_len: int
    kv_cache_dtype: str
    prefix_caching: bool
    spec_tokens: int | None  # speculative_config {'method': 'mtp', 'num_speculative_tokens': N}
    max_num_seqs: int
    max_num_batched_tokens: int
    tp: int
    available_gib: float  # "Available KV cache memory: X GiB" (per worker)
    kv_tokens: int  # "GPU KV cache size: N tokens"
    concurrency: float  # "Maximum concurrency for <max_model_len> tokens per request: Cx"


LOGS = [
    BootLog("https://github.com/noonghunna/club-3090/issues/652", "RTX 5090", "qwen36-35b-a3b", 131072, "fp8",
            True, None, 1, 8192, 1, 6.01, 569_878, 4.35),
    BootLog("https://github.com/noonghunna/club-3090/issues/612", "RTX 5090", "qwen36-35b-a3b", 131072, "fp8",
            True, None, 1, 8192, 1, 5.98, 567_978, 4.33),
    BootLog("https://github.com/noonghunna/club-3090/issues/642", "2x RTX 3090 (TP=2)", "qwen36-27b", 262144,
            "fp8_e5m2", True, 3, 2, 8192, 2, 11.05, 623_873, 2.38),
]

# The KV lines are from the thread's first post (boot of 05-07); the flags quoted in the thread (turn 13, a boot
# of 05-09: MTP with 3 speculative tokens, TP=2, fp8_e5m2, 262,144) are that later boot's. With them the fit says
# 2.13x, the log 2.36x; the first boot's numbers match vLLM's block arithmetic exactly *without* MTP (block 1,568
# tokens, 16-layer groups, 58 blocks a request: 137/58 = 2.3621 = 619,202 / 262,144), so the flags that produced
# them are not in the post. Kept as an expected failure rather than fitted to a guess.
MISMATCHED = [
    BootLog("https://github.com/noonghunna/club-3090/issues/104", "2x RTX 3090 (TP=2)", "qwen36-27b", 262144,
            "fp8_e5m2", True, 3, 2, 8192, 2, 9.84, 619_202, 2.36),
]


@pytest.fixture(scope="module")
def cat():
    return load_catalog(MARKET_CATALOG)


def per_gpu(cat, log: BootLog) -> Resolved:
    """A resolved vLLM app carrying the log's model, with the heads one tensor-parallel worker holds."""
    model = cat.models[log.model]
    arch = model.architecture
    if log.tp > 1:
        update: dict[str, object] = {"full_attention": arch.full_attention.model_copy(
            update={"kv_heads": max(1, arch.full_attention.kv_heads // log.tp)})}
        if arch.recurrent is not None:
            update["recurrent"] = arch.recurrent.model_copy(
                update={"k_heads": arch.recurrent.k_heads // log.tp, "v_heads": arch.recurrent.v_heads // log.tp})
        model = model.model_copy(update={"architecture": arch.model_copy(update=update)})
    base = cat.apps["vllmqwen36dense27bone"]
    return replace(base, model=model, app=base.app.model_copy(update={"speculative": None}))


def settings(log: BootLog) -> VllmSettings:
    def v(x):
        return Value(x, None, f"boot log {log.url}")
    return VllmSettings(
        context=v(log.max_model_len), kv_k=v(log.kv_cache_dtype), kv_v=v(log.kv_cache_dtype),
        spec_method="mtp" if log.spec_tokens else None, spec_tokens=log.spec_tokens,
        util=v(0.9), batched=v(log.max_num_batched_tokens), seqs=v(log.max_num_seqs),
        prefix_caching=v(log.prefix_caching), mamba_mode=v("align" if log.prefix_caching else "none"),
        eager=v(False), graphs_profiled=v(False))


def predicted(cat, log: BootLog) -> tuple[float, float]:
    """(concurrency, GPU KV cache size in tokens) the fit predicts from the logged available memory."""
    need = kv_need_bytes(per_gpu(cat, log), settings(log), log.max_model_len)
    concurrency = log.available_gib * GIB / need
    return concurrency, concurrency * log.max_model_len


def error(value: float, logged: float) -> float:
    return value / logged - 1


@pytest.mark.parametrize("log", LOGS, ids=[log.url.rsplit("/", 3)[1] + "#" + log.url.rsplit("/", 1)[1]
                                           for log in LOGS])
def test_kv_pool_matches_the_public_boot_log(cat, log):
    concurrency, tokens = predicted(cat, log)
    assert abs(error(tokens, log.kv_tokens)) <= TOLERANCE, (tokens, log.kv_tokens)
    assert abs(error(concurrency, log.concurrency)) <= TOLERANCE, (concurrency, log.concurrency)


@pytest.mark.parametrize("log", MISMATCHED, ids=["club-3090#104"])
@pytest.mark.xfail(strict=True, reason="the post's flags are a later boot's; the first boot's numbers fit no MTP")
def test_kv_pool_of_a_log_whose_flags_are_another_boots(cat, log):
    concurrency, tokens = predicted(cat, log)
    assert abs(error(tokens, log.kv_tokens)) <= TOLERANCE, (tokens, log.kv_tokens)


def test_the_first_boot_of_club_3090_104_fits_without_mtp(cat):
    """Why #104 is an expected failure: the same figures without the speculative layer are within 0.1 %."""
    log = replace(MISMATCHED[0], spec_tokens=None)
    _, tokens = predicted(cat, log)
    assert abs(error(tokens, log.kv_tokens)) <= 0.002


def test_the_logged_tokens_are_concurrency_times_max_model_len():
    """vLLM >= 0.24 prints int(concurrency x max_model_len): the two lines of every log agree to their rounding."""
    for log in LOGS + MISMATCHED:
        assert abs(log.kv_tokens / log.max_model_len - log.concurrency) < 0.005


def test_hybrid_block_of_club_3090_642_counts_the_speculative_conv_rows(cat):
    """vLLM's block for the 27B at TP=2 with 3 MTP tokens is 1,600 tokens: only it gives the logged 2.37989x
    (426 blocks of 17 layers in 11.05 GiB / (cdiv(262,144, 1,600) + 3 GDN groups x 5 copies) = 426 / 179; the
    boots of club-3090#91 (v0.20.1), #294 and #295, same flags, give 423, 425 and 424 blocks over the same 179).
    The conv state keeps kernel - 1 + num_spec rows; without the 3 speculative rows the block is 1,568."""
    log = LOGS[2]
    r = per_gpu(cat, log)
    assert block_layout(r, log.kv_cache_dtype, log.spec_tokens or 0)[0] == 1600
    assert block_layout(r, log.kv_cache_dtype)[0] == 1568  # the first boot of #104: no speculative tokens


def test_vllm_block_arithmetic_reproduces_club_3090_642_exactly(cat):
    """With the fit's block and page, vLLM's own floors (kv_cache_utils.py `get_num_blocks`, cdiv per group in
    `get_max_concurrency_for_kv_cache_config`) give the logged tokens to the token: 17-layer groups (16 + MTP),
    1 attention group and 3 GDN groups (48 + 3 padding layers), 2 + 3 state copies."""
    log = LOGS[2]
    block, _, page = block_layout(per_gpu(cat, log), log.kv_cache_dtype, 3)
    group_size, gdn_groups, copies = 17, 3, 2 + 3
    for available in (11.045, 11.05, 11.0549):  # the log rounds to 2 decimals
        blocks = int(available * GIB) // int(page) // group_size
        per_request = -(-log.max_model_len // block) + gdn_groups * copies
        if int(blocks / per_request * log.max_model_len) == log.kv_tokens:
            return
    pytest.fail("no available memory within the log's rounding reproduces 623,873 tokens")


def test_the_same_two_rules_close_the_fast_apps_measured_gaps():
    """The maintainer's Fast app (Qwen3.6 27B, turboquant_k8v4, MTP 3, one GPU; catalog/apps calibration rows):
    with the conv rows and the padding layers the uncalibrated need is 3.17 GiB at 96,000 and 3.94 GiB at 128,000
    (measured 3.17, 3.94; before: 3.12, 3.89) and vLLM's "estimate 88704" is met to the token (before: 89,440):
    88,704 is 42 blocks of 2,112 tokens (42.65 of the 2,080 the fit used before)."""
    from generator.engines import engine_for
    from generator.engines.settings import settings_for

    r = load_catalog(MARKET_CATALOG).apps["vllmqwen36turbo27bone"]
    s = settings_for(r, engine_for(r))
    assert block_layout(r, str(s.kv_k.value), s.spec_tokens or 0)[0] == 2112
    for context, measured in ((96000, 3.17), (128000, 3.94)):
        assert abs(kv_need_bytes(r, s, context) / GIB / measured - 1) <= 0.005
    low, high = 0, 262144
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if kv_need_bytes(r, s, mid) <= 2.97 * GIB else (low, mid - 1)
    assert low == 88704


@pytest.mark.parametrize("attn, rec, expected", [
    (17, 48, (17, 0, 3)),  # Qwen3.6 27B + MTP: "Add 3 padding layers" (club-3090#617)
    (16, 48, (16, 0, 0)),  # the same without MTP
    (11, 30, (11, 0, 3)),  # Qwen3.6 35B-A3B + MTP
    (13, 12, (13, 0, 1)),  # kv_cache_utils.py's own example: 12 sw + 13 full -> (13 sw, 13 full)
])
def test_hybrid_padding_follows_vllms_grouping(attn, rec, expected):
    from generator.fit.vllm import hybrid_padding

    assert hybrid_padding(attn, rec) == expected


# Boots that print the KV lines but not the available memory: their concurrency is still num_blocks / (blocks one
# request needs), two integers, so the fit's per-request need in blocks is tested without the available memory.
# All three: Qwen3.6-27B AutoRound int4, 2x RTX 3090 TP=2, max_model_len 262144, fp8_e5m2, prefix caching, MTP 3,
# max_num_seqs 2, max_num_batched_tokens 8192 (the post's non-default args).
BLOCK_ONLY = [
    ("https://github.com/noonghunna/club-3090/issues/91", "v0.20.1", 619_479),
    ("https://github.com/noonghunna/club-3090/issues/294", "v0.2x (kv_cache_utils.py:1733)", 622_408),
    ("https://github.com/noonghunna/club-3090/issues/295", "v0.2x (kv_cache_utils.py:1733)", 620_944),
]


@pytest.mark.parametrize("url, version, kv_tokens", BLOCK_ONLY,
                         ids=["club-3090#" + u.rsplit("/", 1)[1] for u, _, _ in BLOCK_ONLY])
def test_per_request_need_in_blocks_matches_a_log_without_its_available_memory(cat, url, version, kv_tokens):
    log = replace(LOGS[2], url=url, available_gib=0.0, kv_tokens=kv_tokens, concurrency=kv_tokens / 262144)
    r, s = per_gpu(cat, log), settings(log)
    _, _, page = block_layout(r, log.kv_cache_dtype, 3)
    group_size = 17  # 16 attention + 1 MTP layer; 48 GDN layers padded to 51 (hybrid_padding)
    per_request = kv_need_bytes(r, s, log.max_model_len) / (page * group_size)
    assert per_request == 179
    num_blocks = round(kv_tokens / log.max_model_len * per_request)
    assert int(num_blocks / per_request * log.max_model_len) == kv_tokens  # an integer pool: the 179 is vLLM's
