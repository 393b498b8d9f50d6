"""The sweep's context-filling prompt on the real llama-server (CPU build, $LLAMA_SERVER), at a small slot.

bench/fit-sweep/sweep.py's v7 harness sized the long request in words at an assumed 15.8 tokens per "hello world ";
the real-shape vocabulary gave 32,852 tokens for a 32,768-token slot and llama-server refused 3 rows' long request
(bench/fit-sweep/h200-v7). `fill_prompt` now measures the prompt in the model's tokens (the server's /tokenize) and
cuts it to the slot (/props n_ctx) less the generation and FILL_MARGIN. The model is support/tinygguf.py's (a real
GGUF a real llama-server serves; its vocabulary is not the real-shape one, which is why the tokens are measured, not
assumed). The slot is the server's own n_ctx_seq: `-c 1024 -np 2` gives two 512-token slots.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from support import tinygguf
from support.catalogs import REPO
from support.tiers import llama_server

pytestmark = pytest.mark.needs_llama_server


def _sweep():
    sys.path.insert(0, str(REPO / "scripts"))
    spec = importlib.util.spec_from_file_location("sweep", REPO / "bench" / "fit-sweep" / "sweep.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fill")
    return tinygguf.write(folder / "tiny-2048.gguf", replace(tinygguf.MAIN, context=2048))


def _complete(port: int, prompt: object) -> dict:
    body = json.dumps({"prompt": prompt, "n_predict": 8}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


@pytest.mark.parametrize("args,slot", [(["-c", "512", "-np", "1"], 512), (["-c", "1024", "-np", "2"], 512),
                                       (["-c", "2048", "-np", "1"], 2048)])
def test_fill_prompt_fills_the_slot_and_is_accepted(model: Path, tmp_path: Path, args: list[str], slot: int) -> None:
    sweep = _sweep()
    server = llama_server()
    assert server
    from fit_probe import _free_port  # type: ignore[import-not-found]  # scripts/, on the path since _sweep()

    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        proc = subprocess.Popen([server, "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-t", "1",
                                 "--no-warmup", *args], stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "listening on http" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
            time.sleep(0.2)
        # the guess is far too short for this vocabulary: fill_prompt grows it by measuring, then cuts it
        ids, n_ctx = sweep.fill_prompt(port, 10)
        assert n_ctx == slot
        assert len(ids) == slot - sweep.N_PREDICT - sweep.FILL_MARGIN
        answer = _complete(port, ids)
        assert answer["tokens_evaluated"] == len(ids), answer.get("tokens_evaluated")
        # the boundary fill_prompt keeps clear of: a prompt of the whole slot is refused (n_tokens >= n_ctx)
        with pytest.raises(urllib.error.HTTPError) as refused:
            _complete(port, ids + ids[1:1 + sweep.N_PREDICT + sweep.FILL_MARGIN])
        assert refused.value.code == 400
        assert "exceeds the available context size" in refused.value.read().decode(errors="replace")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_boot_and_ask_fills_through_the_harness(model: Path, tmp_path: Path) -> None:
    """The sweep's own run path (boot, short request, filling request) on a 512-token slot: nothing refused."""
    sweep = _sweep()
    server = llama_server()
    assert server
    facts = sweep.boot_and_ask(server, str(model), ["-c", "1024", "-np", "2"], tmp_path / "run.log", gpu=False,
                               timeout=60, threads=1, long_words=sweep.fill_words({"context": 1024, "parallel": 2}),
                               fill=True)
    assert facts["listening"], (tmp_path / "run.log").read_text(errors="replace")[-2000:]
    assert "long_error" not in facts and "request_error" not in facts, facts
    assert facts["n_ctx_slot"] == 512
    assert facts["long_tokens_sent"] == 512 - sweep.N_PREDICT - sweep.FILL_MARGIN
    assert facts["long_prompt_tokens"]  # the server evaluated it (less the short request's cached prefix)
