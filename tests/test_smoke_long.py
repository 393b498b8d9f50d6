"""The long request (issue 36 item 6; docs/smoke.md "The long request"): after the short runs, the smoke sends one
request whose prompt fills most of the served context, and a connection closed during it is reported as the HAMi
cap's failure, naming the cap.

Under the real HAMi-core a cap a little too tight boots, answers short requests, then aborts the server (SIGABRT) at the
first long request: the client sees a closed connection, no HTTP error. No GPU and no HAMi-core run here, so that
server is a stand-in written for these tests (it answers short requests and closes the connection on a long one); a
real llama-server (tiny GGUF) answers the long request in the last test.
"""

from __future__ import annotations

import json

import pytest

from generator.smoke.run import LONG_FILL, SmokeOptions, Target, measure

from support.smoke import QuietHandler, llama_server, serve_http, write_models

CONTEXT = 4096
TARGET = Target(app="demo", model_alias="demo", context_length=CONTEXT, engine="llamacpp", speculative=None,
                chart_version="1.0.0", image="docker.io/x/y:1", hami_cap="CUDA_DEVICE_MEMORY_LIMIT_0=22272m")
MODELS = {"object": "list", "data": [{"id": "demo", "meta": {"n_ctx": CONTEXT}}]}
SHORT = 2000  # characters: a prompt above this is the long request


def capped(long_answer):
    """A stand-in that answers short completions and calls `long_answer(self)` for a long prompt."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            if self.path == "/health":
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send_json(200, MODELS)
            else:
                self.send_json(404, {"error": "not found"})

        def do_POST(self) -> None:
            prompt = json.loads(self.body())["messages"][0]["content"]
            if len(prompt) > SHORT:
                long_answer(self)
                return
            self.start_stream()
            for word in ("a", " hash", " table"):
                self.wfile.write(b"data: " + json.dumps({"choices": [{"delta": {"content": word}}]}).encode()
                                 + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


def aborts(h) -> None:
    """HAMi-core's SIGABRT mid-prefill: the socket closes with no HTTP answer."""
    h.close_connection = True
    h.connection.shutdown(2)


def aborts_mid_stream(h) -> None:
    h.start_stream()
    h.wfile.write(b"data: " + json.dumps({"choices": [{"delta": {"content": "x"}}]}).encode() + b"\n\n")
    h.wfile.flush()
    h.connection.shutdown(2)


def smoke(url: str, *, long_request: bool = True):
    return measure(TARGET, url, SmokeOptions(runs=2, max_tokens=8, timeout_s=10.0, long_request=long_request))


@pytest.mark.parametrize("answer", [aborts, aborts_mid_stream])
def test_a_connection_closed_during_the_long_request_is_the_caps_failure(answer):
    with serve_http(capped(answer)) as url:
        result = smoke(url)
    assert result.error is None and len(result.runs) == 2  # the short runs passed: the cap boots and answers them
    assert len(result.failures) == 1
    failure = result.failures[0]
    assert "long request" in failure and "closed" in failure
    assert "CUDA_DEVICE_MEMORY_LIMIT_0=22272m" in failure and "HAMi" in failure
    assert f"{int(CONTEXT * LONG_FILL) - 8 - 64:,}" in failure or "prompt tokens" in failure


def test_a_prompt_over_the_context_is_a_note_not_the_cap():
    with serve_http(capped(lambda h: h.send_json(400, {"error": {"message": "exceeds the context size"}}))) as url:
        result = smoke(url)
    assert result.failures == []
    assert any("long request" in n and "refused" in n and "the cap was not tested" in n for n in result.notes)


def test_without_the_option_no_long_request_is_sent():
    with serve_http(capped(aborts)) as url:
        result = smoke(url, long_request=False)
    assert result.failures == [] and not any("long request" in n for n in result.notes)


@pytest.mark.needs_llama_server
def test_a_real_server_answers_the_long_request(tmp_path):
    models = write_models(tmp_path, context=CONTEXT)
    with llama_server(models, aliases=["demo"], context=CONTEXT, log_dir=tmp_path) as server:
        result = measure(TARGET, server.url, SmokeOptions(runs=1, max_tokens=8, timeout_s=120.0, long_request=True))
    assert result.error is None and result.failures == [], result.failures
    assert any(n.startswith("long request: ~") and "answered" in n for n in result.notes), result.notes
