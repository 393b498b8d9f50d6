"""llama.cpp (and the atomic, buun, Lucebox forks): everything sits in one pool, the HAMi cap.

KV follows llama.cpp's caches: full-attention layers hold the whole context (padded to 256 cells);
sliding-window layers hold min(context, window x slots + ubatch) cells unless `--swa-full`; layers that reuse
another layer's KV add nothing; recurrent (GDN) layers keep fp32 r/s states per sequence.
"""

from __future__ import annotations

from generator.catalog import Resolved
from generator.fit.ledger import Ledger
from generator.fit.vllm import weights_part
from generator.fit.memory import (GGML_BYTES, MIB, Geometry, align_up, ggml_slot_bytes, group_bytes_per_token,
                                  recurrent_state_bytes)
from generator.engines.settings import GgufSettings as Settings, LlamaCppSettings

CELL_PAD = 256  # llama.cpp pads KV cells to 256
CUDA_CONTEXT_MIB = 400  # CUDA context + cuBLAS workspaces (assumption)
ACT_F32_TENSORS = 8  # hidden-size f32 activations per ubatch token in the compute buffer (assumption)


def build(r: Resolved, s: Settings, ledger: Ledger) -> None:
    cap = r.app.gpu_memory_mib
    assert cap is not None, "size the app first (generator/fit/sizing.py: sized)"
    ledger.pool("cap", "HAMi cap", cap, "app.gpu_memory_mib (CUDA_DEVICE_MEMORY_LIMIT_0)")
    _weights(r, s, ledger)
    for component, bytes_, note in kv_parts(r, s):
        ledger.add("cap", component, bytes_ / MIB, note)
    _compute(r, s, ledger)
    ledger.add("cap", "CUDA context", CUDA_CONTEXT_MIB, "assumption")
    for kind in ("k", "v"):
        dtype = str((s.kv_k if kind == "k" else s.kv_v).value)
        if dtype not in GGML_BYTES:
            ledger.assume(f"KV type {dtype!r} has no known size: counted as f16")


def _weights(r: Resolved, s: Settings, ledger: Ledger) -> None:

    mib, note = weights_part(r, r.app.quantization)
    ledger.add("cap", "weights", mib, note)
    if s.vision and r.model.mmproj is not None:
        ledger.add("cap", "vision projector (mmproj)", r.model.mmproj.size_gib * 1024, r.model.mmproj.repo)
    spec = r.app.speculative
    if spec and spec.drafter:
        drafter = r.model.drafter(spec.drafter)
        assert drafter is not None
        weights = drafter.weights[0]
        ledger.add("cap", f"drafter weights ({drafter.id})", weights.size_gib * 1024, weights.repo)
        if drafter.kind == "mtp-assistant":
            ledger.add("cap", "drafter KV", 0.0,
                       "the assistant is loaded into the target context: no second KV (stacks.md §5.1)")
        else:
            ledger.add("cap", "drafter KV", 0.0, f"{drafter.kind} drafter geometry is not in the catalog: not modelled")
            ledger.assume(f"the {drafter.kind} drafter's own KV is not modelled (no geometry in catalog/models)")


def kv_parts(r: Resolved, s: Settings) -> list[tuple[str, float, str]]:
    geo = Geometry.of(r.model.architecture)
    k, v = str(s.kv_k.value), str(s.kv_v.value)
    ctx = s.context.value or r.model.architecture.max_context
    cells = align_up(ctx, CELL_PAD)
    full = group_bytes_per_token(geo.full, ggml_slot_bytes(k, v, geo.full.head_dim))
    out = [("KV full attention", full * cells, f"{geo.full.layers} layers x {geo.full.kv_heads} KV heads x head_dim "
                                                f"{geo.full.head_dim} x K {k} + V {v} x {cells:,} cells")]
    if s.spec_method == "mtp" and not (r.app.speculative and r.app.speculative.drafter) and geo.mtp_layers:
        per_layer = geo.full.kv_heads * ggml_slot_bytes(k, v, geo.full.head_dim)
        out.append(("KV MTP layer", geo.mtp_layers * per_layer * cells,
                    f"{geo.mtp_layers} nextn layer(s) over the context"))
    if geo.sliding is not None:
        out.append(_sliding(s, geo, k, v, cells))
    if geo.kv_shared_layers:
        out.append(("KV shared layers", 0.0, f"{geo.kv_shared_layers} layers reuse earlier layers' KV"))
    if geo.recurrent is not None:
        seqs = s.parallel.value + (1 if s.spec_method else 0)
        state = recurrent_state_bytes(geo.recurrent, ssm_bytes=4, conv_bytes=4)
        out.append(("recurrent state", state * seqs, f"{geo.recurrent.layers} GDN layers, f32 r/s states x {seqs} "
                                                     "sequence(s) (slots + 1 for speculative rollback, assumption)"))
    return out


def _sliding(s: Settings, geo: Geometry, k: str, v: str, cells: int) -> tuple[str, float, str]:
    sw = geo.sliding
    assert sw is not None and sw.window is not None
    per_token = group_bytes_per_token(sw, ggml_slot_bytes(k, v, sw.head_dim))
    if isinstance(s, LlamaCppSettings) and s.swa_full.value:
        return ("KV sliding window", per_token * cells, f"{sw.layers} layers, --swa-full: the whole context")
    slots, ubatch = s.parallel.value, s.ubatch.value
    swa_cells = min(cells, align_up(sw.window * slots + ubatch, CELL_PAD))
    return ("KV sliding window", per_token * swa_cells, f"{sw.layers} layers x {swa_cells:,} cells (window {sw.window} "
                                                       f"x {slots} slot(s) + ubatch {ubatch})")


def _compute(r: Resolved, s: Settings, ledger: Ledger) -> None:
    arch = r.model.architecture
    ubatch = s.ubatch.value
    mib = ubatch * (arch.vocab_size * 4 + arch.hidden_size * 4 * ACT_F32_TENSORS) / MIB
    ledger.add("cap", "compute buffer", mib, f"ubatch {ubatch} x (vocab {arch.vocab_size:,} f32 logits + "
                                             f"{ACT_F32_TENSORS} hidden-size f32 activations)")
    ledger.assume("llama.cpp compute buffer ~ ubatch x (vocab logits + 8 hidden-size f32 tensors); CUDA context "
                  f"{CUDA_CONTEXT_MIB} MiB (not measured)")
    if isinstance(s, LlamaCppSettings) and s.flash_attn.value == "off":
        ledger.assume("flash attention off: the KQ scratch (ubatch x context x heads) is not modelled")


__all__ = ["build", "kv_parts"]
