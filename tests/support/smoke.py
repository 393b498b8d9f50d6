"""Real and stand-in servers for the smoke tests, all on 127.0.0.1 with free ports.

- `llama_server`: the real llama.cpp `llama-server` ($LLAMA_SERVER: scripts/test.sh builds or finds it; pytest
  never builds it) serving tiny GGUFs written by support/tinygguf.py, with a real draft model. A test that
  starts it carries `@pytest.mark.needs_llama_server` (support/tiers.py skips it without LLAMA_SERVER).
- `pacing_proxy`: a small HTTP proxy in front of the real server that releases the streamed tokens
  at a fixed rate — a slower engine, the server behind it being real.
- `hanging_server`: accepts connections and never answers.
- `serve_http`: a tiny threaded HTTP server for the stand-ins a test defines (broken servers, and
  a vLLM stand-in serving a real /metrics capture).
Every process is killed by its PID when the context exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from support import tinygguf
from support.tiers import MARK
from support.tiers import llama_server as llama_server_env

SPEC_ARGS = ["--spec-type", "draft-simple", "--spec-draft-n-max", "4"]


def llama_server_binary() -> str:
    """$LLAMA_SERVER. Only tests marked `needs_llama_server` may call this: the marker's hook has already
    skipped them when it is unset, so reaching here without it means the marker is missing."""
    path = llama_server_env()
    if path is None:
        pytest.fail(f"LLAMA_SERVER is unset and this test runs llama-server: mark it @pytest.mark.{MARK}",
                    pytrace=False)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_models(folder: Path, *, context: int, dominant: str | None = None,
                 main_name: str | None = None) -> tuple[Path, Path]:
    """A main model and its draft for `context` tokens: text pieces only, always up to max_tokens. `main_name`:
    the main GGUF's file name (llama-server reports its path in /props: name it as the chart's file to match)."""
    main_file = main_name or f"main-{context}-{dominant or 'x'}.gguf"
    main = tinygguf.write(folder / main_file, replace(tinygguf.MAIN, context=context),
                          never_eos=True, text_only=True, dominant_token=dominant)
    draft = tinygguf.write(folder / f"draft-{context}-{dominant or 'x'}.gguf", replace(tinygguf.DRAFT, context=context),
                           name="tiny-draft", never_eos=True, text_only=True, dominant_token=dominant)
    return main, draft


@dataclass
class LlamaServer:
    url: str
    pid: int
    log: Path


@contextlib.contextmanager
def llama_server(models: tuple[Path, Path], *, aliases: list[str], context: int, log_dir: Path,
                 extra: list[str] = ()) -> Iterator[LlamaServer]:
    """A real llama-server with a draft model (speculative decoding live); killed by PID on exit."""
    binary = llama_server_binary()
    port = free_port()
    main, draft = models
    argv = [binary, "-m", str(main), "-md", str(draft), *SPEC_ARGS, "--host", "127.0.0.1", "--port", str(port),
            "-c", str(context), "-np", "1", "-t", "1", "--alias", ",".join(aliases), "--no-ui", "--metrics", *extra]
    log = log_dir / f"llama-server-{port}.log"
    env = dict(os.environ, LD_LIBRARY_PATH=str(Path(binary).parent))  # also works for builds without $ORIGIN
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, log)
        yield LlamaServer(f"http://127.0.0.1:{port}", proc.pid, log)
    finally:
        proc.kill()
        proc.wait(timeout=10)


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    """Poll /health until 200; fail with the server log's tail when it exits or the timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama-server exited with {proc.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/health", timeout=1.0).status_code == 200:
                return
        time.sleep(0.05)
    pytest.fail(f"llama-server not healthy after {timeout}s:\n{log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Run `handler` on a free loopback port in a thread; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def send_json(self, status: int, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))


def pacing_proxy(upstream: str, tokens_per_s: float) -> contextlib.AbstractContextManager[str]:
    """A proxy to `upstream` that releases streamed content chunks at `tokens_per_s` (other calls pass through)."""
    interval = 1.0 / tokens_per_s

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            reply = httpx.get(upstream + self.path, timeout=10)
            self.send_response(reply.status_code)
            self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
            self.send_header("Content-Length", str(len(reply.content)))
            self.end_headers()
            self.wfile.write(reply.content)

        def do_POST(self) -> None:
            payload = self.body()
            with httpx.stream("POST", upstream + self.path, content=payload, timeout=60,
                              headers={"Content-Type": "application/json"}) as reply:
                self.start_stream()
                start, sent = None, 0
                for line in reply.iter_lines():
                    if line.startswith("data:") and '"content":"' in line:
                        start = time.monotonic() if start is None else start
                        _sleep_until(start + sent * interval)
                        sent += 1
                    self.wfile.write((line + "\n").encode())
                    self.wfile.flush()

    return serve_http(Handler)


def _sleep_until(at: float) -> None:
    delay = at - time.monotonic()
    if delay > 0:
        time.sleep(delay)


@contextlib.contextmanager
def hanging_server() -> Iterator[str]:
    """Accepts TCP connections and never sends a byte."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(socket.timeout, OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """Run the `catalog` CLI in-process; returns (exit code, stdout, stderr)."""
    from generator.cli import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(argv: list[str], capsys) -> tuple[int, dict]:
    code, out, err = run_cli([*argv, "--json"], capsys)
    try:
        return code, json.loads(out)
    except ValueError:
        raise AssertionError(f"not one JSON object (exit {code}):\n{out}\n{err}") from None

