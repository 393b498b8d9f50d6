"""Attacks on `catalog smoke` by a hostile server on 127.0.0.1, and by a ledger that cannot be written.

Each test is one attack, named after what it tries; each asserts the message, the exit code, a bounded
time and that no traceback (and no secret) reaches the output or any file the run wrote.
"""

from __future__ import annotations

import json
import resource
import signal

import pytest
import yaml

from support.hostile_http import (APP, CONTEXT, HEALTHY, MODELS, Reply, catalog_copy, good_stream,
                          hostile_server, json_reply, no_traceback, response, run_catalog, snapshot, sse_reply,
                          written)


def smoke(cat, url: str, *extra: str, timeout: float = 5, **kw):
    return run_catalog("smoke", APP, "--endpoint", url, "--timeout", str(timeout), "--runs", "1",
                       "--catalog", str(cat), *extra, **kw)


def ledger_rows(cat) -> list[dict]:
    return yaml.safe_load((cat / "ledger" / f"{APP}.yaml").read_text())


# --- deadlines (failure 3) ----------------------------------------------------------------------------

HEALTH = response(200, b'{"status": "ok"}')


@pytest.mark.parametrize("what, drip", [
    ("status line", Reply(HEALTH, pace=1.0)),
    ("headers", Reply(b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"y" * 100 + b"\r\n\r\n", pace=1.0, quick=17)),
])
def test_smoke_trickled_headers_end_by_deadline(tmp_path, what, drip):
    """One byte a second of status line or headers: httpx's per-read timeout never fires; the total must."""
    cat = catalog_copy(tmp_path)
    with hostile_server({"/health": drip}) as server:
        ran = smoke(cat, server.url, timeout=5)
    no_traceback(ran)
    assert ran.seconds < 10, f"smoke --timeout 5 took {ran.seconds:.1f} s against a trickling {what}"
    assert ran.code == 1
    assert "ERROR" in ran.out  # nothing measured before the deadline: an error, not recorded
    assert "not ready before the timeout: GET /health: no complete answer before the deadline" in ran.out
    assert not (cat / "ledger").exists()


def test_smoke_trickled_model_list_body_ends_by_deadline(tmp_path):
    body = json.dumps({"data": [{"id": APP, "meta": {"n_ctx": CONTEXT}}], "pad": "x" * 200}).encode()
    slow = Reply(response(200, body), pace=0.25, chunk=1)
    cat = catalog_copy(tmp_path)
    with hostile_server({"/health": HEALTHY, "/v1/models": slow}) as server:
        ran = smoke(cat, server.url, timeout=3)
    no_traceback(ran)
    assert ran.seconds < 3 + 4  # the readiness probe is instant; the model list gets its 3 s
    assert ran.code == 1 and "GET /v1/models: no complete answer before the deadline" in ran.out


def test_smoke_silent_server_ends_by_deadline(tmp_path):
    cat = catalog_copy(tmp_path)
    with hostile_server({"/health": Reply(b"", hang=True)}) as server:
        ran = smoke(cat, server.url, timeout=2)
    no_traceback(ran)
    assert ran.seconds < 2 + 4 and ran.code == 1
    assert "not ready before the timeout: GET /health: timed out" in ran.out


# --- hostile JSON (failure 11) ---------------------------------------------------------------------------

def _hostile_models(tmp_path, models: Reply, stream: Reply | None = None):
    cat = catalog_copy(tmp_path)
    routes = {"/health": HEALTHY, "/v1/models": models, "/v1/chat/completions": stream or good_stream()}
    with hostile_server(routes) as server:
        ran = smoke(cat, server.url, "--json", timeout=3)
    no_traceback(ran)
    return ran, json.loads(ran.out)


def test_smoke_non_utf8_json_is_a_failure(tmp_path):
    ran, record = _hostile_models(tmp_path, Reply(response(200, b'{"data": [{"id": "\xff\xfe\xfa"}]}')))
    assert ran.code == 1 and record["verdict"] == "fail"
    assert any("GET /v1/models: the answer is not UTF-8 JSON" in r for r in record["reasons"]), record["reasons"]


def test_smoke_200000_deep_json_is_a_failure(tmp_path):
    ran, record = _hostile_models(tmp_path, Reply(response(200, b"[" * 200_000 + b"]" * 200_000)))
    assert ran.code == 1 and record["verdict"] == "fail"
    assert record["reasons"] == ["GET /v1/models: the answer's JSON is nested too deeply to be an "
                                 "OpenAI-compatible reply"]


def test_smoke_aliases_not_a_list_is_a_failure(tmp_path):
    models = json_reply({"data": [{"id": APP, "aliases": 5, "meta": {"n_ctx": CONTEXT}}]})
    ran, record = _hostile_models(tmp_path, models)
    assert ran.code == 1 and record["verdict"] == "fail"
    assert record["reasons"] == [f"GET /v1/models: `aliases` of model '{APP}' is a int, not a list"]


def test_smoke_choices_not_a_list_is_a_failure(tmp_path):
    stream = sse_reply(b'data: {"choices": 5}', b"data: [DONE]")
    ran, record = _hostile_models(tmp_path, MODELS, stream)
    assert ran.code == 1 and record["verdict"] == "fail"
    assert record["reasons"] == ["run 1: malformed SSE chunk: `choices` is a int, not a list"]


def test_smoke_impossible_numbers_give_no_invalid_record(tmp_path):
    """A 400-digit token count, NaN timings and more accepted than drafted tokens: no crash, no NaN in JSON."""
    chunk = {"choices": [{"index": 0, "delta": {"content": "four"}}], "usage": {"completion_tokens": 10 ** 400},
             "timings": {"predicted_n": 1e308, "draft_n": 3, "draft_n_accepted": 9}}
    stream = sse_reply(b"data: " + json.dumps(chunk).encode(), b'data: {"timings": {"draft_n": NaN}}',
                       b"data: [DONE]")
    ran, _ = _hostile_models(tmp_path, MODELS, stream)
    record = json.loads(ran.out, parse_constant=lambda c: pytest.fail(f"{c} in smoke --json"))
    assert record["runs"][0]["completion_tokens"] == 1  # the absurd counts are ignored; one piece streamed
    assert record["acceptance"] is None and record["runs"][0]["acceptance"] is None


# --- terminal (failures 13, 16) --------------------------------------------------------------------------

def test_smoke_escape_sequences_from_server_are_not_sent_to_the_terminal(tmp_path):
    stream = sse_reply(b"error: \x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\xc2\x9b31m")
    cat = catalog_copy(tmp_path)
    with hostile_server({"/health": HEALTHY, "/v1/models": MODELS, "/v1/chat/completions": stream}) as server:
        ran = smoke(cat, server.url, timeout=3)
    no_traceback(ran)
    assert ran.code == 1
    for raw in ("\x1b", "\x07", "\x9b", "\r"):
        assert raw not in ran.out + ran.err
    assert "the server streamed an error: \\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\r\\x9b31m" in ran.out
    assert "\x1b" not in (cat / "ledger" / f"{APP}.yaml").read_text()


def test_smoke_rich_markup_in_endpoint_path_is_shown_not_interpreted(tmp_path):
    cat = catalog_copy(tmp_path)
    with hostile_server() as server:  # every path is 404: not a server root
        ran = smoke(cat, server.url + "/[/bold] x[red]", timeout=3)
    no_traceback(ran)
    assert ran.code == 1
    assert "/[/bold] x[red]" in ran.out and "not an OpenAI-compatible server root" in ran.out


def test_smoke_rich_markup_in_server_text_is_shown_not_interpreted(tmp_path):
    models = json_reply({"data": [{"id": "[/bold] x", "aliases": ["[link=file:///etc/passwd]y[/link]"]}]})
    ran, record = _hostile_models(tmp_path, models)
    assert ran.code == 1
    cat = tmp_path / "catalog"
    with hostile_server({"/health": HEALTHY, "/v1/models": models, "/v1/chat/completions": good_stream()}) as srv:
        table = smoke(cat, srv.url, timeout=3)
    no_traceback(table)
    assert "[/bold] x" in table.out and "[link=file:///etc/passwd]y[/link]" in table.out


# --- the ledger (failure 14) ---------------------------------------------------------------------------

def _quick_fail(tmp_path):
    cat = catalog_copy(tmp_path)
    # the app's model list, and a 404 for the completion: a fail verdict in milliseconds (every path 404 is not the
    # app at all, never recorded: tests/test_smoke_http.py)
    return cat, hostile_server({"/health": HEALTHY, "/v1/models": MODELS})


def test_smoke_result_printed_when_a_file_blocks_the_ledger_folder(tmp_path):
    cat, server_cm = _quick_fail(tmp_path)
    (cat / "ledger").write_text("not a folder\n")
    with server_cm as server:
        ran = smoke(cat, server.url, timeout=3)
    no_traceback(ran)
    assert ran.code == 2
    assert "FAIL" in ran.out and "POST /v1/chat/completions: HTTP 404" in ran.out  # the result, printed first
    assert "the smoke result above is NOT recorded" in ran.err and "--no-record" in ran.err
    assert (cat / "ledger").read_text() == "not a folder\n"


def test_smoke_result_printed_when_the_ledger_file_is_a_folder(tmp_path):
    cat, server_cm = _quick_fail(tmp_path)
    (cat / "ledger" / f"{APP}.yaml").mkdir(parents=True)
    with server_cm as server:
        ran = smoke(cat, server.url, "--json", timeout=3)
    no_traceback(ran)
    assert ran.code == 2
    assert json.loads(ran.out)["verdict"] == "fail"  # the whole record is on stdout
    assert "the smoke result above is NOT recorded" in ran.err


def test_smoke_result_printed_when_the_disk_is_full(tmp_path):
    """RLIMIT_FSIZE makes every write past 64 bytes fail with EFBIG, as a full disk fails with ENOSPC."""
    cat, server_cm = _quick_fail(tmp_path)
    before = snapshot(tmp_path)

    def tiny_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    with server_cm as server:
        ran = smoke(cat, server.url, timeout=3, preexec=tiny_files, env={"PYTHONDONTWRITEBYTECODE": "1"})
    no_traceback(ran)
    assert ran.code == 2
    assert "FAIL" in ran.out and "the smoke result above is NOT recorded" in ran.err
    assert "File too large" in ran.err
    assert written(tmp_path, before) == []  # no half-written ledger, no temp file left behind
