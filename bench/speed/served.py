"""Served decode speed: llama-server on each file of the plan, speculation off, one greedy request of 256 tokens
(`ignore_eos`) after a 16-token warm-up, the server's own timings: the same path as the catalog's served figures
(sampling and the HTTP loop counted), where llama-bench times the kernels alone.

    python3 served.py LLAMA_SERVER PLAN.json MODEL_DIR OUT.jsonl DEADLINE_EPOCH_S

A row starts only before the deadline. Standard library only (the GPU machine has no project install).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spec import one  # noqa: E402


def main() -> int:
    server, plan, models, out, deadline = sys.argv[1:6]
    with open(out, "a") as f:
        for row in json.loads(Path(plan).read_text()):
            if time.time() > float(deadline):
                print("skip", row["gguf"], flush=True)
                continue
            try:
                found = one(server, str(Path(models) / row["gguf"]), [], kv=row["kv"])
            except Exception as e:  # one failed boot must not cost the others
                found = {"argv_extra": [], "error": repr(e)}
            found = {"gguf": row["gguf"], "kv": row["kv"], **found}
            f.write(json.dumps(found) + "\n")
            f.flush()
            print(found, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
