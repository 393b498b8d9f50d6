"""A STAND-IN for vLLM's HTTP surface (vLLM cannot run on these machines: no GPU): the few endpoints `catalog
smoke` calls, answered the way vLLM answers them (`/health` 200 with an empty body, model cards with
`max_model_len`, SSE chunks without `timings`, a final usage chunk). Its `/metrics` is a REAL vLLM capture
(tests/fixtures/vllm_spec_decode_metrics.prom, origin in its header) whose two `_total` counters advance after
each completion, as vLLM's counters move during a request. With `root` and `version` it also says what it serves
the way vLLM does: `root` on the model card (the model the server was started with) and `GET /version`
(vllm-project/vllm@0052bed36509c7a5a2d8e48265334e40cf2f5a0e vllm/entrypoints/openai/protocol.py `ModelCard`;
vllm/entrypoints/openai/api_server.py `show_version`)."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from support.smoke import QuietHandler, serve_http

CAPTURE = (Path(__file__).resolve().parent.parent / "fixtures" / "vllm_spec_decode_metrics.prom").read_text()
DRAFTED, ACCEPTED = 1.0218118e07, 7.268642e06
ANSWER = ("A hash table stores values in buckets chosen by a hash of the key. Collisions go to a chain "
          "or to the next free slot; the table doubles when it gets too full, so lookups stay O(1).")


def vllm_stand_in(*, max_model_len: int, drafted_per_request: int, accepted_per_request: int, model: str,
                  root: str | None = None, version: str | None = None):
    state = {"requests": 0}
    lock = threading.Lock()

    def metrics() -> str:
        n = state["requests"]
        text = re.sub(r"(vllm:spec_decode_num_draft_tokens_total\{[^}]*\}) \S+",
                      lambda m: f"{m.group(1)} {DRAFTED + n * drafted_per_request:e}", CAPTURE)
        return re.sub(r"(vllm:spec_decode_num_accepted_tokens_total\{[^}]*\}) \S+",
                      lambda m: f"{m.group(1)} {ACCEPTED + n * accepted_per_request:e}", text)

    class VllmStandIn(QuietHandler):
        def do_GET(self) -> None:
            if self.path == "/health":
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [
                    {"id": model, "object": "model", "owned_by": "vllm", "root": root, "parent": None,
                     "max_model_len": max_model_len}]})
            elif self.path == "/version" and version is not None:
                self.send_json(200, {"version": version})
            elif self.path == "/metrics":
                body = metrics().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_json(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            request = json.loads(self.body())
            assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
            self.start_stream()
            words = ANSWER.split(" ")
            for i in range(0, len(words), 4):  # spec decoding: several tokens per chunk
                delta = {"content": " ".join(words[i:i + 4]) + " "}
                self._send({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
            self._send({"object": "chat.completion.chunk", "choices": [],
                        "usage": {"prompt_tokens": 30, "completion_tokens": 48, "total_tokens": 78}})
            self.wfile.write(b"data: [DONE]\n\n")
            with lock:
                state["requests"] += 1

        def _send(self, data: dict) -> None:
            self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
            self.wfile.flush()

    return serve_http(VllmStandIn)
