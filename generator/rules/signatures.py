"""Known crash signatures: text a running pod shows (a log line, an env entry of its spec) that names a crash a
catalog rule exists to prevent, with that rule's id and the fix.

`catalog doctor` (docs/doctor.md) scans a pod's recent logs and its engine container's env with this table.
It is data, not a rule: the rule ids point into the one registry (docs/rules.md), which
`tests/test_doctor.py` checks, so a renamed rule cannot leave a signature pointing nowhere.

Every pattern comes from the maintainer's public notes; each entry cites them. Where a note quotes the log
line (`RuntimeError: CUDA driver error: invalid argument`, `AssertionError: Workspace is locked ...`) the
pattern matches that line; where it paraphrases (`ModuleNotFoundError: xxhash`, `CUDA OOM`, `TorchDynamo shape
mismatch (FakeTensor mul op, 196608 vs 48*s72)`) it matches the key substring the note states, loosened only
where Python or PyTorch prints the same thing in longer words (`No module named 'xxhash'`, `CUDA out of
memory`). Two shorthands, as in docs/domain.md:

- MARKET = github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 (upgradeDescription
  lines of vllmqwen36turbo27bone/OlaresManifest.yaml, the Fast app);
- POSTS = github.com/aamsellem/olares-one-market@b7de88ebb4a40ec66108f74694c2bfe616135943 (the write-ups).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

MARKET = "github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9"
POSTS = "github.com/aamsellem/olares-one-market@b7de88ebb4a40ec66108f74694c2bfe616135943"
FAST = f"{MARKET} vllmqwen36turbo27bone/OlaresManifest.yaml"


@dataclass(frozen=True)
class Signature:
    id: str
    rule: str  # the rule of docs/rules.md that prevents this crash
    where: Literal["log", "env"]  # a log line, or an engine env entry written `NAME=value`
    pattern: str  # a regular expression searched in each line
    title: str
    fix: str
    source: str
    needs_patch: str | None = None  # a Genesis patch that must be on in the pod's env for the line to count
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern))

    def matches(self, line: str) -> bool:
        return self.compiled.search(line) is not None


SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "hami-0m-limit", "HAMI002", "env", r"^CUDA_DEVICE_MEMORY_LIMIT(?:_0)?=0+[kKmMgG]?$",
        "the HAMi memory limit in the pod is zero (`0m`): the first CUDA Driver API allocation fails",
        "request nvidia.com/gpumem and set CUDA_DEVICE_MEMORY_LIMIT_0 to the same MiB (`<gpumem>m`): the generated "
        "chart does both; re-render the app and reinstall it",
        f"{FAST}:30 (v2.5.2: 'Olares sets this env to `0m` by default'); {POSTS} discord_post_olares_may8_2026_en.md "
        "(bugs 1: 'Olares default `CUDA_DEVICE_MEMORY_LIMIT_0=0m`')"),
    Signature(
        "hami-0m-crash", "HAMI002", "log", r"CUDA driver error: invalid argument",
        "`CUDA driver error: invalid argument` at the first allocation: the HAMi `0m` limit "
        "(EagleProposer.__init__ -> torch.zeros under speculative decoding)",
        "set CUDA_DEVICE_MEMORY_LIMIT_0 to the gpumem in MiB (`24300m` on the Olares One), never `0m`",
        f"{FAST}:30 (v2.5.2: 'crashing EagleProposer.__init__ → torch.zeros under spec decoding (CUDA driver error: "
        f"invalid argument)'); {POSTS} comment_vllm_40807.md ('RuntimeError: CUDA driver error: invalid argument')"),
    Signature(
        "xxhash-missing", "ENG001", "log", r"ModuleNotFoundError: (?:No module named )?'?xxhash\b",
        "`ModuleNotFoundError: xxhash` after a few requests: --prefix-caching-hash-algo xxhash on an image without "
        "the xxhash package",
        "drop `--prefix-caching-hash-algo xxhash` (the default sha256 works), or use an image with the xxhash package",
        f"{FAST}:29 (v2.5.3: 'the engine crashes after a few requests with `ModuleNotFoundError: xxhash`'); "
        f"{POSTS} discord_post_olares_may8_2026_en.md (bugs 2)"),
    Signature(
        "p5b-oom", "GEN005", "log", r"CUDA (?:OOM|out of memory)",
        "CUDA out of memory with Genesis P5B on: P5B's padded KV pages plus P38's workspace overflow the 24 GB cap "
        "at the first inference",
        "remove P5B (GENESIS_ENABLE_P5B_KV / GENESIS_ENABLE_P5B / SNDR_ENABLE_P5B); the Fast app reverted it in 2.5.5",
        f"{FAST}:27 (v2.5.5: '`GENESIS_ENABLE_P5B_KV=1` causes CUDA OOM at first inference on 24GB ... (512 MiB "
        f"requested when only 646 MiB free)'); {POSTS} discord_post_olares_may8_2026_en.md (bugs 3: 'triggers CUDA OOM "
        "during continuation prefill'); the long form is PyTorch's allocator message ('CUDA out of memory. Tried to "
        "allocate ', https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDACachingAllocator.cpp)",
        needs_patch="P5B"),
    Signature(
        "dynamo-shape-mismatch", "GEN006", "log", r"TorchDynamo shape mismatch|196608 vs 48\*s72",
        "TorchDynamo shape mismatch at engine init (FakeTensor mul, 196608 vs 48*s72): P5B with turboquant_4bit_nc "
        "+ MTP; the pod crash-loops (its exit 137 is the watchdog's kill, not memory)",
        "remove P5B, or use --kv-cache-dtype turboquant_k8v4",
        f"{FAST}:41 (v2.2.1: 'produces TorchDynamo shape mismatch (FakeTensor mul op, 196608 vs 48*s72) at engine "
        f"init ... CrashLoopBackOff (Exit 137 → actually shape mismatch + watchdog kill)'); {FAST}:40 (v2.2.2)"),
    Signature(
        "workspace-locked", "GEN004", "log", r"Workspace is locked but allocation",
        "`AssertionError: Workspace is locked but allocation ...` at the first inference: Genesis P65 without "
        "P22 + P38",
        "keep Genesis P22 and P38 on together with P65 (they pre-allocate the TurboQuant workspaces)",
        f"{POSTS} comment_vllm_40807.md (Result 2: 'AssertionError: Workspace is locked but allocation from "
        f"'turboquant_attn.py:862:_decode_attention' requires 0.76 MB'); {POSTS} discord_post_olares_may8_2026_en.md "
        "('Patch 65 alone → crashes at workspace lock on first inference')"),
)


__all__ = ["MARKET", "POSTS", "SIGNATURES", "Signature"]
