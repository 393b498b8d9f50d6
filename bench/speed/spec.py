"""Speculative decoding's step cost on a real-shape MTP file: llama-server with speculation off and with
`--spec-type draft-mtp --spec-draft-n-max N` (N = 1, 3), one greedy request of 256 tokens each (`ignore_eos`), the
server's own timings (`predicted_per_second`, `draft_n`, `draft_n_accepted`).

    python3 spec.py LLAMA_SERVER MODEL.gguf OUT.jsonl

All-zero weights make every logit equal: target and drafter pick the same token, so the drafts are all accepted. What
this measures is the cost of a step that verifies N + 1 tokens and drafts N, not the acceptance (that needs real
weights). Standard library only (the GPU machine has no project install).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

PORT = 18181


def ask(path: str, body: dict[str, object] | None = None, timeout: float = 60) -> dict[str, object]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def one(server: str, model: str, extra: list[str], kv: str = "q4_0") -> dict[str, object]:
    argv = [server, "-m", model, "--host", "127.0.0.1", "--port", str(PORT), "-ngl", "99", "-fa", "on", "-c", "8192",
            "-np", "1", "-ctk", kv, "-ctv", kv, "--no-warmup", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            try:
                ask("/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        body = {"prompt": "Write a long story about a lighthouse.", "n_predict": 256, "temperature": 0,
                "ignore_eos": True, "cache_prompt": False}
        ask("/completion", {**body, "n_predict": 16})  # warm the kernels
        answer = ask("/completion", body)
        return {"argv_extra": extra, "timings": answer.get("timings")}
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main() -> int:
    server, model, out = sys.argv[1:4]
    with open(out, "a") as f:
        for extra in ([], ["--spec-type", "draft-mtp", "--spec-draft-n-max", "1"],
                      ["--spec-type", "draft-mtp", "--spec-draft-n-max", "3"]):
            try:
                row = one(server, model, extra)
            except Exception as e:  # one failed boot must not cost the others
                row = {"argv_extra": extra, "error": repr(e)}
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
