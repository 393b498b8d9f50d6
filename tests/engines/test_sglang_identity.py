"""`catalog smoke` identity for SGLang: the /v1/models card says `owned_by: sglang`, /model_info the model path,
/server_info the version and context length. The server is a STAND-IN on a real loopback socket (SGLang needs a
GPU and torch, which cannot run here); its answers have the shapes of v0.5.14's
python/sglang/srt/entrypoints/http_server.py (:648-708) and openai/protocol.py (:74)."""

from __future__ import annotations

from support.smoke import QuietHandler, serve_http

from generator.smoke.http import Deadline, Http
from generator.smoke.identity import Expected, compare, observe


class SglangLike(QuietHandler):
    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": "gemma-4-e4b", "object": "model",
                                                              "owned_by": "sglang", "root": "google/gemma-4-E4B-it",
                                                              "max_model_len": 32768}]})
        elif self.path == "/model_info":
            self.send_json(200, {"model_path": "google/gemma-4-E4B-it", "model_type": "gemma4"})
        elif self.path == "/server_info":
            self.send_json(200, {"model_path": "google/gemma-4-E4B-it", "context_length": 32768,
                                 "api_key": "sk-secret", "version": "0.5.14"})
        else:
            self.send_json(404, {"detail": "Not Found"})


def test_sglang_identity_is_read_and_matches_the_chart():
    with serve_http(SglangLike) as url, Http(url) as http:
        served = observe(http, Deadline.after(5), "gemma-4-e4b")
    assert served.engine == "sglang" and served.engine_version == "0.5.14"
    assert served.model_path == "google/gemma-4-E4B-it" and served.context == 32768
    assert "/model_info" in served.said_by and "/server_info" in served.said_by
    expected = Expected(engine="sglang", model_repo="google/gemma-4-E4B-it", model_file=None, context=32768,
                        engine_version="0.5.14", image="lmsysorg/sglang:v0.5.14-cu130")
    result = compare(served, expected)
    assert not result.mismatches and {"engine", "engine_version", "model"} <= set(result.matched)


def test_a_vllm_chart_against_sglang_fails_on_the_engine():
    with serve_http(SglangLike) as url, Http(url) as http:
        served = observe(http, Deadline.after(5), "gemma-4-e4b")
    expected = Expected(engine="vllm", model_repo="google/gemma-4-E4B-it", model_file=None, context=32768,
                        engine_version="0.19.1", image="vllm/vllm-openai:v0.19.1-cu130")
    assert any(m.startswith("engine: served by SGLang") for m in compare(served, expected).mismatches)
