"""The rendered argv of a real market app runs on a real llama-server.

The app is llamacppqwen36a3bone of the market fixture (upstream llama.cpp, stack llamacpp-b8740). Its argv,
exactly as `catalog render` puts it in the chart, is launched on the locally built llama-server ($LLAMA_SERVER,
built or found by scripts/test.sh; CPU only, a newer build than b8740) against a tiny random GGUF written by
tests/support/tinygguf.py. Only these arguments are changed, each for a stated reason (SWAPS):
- `--model`: the 17 GB Qwen3.6 GGUF -> the tiny GGUF (no download in tests);
- `--host 0.0.0.0` / `--port 8080` -> 127.0.0.1 and a free port (loopback only, no clash);
- `--mlock` -> `--load-mode mlock`: llama.cpp #20834 replaced --mlock after b8740, and the test build is newer
  (the flag table of this build says exactly that: FLAG003 with that replacement).
`--n-gpu-layers 99`, `--flash-attn auto`, `--op-offload`, q4_0 KV cache, `--swa-full` and the rest run as
rendered. The server must answer /health 200 and one chat completion; it is killed by its PID.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from generator.catalog import load_catalog
from generator.engines import engine_for
from generator.flags.check import ArgvChecker, Token
from generator.flags.tables import load_table

from support import tinygguf
from support.catalogs import MARKET_CATALOG
from support.flags import generate_llamacpp_table
from support.smoke import free_port, llama_server_binary, wait_healthy

APP = "llamacppqwen36a3bone"
pytestmark = pytest.mark.needs_llama_server


def swapped(argv: list[str], model: Path, port: int) -> list[str]:
    out: list[str] = []
    values = {"--model": str(model), "--host": "127.0.0.1", "--port": str(port)}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in values:
            out += [arg, values[arg]]
            i += 2
            continue
        out += ["--load-mode", "mlock"] if arg == "--mlock" else [arg]
        i += 1
    return out


def test_swaps_are_exactly_what_this_build_refuses(tmp_path):
    """Checked against the table generated from this very binary: the rendered argv has one problem
    (--mlock, removed), and the swapped argv has none."""
    table = load_table(generate_llamacpp_table(tmp_path, "local-build"))
    argv = engine_for(load_catalog(MARKET_CATALOG).apps[APP]).argv

    def check(tokens: list[str]):
        return ArgvChecker(table, "local-build.yaml").check([Token(t, "test", i) for i, t in enumerate(tokens)])

    before = check(argv)
    assert [(i.rule, i.token.text) for i in before] == [("FLAG003", "--mlock")]
    assert "--load-mode mlock" in before[0].fix
    assert check(swapped(argv, tmp_path / "m.gguf", 1234)) == []


def test_rendered_argv_serves_on_a_real_llama_server(tmp_path):
    binary = llama_server_binary()
    model = tinygguf.write(tmp_path / "tiny.gguf")
    port = free_port()
    resolved = load_catalog(MARKET_CATALOG).apps[APP]
    argv = swapped(engine_for(resolved).argv, model, port)
    log = tmp_path / "llama-server.log"
    env = dict(os.environ, LD_LIBRARY_PATH=str(Path(binary).parent))
    with log.open("wb") as out:
        proc = subprocess.Popen([binary, *argv], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, log, timeout=60.0)
        reply = httpx.post(url + "/v1/chat/completions", timeout=60, json={
            "model": resolved.app.model_alias, "max_tokens": 16, "temperature": 0,
            "messages": [{"role": "user", "content": "hello"}]})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["usage"]["completion_tokens"] > 0 and body["choices"][0]["message"]["content"]
        assert body["model"] == resolved.app.model_alias
    finally:
        proc.kill()
        proc.wait(timeout=10)
