"""SGLang's memory: the static pool (mem_fraction_static x the free memory before the weights load) holds the
weights, the recurrent state slots and the KV pool; SGLang's reserve (activations, CUDA graphs) and the CUDA
context sit beside it under the HAMi cap. The arithmetic and its sources are in generator/engines/sglang.py;
this module places its figures as fit parts. The engine module is imported when an SGLang app is fitted, not with the
fit (a render of a catalog with no SGLang app never loads it).
"""

from __future__ import annotations

from generator.engines import Sized
from generator.engines import SglangSettings
from generator.fit.ledger import Ledger, cap_mib


def fraction(s: SglangSettings, cap_mib: int) -> float:
    """--mem-fraction-static sized for a HAMi cap of `cap_mib` (generator/engines/sglang.py `plan_from`, from the
    app's facts its settings carry)."""
    from generator.engines import sglang

    return sglang.plan_from(s.memory, cap_mib).mem_fraction_static


def build(r: Sized, s: SglangSettings, ledger: Ledger) -> None:
    from generator.engines import sglang

    cap = cap_mib(r)
    spec_mtp = s.spec_method == "mtp"
    p = sglang.plan_from(s.memory, cap, fraction=s.fraction.value, context=s.context.value, kv_dtype=s.kv_k.value,
                         draft_layers=r.model.architecture.mtp_layers if spec_mtp else 0, requests=s.requests.value,
                         mamba_ratio=s.mamba_ratio.value, swa_ratio=s.swa_ratio.value)
    b = p.budget
    static = p.mem_fraction_static * b.pre_load_gib * 1024
    ledger.pool("cap", "HAMi cap", cap, "app.gpu_memory_mib")
    ledger.add("cap", "CUDA context", sglang.CONTEXT_MIB, "before the weights load (assumption)")
    where = (f"mem_fraction_static {p.mem_fraction_static} ({s.fraction.where() or 'sized for the cap'}) x "
             f"{b.pre_load_gib * 1024:,.0f} MiB free before the weights load ({p.total_mib:,.0f} MiB read - "
             f"{sglang.CONTEXT_MIB} MiB context) = {static:,.0f} MiB static pool")
    kv_pool = max(0.0, b.kv_gib * 1024)
    ledger.add("cap", "weights", p.weights_mib, "a weights_loaded calibration row, else the weight file's size")
    if b.mamba_slots:
        ledger.add("cap", f"GDN state slots ({b.mamba_slots})", b.mamba_gib * 1024,
                   f"--mamba-full-memory-ratio {s.mamba_ratio.value}: rest x r / (1 + r) in whole slots")
    ledger.add("cap", "SGLang KV pool", kv_pool, where)
    ledger.add("cap", "activations + CUDA graphs", p.reserve_mib,
               "SGLang's own reserve: 512 + 2048 x 1.5 + 24 x 2 + 128 MiB (server_args.py:3276-3287)")
    ledger.pool("kv", "KV pool", kv_pool,
                f"static pool - weights {p.weights_mib:,.0f} MiB - recurrent state {b.mamba_gib * 1024:,.0f} MiB "
                f"({b.mamba_slots} slots)")
    cell = b.cell
    need = s.context.value * cell / sglang.MIB
    layers = "full attention + sliding window" if r.model.architecture.sliding_attention else "full attention"
    ledger.add("kv", f"KV {layers} at {s.context.value:,} tokens", need,
               f"{cell:,.0f} B per token; the pool holds {b.tokens:,} tokens = the largest context that fits")
    ledger.facts.append(f"SGLang pool: max_total_num_tokens {b.tokens:,} (largest context that fits), "
                        f"--max-running-requests {p.max_running_requests}, rest {b.rest_gib:.2f} GiB")
    if b.rest_gib <= 0:
        ledger.facts.append(f"the weights leave no KV: SGLang needs --mem-fraction-static above "
                            f"{b.minimum_fraction:.3f}")
    ledger.assume("SGLang reads the memory the device reports in the pod, less a 512 MiB CUDA context, as the "
                  "free memory before the weights load")
