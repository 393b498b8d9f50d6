"""`catalog calibrate` fed a hostile boot log or bad options (issue 22, causes 11 and 12, and two minors).

Every bad number is an error at its line or option (exit 1 or 2, nothing written), never a traceback; the log is
read within 16 MiB through generator/core/bounded.py (no device, FIFO or link; standard input line by line, an
endless `kubectl logs -f |` refused at the cap with bounded memory); text from the log and the options is
printed escaped; a log that loads a second model is refused naming both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.cli import main

from support.adversarial import REPO, assert_clean_failure, cli

FAST = "vllmqwen36turbo27bone"  # a vLLM app of the market fixture (tests/fixtures/market)
LONG = "llamacppqwen36mtpone"  # a llama.cpp app of it
MODEL = "Lorbus/Qwen3.6-27B-int4-AutoRound"
VLLM = f"""(EngineCore_DP0 pid=80) INFO [core.py:110] Initializing a V1 LLM engine (v0.20.0) with config: model='{MODEL}'
(EngineCore_DP0 pid=80) INFO [gpu_worker.py:440] Available KV cache memory: {{kv}} GiB
(EngineCore_DP0 pid=80) INFO [kv_cache_utils.py:1] GPU KV cache size: {{tokens}} tokens
"""
LLAMA = """I llama_model_loader: loaded meta data with 31 key-value pairs and 866 tensors from /m/{file}
I load_tensors:        CUDA0 model buffer size = {mib} MiB
I llama_kv_cache: size = 2304.00 MiB (131072 cells,  16 layers,  1/1 seqs), K (q4_0): 1152.00 MiB, V (q4_0): 1152.00 MiB
"""


def _calibrate(catalog: Path, log: Path | str, *extra: str) -> int:
    return main(["calibrate", FAST, "--log", str(log), "--catalog", str(catalog), "--write", *extra])


def _unchanged(catalog: Path):
    before = {p: p.read_bytes() for p in (catalog / "apps").glob("*.yaml")}
    before |= {p: p.read_bytes() for p in (catalog / "models").glob("*.yaml")}
    return lambda: all(p.read_bytes() == data for p, data in before.items())


@pytest.mark.parametrize("kv, tokens, said", [
    ("9" * 309, "1000", "is not a memory or token figure"),  # float() of it is inf
    ("2.97", "9" * 5000, "is not a memory or token figure"),  # int() of it raises
    ("1" + "0" * 15, "1000", "is not a memory or token figure"),  # above 2^40
])
def test_calibrate_impossible_numbers_are_errors_at_their_line(catalog_copy, tmp_path, capsys, kv, tokens, said):
    log = tmp_path / "boot.log"
    log.write_text(VLLM.format(kv=kv, tokens=tokens))
    unchanged = _unchanged(catalog_copy)
    assert _calibrate(catalog_copy, log) == 1
    err = capsys.readouterr().err
    assert f"{log}:" in err and said in err and "Traceback" not in err
    assert unchanged()


def test_calibrate_zero_mib_buffers_record_nothing(catalog_copy, tmp_path, capsys):
    log = tmp_path / "boot.log"
    log.write_text(LLAMA.format(file="qwen36-27b-q4km-mtp-realshape.gguf", mib="0.00").replace(
        "size = 2304.00 MiB", "size = 0.00 MiB"))
    unchanged = _unchanged(catalog_copy)
    assert main(["calibrate", LONG, "--log", str(log), "--catalog", str(catalog_copy), "--write"]) == 1
    err = capsys.readouterr().err
    assert "has no figure `catalog calibrate` can turn into a row" in err and "Traceback" not in err
    assert unchanged()


@pytest.mark.parametrize("option", [["--gpu-mib", "nan"], ["--gpu-mib", "inf"], ["--gpu-mib", "1e308"],
                                    ["--gpu-mib", "-5"], ["--util", "nan"], ["--util", "1.5"],
                                    ["--cap-mib", "99999999999"], ["--date", "2026-13-45"], ["--date", "yesterday"]])
def test_calibrate_bad_options_are_usage_errors(catalog_copy, tmp_path, capsys, option):
    log = tmp_path / "boot.log"
    log.write_text(VLLM.format(kv="2.97", tokens="88704"))
    unchanged = _unchanged(catalog_copy)
    assert _calibrate(catalog_copy, log, *option) == 2
    err = capsys.readouterr().err
    assert option[0] in err and "Traceback" not in err and "internal error" not in err
    assert unchanged()


def test_calibrate_too_long_note_is_an_error_not_a_traceback(catalog_copy, tmp_path, capsys):
    log = tmp_path / "boot.log"
    log.write_text(VLLM.format(kv="2.97", tokens="88704"))
    assert _calibrate(catalog_copy, log, "--note", "n" * 3000) == 1
    err = capsys.readouterr().err
    assert "row cannot be recorded" in err and "what" in err and "Traceback" not in err


def test_calibrate_log_from_dev_zero_refused_without_reading_it(catalog_copy):
    started = time.monotonic()
    proc = cli("calibrate", FAST, "--log", "/dev/zero", "--catalog", catalog_copy, timeout=60)
    assert_clean_failure(proc, 1)
    assert "not a regular file" in proc.stderr
    assert time.monotonic() - started < 30


def test_calibrate_log_that_is_a_symbolic_link_refused(catalog_copy, tmp_path):
    log = tmp_path / "boot.log"
    log.symlink_to("/etc/passwd")
    proc = cli("calibrate", FAST, "--log", log, "--catalog", catalog_copy, timeout=60)
    assert_clean_failure(proc, 1)
    assert "a symbolic link" in proc.stderr and "root:" not in proc.stderr + proc.stdout


def test_calibrate_endless_stdin_stops_at_the_cap_with_bounded_memory(catalog_copy):
    """`kubectl logs -f | catalog calibrate --log -`: a stream that never ends (took 3 GB in 6 s)."""
    code = f"""
import json, subprocess, sys, resource
feeder = subprocess.Popen([sys.executable, "-c", "import sys\\nline = b'INFO loading weights ' * 40 + b'\\\\n'\\n"
                           "while True: sys.stdout.buffer.write(line * 1000)"], stdout=subprocess.PIPE)
proc = subprocess.run([sys.executable, "-m", "generator.cli", "calibrate", "{FAST}", "--log", "-", "--catalog",
                       {str(catalog_copy)!r}], stdin=feeder.stdout, capture_output=True, text=True, timeout=120)
feeder.kill()
print(json.dumps({{"code": proc.returncode, "err": proc.stderr[-600:],
                  "kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}}))
"""
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] == 1, result
    assert "larger than 16,777,216 bytes" in result["err"] and "Traceback" not in result["err"]
    assert result["kib"] < 400 * 1024, result  # the CLI's peak (import of the catalog and the fit included)
    assert time.monotonic() - started < 120


def test_calibrate_note_source_device_printed_escaped(catalog_copy, tmp_path, capsys):
    log = tmp_path / "boot.log"
    log.write_text(VLLM.format(kv="2.97", tokens="88704"))
    evil = "x\x1b]0;owned\x07\n::error file=a::forged"
    assert main(["calibrate", FAST, "--log", str(log), "--catalog", str(catalog_copy), "--note", evil,
                 "--source", evil, "--device", evil]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.startswith("::error") for line in out.splitlines())
    assert "\\x1b]0;owned\\x07\\n::error" in out


def test_calibrate_log_loading_a_second_model_refused_naming_both(catalog_copy, tmp_path, capsys):
    log = tmp_path / "boot.log"
    other = "google/gemma-4-E4B-it"
    log.write_text(VLLM.format(kv="2.97", tokens="88704")
                   + VLLM.format(kv="40.0", tokens="900000").replace(MODEL, other))
    unchanged = _unchanged(catalog_copy)
    assert _calibrate(catalog_copy, log) == 1
    err = capsys.readouterr().err
    assert "loads two models" in err and MODEL in err and other in err and "(line 4)" in err
    assert unchanged()
