"""Broken servers fail cleanly and within the timeout: hanging, trickling, malformed, oversized, wrong status.

The servers here are deliberately broken stand-ins written for these tests (a real server will not
misbehave on demand); the well-behaved paths are tested against a real llama-server elsewhere.
"""

from __future__ import annotations

import json
import time

from generator.smoke.run import SmokeOptions, Target, measure
from generator.smoke.http import Deadline, Http, SmokeFailure, server_root

from support.smoke import QuietHandler, hanging_server, serve_http

TARGET = Target(app="demo", model_alias="demo", context_length=4096, engine="llamacpp", speculative=None,
                chart_version="1.0.0", image="docker.io/x/y:1")
MODELS = {"object": "list", "data": [{"id": "demo", "meta": {"n_ctx": 4096}}]}


def chunk(text: str) -> bytes:
    return b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}).encode() + b"\n\n"


def handler(stream_body):
    """A server that is healthy and lists `demo`, and answers completions with `stream_body(self)`."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            if self.path == "/health":
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send_json(200, MODELS)
            else:
                self.send_json(404, {"error": "not found"})

        def do_POST(self) -> None:
            self.body()
            stream_body(self)

    return Handler


def smoke(url: str, timeout: float = 3.0):
    started = time.monotonic()
    result = measure(TARGET, url, SmokeOptions(runs=2, max_tokens=32, timeout_s=timeout))
    return result, time.monotonic() - started


def test_hanging_server_fails_within_the_timeout():
    with hanging_server() as url:
        result, took = smoke(url, timeout=2.0)
    assert took < 2.0 + 1.5  # the deadline, plus slack for a loaded 2-core CI machine
    assert result.runs == [] and result.failures == []  # nothing measured: an error, not a failure
    assert result.error == "not ready before the timeout: GET /health: timed out"


def test_trickling_stream_is_cut_at_the_deadline():
    def trickle(h):
        h.start_stream()
        for _ in range(200):
            h.wfile.write(b":")  # one byte every 0.1 s, never a full line
            h.wfile.flush()
            time.sleep(0.1)

    with serve_http(handler(trickle)) as url:
        result, took = smoke(url, timeout=1.5)
    assert took < 1.5 * 2 + 1.0  # readiness and the run each get the timeout; the run is cut at 1.5 s
    assert result.failures == []  # a timeout before the first token: nothing measured, an error
    assert result.error == "run 1: POST /v1/chat/completions: no complete answer before the deadline"


def test_malformed_chunk_fails_with_the_offending_text():
    def garbage(h):
        h.start_stream()
        h.wfile.write(chunk("Hello") + b"data: {not json\n\n")

    with serve_http(handler(garbage)) as url:
        result, _ = smoke(url)
    assert result.failures == ["run 1: malformed SSE chunk: {not json"]


def test_oversized_answers_are_capped():
    def huge(h):
        h.send_json(200, MODELS | {"padding": "x" * (2 << 20)})

    class Big(handler(None)):
        def do_GET(self) -> None:
            huge(self) if self.path == "/v1/models" else super().do_GET()

    with serve_http(Big) as url:
        result, _ = smoke(url)
    assert result.failures == ["GET /v1/models: the answer exceeds 1024 KiB; not an OpenAI-compatible reply"]


def test_a_line_without_end_is_capped():
    def endless_line(h):
        h.start_stream()
        h.wfile.write(b"data: " + b"x" * (1 << 21))

    with serve_http(handler(endless_line)) as url:
        result, _ = smoke(url)
    assert result.failures == ["run 1: POST /v1/chat/completions: a streamed line exceeds 1024 KiB"]


def test_error_status_and_missing_done_are_failures():
    def refused(h):
        h.send_json(500, {"error": {"message": "CUDA error: out of memory"}})

    def cut(h):
        h.start_stream()
        h.wfile.write(chunk("Hello"))

    with serve_http(handler(refused)) as url:
        assert "HTTP 500" in smoke(url)[0].failures[0] and "out of memory" in smoke(url)[0].failures[0]
    with serve_http(handler(cut)) as url:
        assert smoke(url)[0].failures == ["run 1: the stream ended without `data: [DONE]`"]


def test_wrong_path_fails_fast_instead_of_waiting():
    class NoApi(QuietHandler):
        def do_GET(self) -> None:
            self.send_json(404, {"error": "not found"})

    with serve_http(NoApi) as url:
        result, took = smoke(url, timeout=5.0)
    assert took < 2.0
    # not the app: an error (nothing about the app measured), flagged so that it is never recorded
    assert result.failures == [] and result.foreign
    assert result.error is not None and "not an OpenAI-compatible server root" in result.error
    assert "GET /health and GET /v1/models answer HTTP 404" in result.error and "without /v1" not in result.error


def test_base_url_forms():
    assert server_root("http://h:8000/v1/") == "http://h:8000"
    assert server_root("https://u:p@h/app/v1?x=1#f") == "https://u:p@h/app"


def test_get_outside_the_deadline_is_refused():
    with Http("http://127.0.0.1:9") as http:
        try:
            http.get("/health", Deadline.after(0))
        except SmokeFailure as exc:
            assert str(exc) == "GET /health: timed out"
        else:
            raise AssertionError("expected a SmokeFailure")


def test_a_stream_that_stalls_after_its_first_token_is_a_failure_not_an_error():
    """Something was measured (a token came), then the server stopped: a failure the ledger keeps."""
    def stall(h):
        h.start_stream()
        h.wfile.write(chunk("Hello"))
        h.wfile.flush()
        time.sleep(3.0)

    with serve_http(handler(stall)) as url:
        result, _ = smoke(url, timeout=1.0)
    assert result.error is None
    assert result.failures == ["run 1: POST /v1/chat/completions: no complete answer before the deadline"]


def test_a_closed_port_is_an_error():
    """A REAL closed loopback port: an error at the first probe (nothing listens), not a wait of --timeout."""
    from support.smoke import free_port

    url = f"http://127.0.0.1:{free_port()}"
    result, took = smoke(url, timeout=30.0)
    assert took < 1.5 and result.failures == [] and result.runs == [] and not result.foreign
    assert result.error is not None and result.error.startswith(f"nothing listens at {url} (GET /health: ConnectError:")
    assert "--wait-boot" in result.error


def test_wait_boot_waits_for_a_port_that_starts_listening_and_says_so_every_few_seconds():
    """A REAL port closed for 6 s, then a server on it: --wait-boot waits, with a line per WAIT_LINE_S."""
    import threading

    from support.smoke import free_port

    from generator.smoke.run import WAIT_LINE_S

    from http.server import ThreadingHTTPServer

    def answer(h) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    body = chunk("a hash table maps keys to buckets") + b"data: [DONE]\n\n"
    port = free_port()
    lines: list[str] = []
    servers: list[ThreadingHTTPServer] = []

    def later() -> None:
        time.sleep(6.0)
        server = ThreadingHTTPServer(("127.0.0.1", port), handler(answer))
        server.daemon_threads = True
        servers.append(server)
        server.serve_forever(poll_interval=0.05)

    starter = threading.Thread(target=later, daemon=True)
    starter.start()
    try:
        result = measure(TARGET, f"http://127.0.0.1:{port}", SmokeOptions(runs=1, max_tokens=8, timeout_s=30.0,
                                                                          wait_boot=True), waiting=lines.append)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        starter.join(10)
    assert result.error is None, result.error
    assert 2 <= len(lines) <= 6.0 / WAIT_LINE_S + 2, lines
    assert lines[0].startswith(f"waiting for http://127.0.0.1:{port}: GET /health: ConnectError")
    assert lines[-1].endswith("s of 30 s)") and "(5 s of 30 s)" in lines[1]
