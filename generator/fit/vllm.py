"""vLLM's memory: util x the total vLLM reads holds weights, activations, graphs and one request's KV; the rest of
the HAMi cap holds what is allocated after the KV pool was sized.

The budget: vLLM asks for `requested_memory = ceil(total_memory x gpu_memory_utilization)`, `total_memory` being
what `cudaMemGetInfo` reports when the worker starts (vllm/v1/worker/utils.py `request_memory` and
vllm/utils/mem_utils.py `MemorySnapshot.measure` at v0.20.0, as in v0.19.1 and v0.21.0), and gives the KV pool
`requested_memory - non-KV memory` (vllm/v1/worker/gpu_worker.py `determine_available_memory`). Which total a pod
sees is the device's `reported_total`: on the Olares One it is the card's 24,463 MiB whatever the HAMi cap
(docs/fit.md "Which total vLLM reads").

KV follows vLLM's own accounting (`vllm/v1/kv_cache_interface.py`): full-attention layers take
cdiv(context, block) pages; sliding-window layers min(window - 1 + max_num_batched_tokens, context) tokens;
Mamba/GDN state pages are per request: (2 if mamba_cache_mode == align else 1) + num_speculative_tokens
copies. On hybrid models the block size is the smallest multiple of 16 whose attention page holds one
state page, and state pages are padded to the attention page (this gives the 2080-token block the
maintainer's Fast 2.0.2 note records for Qwen3.6 27B + turboquant_k8v4, run without MTP); the GDN conv state
keeps num_speculative_tokens more rows, and the layers of each type are padded to whole groups
(`hybrid_padding`): both shown by public boot logs (tests/fit/test_vllm_public_logs.py).
"""

from __future__ import annotations

from statistics import mean

from generator.catalog import Resolved
from generator.engines import Sized
from generator.fit.ledger import KV_COMPONENTS, Ledger, cap_mib
from generator.fit.memory import (MIB, TURBOQUANT_BITS, Geometry, align_up, cdiv, group_bytes_per_token,
                                  recurrent_kind, recurrent_layer_bytes, vllm_group_bytes_per_token, vllm_slot_bytes)
from generator.engines import VllmSettings as Settings
from generator.schema import Calibration, Mamba2Group

DEFAULT_BLOCK = 16
HYBRID_BLOCK_ALIGN = 16
NON_TORCH_MIB = 512  # CUDA context, cuBLAS/NCCL workspaces (assumption)
ACT_TENSORS = 20  # fp16 hidden-size tensors alive per batched token at the profile peak (assumption)
GRAPH_FRACTION = 0.12  # graphs at the full 512-size capture ladder cost ~12 % of the active weights (docs/fit.md)
GRAPH_FLOOR_MIB = 64
SSM_BYTES, CONV_BYTES = 4, 2  # GDN state in fp32, conv state in the model dtype (docs/domain.md)
P5B_PADDING = 0.32  # Genesis P5 v2 docstring: pad-smaller-to-max costs (max - small) / small = 32 % on state pages
P38_BYTES = 2  # P38's k_full workspace is fp16


def reported_total(r: Resolved, cap: float) -> tuple[float, str]:
    """The total memory vLLM reads in the pod (MiB) and why: the card's, or the HAMi cap (device.reported_total)."""
    device = r.device
    if device.reported_total == "device":
        return float(device.memory_mib), f"{device.name}'s total {device.memory_mib:,} MiB (reported whatever the cap)"
    return float(cap), "the HAMi cap (reported as the total)"


def build(r: Sized, s: Settings, ledger: Ledger) -> None:
    cap = cap_mib(r)
    util = s.util.value
    kv_bytes = s.kv_bytes.value if s.kv_bytes else 0
    total, why = reported_total(r, cap)
    budget = util * total
    if kv_bytes:
        _pinned_kv_pools(ledger, cap, kv_bytes)
    else:
        ledger.pool("budget", "vLLM budget (util x total)", budget,
                    f"{util} ({s.util.where() or 'app.gpu_memory_utilization'}) x {why}")
    ledger.pool("outside", "outside vLLM's budget", cap - (0 if kv_bytes else budget),
                "the HAMi cap minus what vLLM reserved; holds what is allocated after the KV pool is sized")
    fixed = "cap" if kv_bytes else "budget"
    non_kv = _non_kv(r, s, ledger, fixed)
    need = _kv_need(r, s, ledger, "kv" if kv_bytes else "budget", s.context.value)
    _calibrate(r, s, ledger, fixed, non_kv, need)
    _kv_fact(s, ledger, fixed)
    _outside(r, s, ledger)


def _kv_fact(s: Settings, ledger: Ledger, pool: str) -> None:
    """Say in one line whether one request's KV fits what vLLM leaves for it."""
    if pool != "budget":
        return
    capacity = next(p.capacity_mib for p in ledger.pools if p.key == "budget")
    need = sum(p.mib for p in ledger.parts if p.pool == pool and p.component.startswith(KV_COMPONENTS))
    available = capacity - sum(p.mib for p in ledger.parts if p.pool == pool) + need
    verb = "fits" if need <= available else "does NOT fit"
    ledger.facts.append(f"KV for one {s.context.value:,}-token request: {need:,.0f} MiB ({need / 1024:.2f} GiB) "
                        f"needed, {available:,.0f} MiB ({available / 1024:.2f} GiB) available = util x total - weights "
                        f"- activations - graphs - overheads: it {verb}")


def _pinned_kv_pools(ledger: Ledger, cap: int, kv_bytes: int) -> None:
    ledger.pool("cap", "HAMi cap", cap, "--kv-cache-memory-bytes replaces gpu_memory_utilization")
    ledger.pool("kv", "KV pool (--kv-cache-memory-bytes)", kv_bytes / MIB, "fixed by --kv-cache-memory-bytes")
    ledger.add("cap", "KV pool", kv_bytes / MIB, "--kv-cache-memory-bytes")


# ---- weights, activations, graphs --------------------------------------------------------------------

def weights_part(r: Resolved, quant: str) -> tuple[float, str]:
    rows = [c for c in r.model.calibration if c.measure == "weights_loaded" and c.quant == quant]
    if rows:
        return mean(c.mib for c in rows), f"measured: {rows[0].what} ({rows[0].source})"
    weight = r.model.weight(quant)
    assert weight is not None
    if weight.header is not None:  # `catalog new` read the file's header: its tensors' exact bytes
        return (weight.header.tensor_bytes / MIB,
                f"{weight.repo} {weight.file}: {weight.header.tensor_bytes:,} bytes of tensors (its GGUF header)")
    return weight.size_gib * 1024, f"{weight.repo} size_gib {weight.size_gib} (catalog)"


def _non_kv(r: Resolved, s: Settings, ledger: Ledger, pool: str) -> float:
    start = len(ledger.parts)
    mib, note = weights_part(r, r.app.quantization)
    ledger.add(pool, "weights", mib, note)
    _drafter_weights(r, s, ledger, pool)
    arch = r.model.architecture
    batched, seqs = s.batched.value, s.seqs.value
    act = (batched * arch.hidden_size * 2 * ACT_TENSORS + seqs * arch.vocab_size * 4 * 2) / MIB
    ledger.add(pool, "activations (profile peak)", act,
               f"{batched} batched tokens x hidden {arch.hidden_size} x {ACT_TENSORS} fp16 tensors + {seqs} seqs "
               "x vocab logits")
    ledger.assume(f"vLLM activation peak ~ {ACT_TENSORS} fp16 hidden-size tensors per batched token + fp32 sampler "
                  "logits for max_num_seqs (not measured; calibration rows replace it)")
    if s.graphs_profiled.value:
        ledger.add(pool, "CUDA graphs (profiled)", graphs_mib(s, mib, _active(r)),
                   f"{_graph_note(s, r)} ({s.graphs_profiled.where()})")
    ledger.add(pool, "non-torch (CUDA context, cuBLAS)", NON_TORCH_MIB, "assumption")
    if _turboquant(s) and s.genesis_on("P22"):
        p22 = batched * arch.full_attention.kv_heads * arch.full_attention.head_dim * 2 * 2 / MIB
        ledger.add(pool, "Genesis P22 dequant scratch", p22,
                   "pre-allocated at init: batched tokens x KV heads x head_dim x K,V fp16")
    return sum(p.mib for p in ledger.parts[start:])


def _drafter_weights(r: Resolved, s: Settings, ledger: Ledger, pool: str) -> None:
    spec = r.app.speculative
    if spec is None or s.spec_method is None:
        return
    if spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None
        ledger.add(pool, f"drafter weights ({drafter.id})", drafter.weights[0].size_gib * 1024, drafter.weights[0].repo)
    elif s.spec_method == "mtp":
        ledger.assume("the model's own MTP layer is part of its checkpoint (counted in the weights)")


def _active(r: Resolved) -> float:
    """The share of the weights a token runs through (MoE experts, Gemma's per-layer embedding tables do not add to
    the activations a CUDA graph keeps)."""
    arch = r.model.architecture
    return min(1.0, arch.active_params_b / arch.total_params_b)


def graphs_mib(s: Settings, weights_mib: float, active: float = 1.0) -> float:
    if s.eager.value:
        return 0.0
    seqs, tokens = s.seqs.value, (s.spec_tokens or 0)
    largest = min(512, 2 * seqs * (1 + tokens))
    return max(GRAPH_FLOOR_MIB, GRAPH_FRACTION * weights_mib * active * largest / 512)


def _graph_note(s: Settings, r: Resolved) -> str:
    if s.eager.value:
        return "--enforce-eager / cudagraph_mode NONE: no graphs"
    share = _active(r)
    active = f" x active share {share:.2f}" if share < 1 else ""
    return (f"~{GRAPH_FRACTION:.0%} of weights{active} at the full 512-size capture ladder, scaled to 2 x "
            "max_num_seqs x (1 + K)")


# ---- KV ---------------------------------------------------------------------------------------------

def _turboquant(s: Settings) -> bool:
    return str(s.kv_k.value) in TURBOQUANT_BITS


def block_layout(r: Resolved, dtype: str, spec_tokens: int = 0) -> tuple[int, float, float]:
    """(block tokens, attention bytes per token per layer, state page bytes per layer).

    A Gated-DeltaNet conv state keeps kernel - 1 + num_speculative_tokens rows (vllm-project/vllm
    vllm/model_executor/layers/mamba/mamba_utils.py `MambaStateShapeCalculator.gated_delta_net_state_shape`), so
    speculative tokens enlarge the state page and the hybrid block: Qwen3.6 27B at TP=2 with 3 MTP tokens has a
    1,600-token block, not 1,568 (club-3090#642, tests/fit/test_vllm_public_logs.py)."""
    geo = Geometry.of(r.model.architecture)
    per_token = vllm_group_bytes_per_token(geo.full, dtype)
    if geo.recurrent is None:
        return DEFAULT_BLOCK, per_token, 0.0
    state = recurrent_layer_bytes(geo.recurrent, ssm_bytes=SSM_BYTES, conv_bytes=CONV_BYTES)
    rec = geo.recurrent
    if spec_tokens and not isinstance(rec, Mamba2Group):
        state += (2 * rec.k_heads + rec.v_heads) * rec.head_dim * spec_tokens * CONV_BYTES
    block = align_up(cdiv(int(state), int(per_token)), HYBRID_BLOCK_ALIGN)
    return block, per_token, block * per_token


def kv_need_parts(r: Resolved, s: Settings, context: int) -> list[tuple[str, float, str]]:
    """(component, bytes, note) of the KV one request at `context` tokens needs."""
    geo = Geometry.of(r.model.architecture)
    dtype = str(s.kv_k.value)
    block, per_token, page = block_layout(r, dtype, s.spec_tokens or 0)
    blocks = cdiv(context, block)
    slot = vllm_slot_bytes(dtype, geo.full.head_dim)
    heads = (f"one MLA latent of {per_token:.0f} B ({dtype})" if geo.full.mla
             else f"{geo.full.kv_heads} KV heads x {slot:.0f} B ({dtype})")
    out = [("KV full attention", blocks * block * per_token * geo.full.layers,
            f"{geo.full.layers} layers x {heads} x {blocks} blocks of {block}")]
    if s.spec_method == "mtp" and not (r.app.speculative and r.app.speculative.drafter) and geo.mtp_layers:
        out.append(("KV MTP layer", blocks * block * per_token * geo.mtp_layers,
                    f"{geo.mtp_layers} MTP attention layer(s)"))
    if geo.sliding is not None:
        out.append(_sliding(s, geo, dtype, context))
    if geo.recurrent is not None:
        copies = (2 if s.mamba_mode.value == "align" else 1) + (s.spec_tokens or 0)
        out.append(("recurrent state", geo.recurrent.layers * page * copies,
                    f"{geo.recurrent.layers} {recurrent_kind(geo.recurrent)} layers x {page / MIB:.2f} MiB page "
                    "(fp32 state + conv, padded) "
                    f"x {copies} copies ({s.mamba_mode.value} mode + {s.spec_tokens or 0} speculative)"))
    if geo.recurrent is not None:
        attn = geo.full.layers + (geo.mtp_layers if any(c == "KV MTP layer" for c, _, _ in out) else 0)
        group, attn_pad, rec_pad = hybrid_padding(attn, geo.recurrent.layers)
        if attn_pad or rec_pad:
            out.append(("KV padding layers", attn_pad * blocks * page + rec_pad * page * copies,
                        f"{attn_pad + rec_pad} padding layers: {attn} attention and {geo.recurrent.layers} "
                        f"{recurrent_kind(geo.recurrent)} layers in groups of {group} (vLLM 'Add N padding layers')"))
    if geo.kv_shared_layers:
        out.append(("KV shared layers", 0.0, f"{geo.kv_shared_layers} layers reuse earlier KV"))
    return out


def hybrid_padding(attn_layers: int, rec_layers: int) -> tuple[int, int, int]:
    """(group size, attention padding layers, recurrent padding layers) of vLLM's hybrid grouping: the group size
    is the smaller layer count, or the larger when it is under 1.5x the smaller; each type is padded to whole groups
    (vllm-project/vllm@001cabc1be16a59a70d720ed61a13b678c060a18 vllm/v1/core/kv_cache_utils.py
    `_get_kv_cache_groups_uniform_page_size`; Qwen3.6 27B + MTP: 17 and 48 -> "Add 3 padding layers",
    club-3090#617)."""
    low, high = min(attn_layers, rec_layers), max(attn_layers, rec_layers)
    group = high if high < low * 1.5 else low
    return group, cdiv(attn_layers, group) * group - attn_layers, cdiv(rec_layers, group) * group - rec_layers


def _sliding(s: Settings, geo: Geometry, dtype: str, context: int) -> tuple[str, float, str]:
    sw = geo.sliding
    assert sw is not None and sw.window is not None
    tokens = min(sw.window - 1 + s.batched.value, context)
    per_token = group_bytes_per_token(sw, vllm_slot_bytes(dtype, sw.head_dim))
    bytes_ = (cdiv(tokens, DEFAULT_BLOCK) + 1) * DEFAULT_BLOCK * per_token
    return ("KV sliding window", bytes_, f"{sw.layers} layers, window {sw.window} + {s.batched.value} batched tokens")


def kv_need_bytes(r: Resolved, s: Settings, context: int) -> float:
    return sum(b for _, b, _ in kv_need_parts(r, s, context))


def _kv_need(r: Resolved, s: Settings, ledger: Ledger, pool: str, context: int) -> float:
    for component, bytes_, note in kv_need_parts(r, s, context):
        ledger.add(pool, component, bytes_ / MIB, note)
    if r.app.speculative and r.app.speculative.drafter:
        ledger.add(pool, "drafter KV", 0.0, "Gemma 4 assistant shares the target's KV (docs/domain.md)")
    return kv_need_bytes(r, s, context) / MIB


# ---- calibration ---------------------------------------------------------------------------------------

def _rows(r: Resolved, measure: str) -> list[Calibration]:
    return [c for c in r.app.calibration if c.measure == measure and c.image in (None, r.stack.image)]


def _need_line(r: Resolved, s: Settings, needed: list[Calibration]) -> tuple[float, float]:
    """measured need ~ factor x estimate + offset (MiB): least squares over rows at two or more contexts (vLLM's
    max-seq-len error gives two: the need at max_model_len and the available memory at its estimated maximum
    length); one context: the mean ratio, no offset."""
    points = [(kv_need_bytes(r, s, c.context or 0) / MIB, c.mib) for c in needed]
    xs = {round(x, 3) for x, _ in points}
    if len(xs) < 2:
        return mean(y / x for x, y in points), 0.0
    mx, my = mean(x for x, _ in points), mean(y for _, y in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return slope, my - slope * mx


def _calibrate(r: Resolved, s: Settings, ledger: Ledger, pool: str, non_kv: float, need: float) -> None:
    needed = _rows(r, "kv_needed")
    if needed:
        factor, offset = _need_line(r, s, needed)
        shown = ", ".join(f"{c.mib / 1024:.2f} GiB @ {c.context:,}" for c in needed)
        fitted = f"x{factor:.3f}" + (f" {offset:+,.0f} MiB" if offset else "")
        ledger.add(pool, "calibration: KV need", (factor - 1) * need + offset,
                   f"{fitted}: measured {shown} ({needed[0].source})")
        ledger.calibrated.append(f"KV need {fitted} from {len(needed)} measured row(s)")
    available = _rows(r, "kv_available")
    if available and pool == "budget":
        measured = mean((c.gpu_memory_utilization or 0) * reported_total(r, c.cap_mib or 0)[0] - c.mib
                        for c in available)
        row = available[0]
        shown = ", ".join(f"{c.value_gib or c.mib} {'GiB' if c.value_gib else 'MiB'} at {c.gpu_memory_utilization} "
                          f"under {c.cap_mib}m" for c in available)
        total, why = reported_total(r, row.cap_mib or 0)
        ledger.add(pool, "calibration: measured non-KV", measured - non_kv,
                   f"KV available {shown}; util x {total:,.0f} MiB ({why}) - available => non-KV {measured:,.0f} "
                   f"MiB ({row.source})")
        ledger.calibrated.append(f"non-KV memory {measured:,.0f} MiB from {len(available)} measured row(s)")


# ---- after the KV pool ---------------------------------------------------------------------------------

def _outside(r: Resolved, s: Settings, ledger: Ledger) -> None:
    if not s.graphs_profiled.value:
        weights = next(p.mib for p in ledger.parts if p.component == "weights")
        ledger.add("outside", "CUDA graphs (not profiled)", graphs_mib(s, weights, _active(r)), _graph_note(s, r)
                   + f"; captured after the KV pool is sized ({s.graphs_profiled.where()}, vllm#40937)")
    arch = r.model.architecture
    if _turboquant(s) and s.genesis_on("P38"):
        p38 = arch.max_context * arch.full_attention.kv_heads * arch.full_attention.head_dim * P38_BYTES / MIB
        ledger.add("outside", "Genesis P38 continuation-prefill workspace", p38,
                   f"lazy k_full buffer: max positions {arch.max_context:,} x {arch.full_attention.kv_heads} KV heads "
                   f"x head_dim {arch.full_attention.head_dim} x fp16, outside the util budget "
                   "(Genesis TROUBLESHOOTING Bug Class 14)")
    if s.genesis_on("P5B") and arch.recurrent is not None:
        state = next((p.mib for p in ledger.parts if p.component == "recurrent state"), 0.0)
        ledger.add("outside", "Genesis P5B padded pages", P5B_PADDING * state,
                   f"{P5B_PADDING:.0%} padding of the state pages, pre-allocated after the KV pool (Fast 2.5.5 note; "
                   "Genesis P5 v2 docstring)")


__all__ = ["block_layout", "build", "graphs_mib", "hybrid_padding", "kv_need_bytes", "kv_need_parts", "reported_total",
           "weights_part"]
