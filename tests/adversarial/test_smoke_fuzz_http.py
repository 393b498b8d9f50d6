"""Fuzz `catalog smoke` with hostile HTTP answers: the tool never crashes with a traceback, never runs past
its deadlines, never writes outside the ledger, and what it prints and records stays well-formed.

Hypothesis turns one or two of the four paths smoke calls (/health, /v1/models, /props,
/v1/chat/completions) of a well-behaved server hostile (so every stage is reached): random
bytes instead of HTTP, random status lines and headers, a lying Content-Length, broken chunked framing,
random JSON trees over the keys smoke reads (with NaN, huge numbers, wrong types), JSON nested up to
300 000 deep, values of megabytes, random SSE streams; sent at once, trickled, or followed by silence.
The server is tests/support/hostile_http.py on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from generator.smoke import ledger
from support.hostile_http import (ALIAS, APP, CONTEXT, HEALTHY, MODELS, Reply, catalog_copy, good_stream, hostile_server,
                          response, snapshot, written)

TIMEOUT = 1.5  # --timeout: readiness, the identity and model check and the one run each get this much
BOUND = 3 * TIMEOUT + 4.0  # three bounded phases, plus slack for a loaded 2-core machine
KEYS = ["data", "id", "aliases", "meta", "n_ctx", "max_model_len", "choices", "delta", "content", "reasoning_content",
        "reasoning", "usage", "completion_tokens", "timings", "draft_n", "draft_n_accepted", "predicted_n", "error",
        "status", "default_generation_settings", "object", "index", "message"]
PATHS = ["/health", "/v1/models", "/props", "/v1/chat/completions"]

leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
                   st.sampled_from([ALIAS, CONTEXT, "[/bold]", "\x1b[2J", "\ud800", "Bearer abcdefgh1234"]))
trees = st.recursive(leaves, lambda kids: st.one_of(
    st.lists(kids, max_size=5), st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), kids,
                                                max_size=6)), max_leaves=25)


def _dump(tree) -> bytes:
    return json.dumps(tree, allow_nan=True).encode("utf-8", "surrogatepass")


deep = st.integers(min_value=1, max_value=300_000).flatmap(lambda n: st.sampled_from([
    b"[" * n + b"]" * n, b'{"data":' * n + b"1" + b"}" * n, b"[" * n]))
huge = st.sampled_from([b'{"data": [{"id": "' + b"x" * 2_000_000 + b'"}]}',
                        b'{"data": [{"id": "qwenlab", "max_model_len": 1' + b"0" * 5000 + b"}]}",
                        b'{"data": [{"id": "qwenlab", "meta": {"n_ctx": 1' + b"0" * 400 + b"}}]}"])
cards = st.fixed_dictionaries({"data": st.lists(st.fixed_dictionaries(
    {"id": st.one_of(st.just(ALIAS), trees)},
    optional={"aliases": trees, "meta": trees, "max_model_len": trees}), max_size=3)})
sse_lines = st.lists(st.one_of(
    trees.map(lambda t: b"data: " + _dump(t)),
    st.fixed_dictionaries({"choices": trees}, optional={"usage": trees, "timings": trees, "error": trees})
      .map(lambda t: b"data: " + _dump(t)),
    st.just(b"data: [DONE]"), st.just(b""), st.binary(max_size=60),
    st.text(max_size=40).map(lambda t: b"error: " + t.encode("utf-8", "surrogatepass"))), max_size=12)
json_bodies = st.one_of(st.binary(max_size=400), trees.map(_dump), cards.map(_dump), deep, huge)
sse_bodies = st.one_of(sse_lines.map(lambda lines: b"\n".join(lines) + b"\n"), st.binary(max_size=400), deep)
header_lists = st.lists(st.tuples(
    st.sampled_from(["Content-Type", "Transfer-Encoding", "Content-Encoding", "X-Junk", "Content-Length", "Location"]),
    st.sampled_from(["application/json", "text/event-stream", "chunked", "gzip", "-1", "99999999", "x" * 3000,
                     "\u00ff\u00fe", ""])), max_size=4)
FRAMES = ["plain"] * 6 + ["headers", "lying-length", "bad-chunked", "garbage", "no-length"]


@st.composite
def framed(draw, body: bytes) -> bytes:
    kind = draw(st.sampled_from(FRAMES))
    status = draw(st.one_of(st.just(200), st.sampled_from([404, 500, 503, 401, 302, 204]),
                            st.integers(min_value=0, max_value=1000)))
    if kind == "garbage":
        return draw(st.binary(min_size=1, max_size=300))
    if kind == "headers":
        return response(status, body, headers=draw(header_lists), length=draw(st.booleans()))
    if kind == "lying-length":
        return response(status, b"", headers=[("Content-Length", str(len(body) + draw(st.integers(1, 10 ** 6))))],
                        length=False) + body
    if kind == "bad-chunked":
        return response(status, b"zz\r\n" + body, headers=[("Transfer-Encoding", "chunked")], length=False)
    return response(status, body, length=kind == "plain")


@st.composite
def hostile(draw, path: str) -> Reply:
    body = draw(sse_bodies if path == "/v1/chat/completions" else json_bodies)
    data = draw(framed(body))
    mode = draw(st.sampled_from(["at once"] * 6 + ["trickle", "then silence"]))
    if mode == "trickle":
        return Reply(data, pace=0.05, chunk=draw(st.integers(min_value=1, max_value=4096)))
    return Reply(data, hang=mode == "then silence")


@st.composite
def scripts(draw) -> dict[str, Reply]:
    """A well-behaved server with one or two paths turned hostile (so every stage of smoke is reached)."""
    script = {"/health": HEALTHY, "/v1/models": MODELS, "/props": Reply(response(404)),
              "/v1/chat/completions": good_stream()}
    for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=2, unique=True)):
        script[path] = draw(hostile(path))
    return script


def _one(path: str, data: bytes) -> dict[str, Reply]:
    return {"/health": HEALTHY, "/v1/models": MODELS, "/props": Reply(response(404)),
            "/v1/chat/completions": good_stream(), path: Reply(data)}


# The attacks that crashed smoke before, always tried first (hypothesis runs @example inputs every time).
KNOWN = [
    _one("/v1/models", response(200, b'{"data": [{"id": "\xff\xfe"}]}')),  # not UTF-8: UnicodeDecodeError has no .msg
    _one("/v1/models", response(200, b"[" * 200_000 + b"]" * 200_000)),  # RecursionError
    _one("/v1/models", response(200, _dump({"data": [{"id": ALIAS, "aliases": 5}]}))),  # TypeError
    _one("/v1/models", response(200, _dump({"data": [{"id": [1], "aliases": [{}]}]}))),  # unhashable
    _one("/v1/chat/completions", response(200, b'data: {"choices": 5}\n', length=False)),  # TypeError
    _one("/v1/chat/completions", response(200, b'data: {"choices": [], "usage": {"completion_tokens": 1'
                                               + b"0" * 400 + b'}}\ndata: {"choices": [{"delta": {"content": "x"}}]}'
                                               + b"\ndata: [DONE]\n", length=False)),  # OverflowError
    _one("/v1/models", response(200, b"\x00")),  # UTF-16 guessed, then not decodable
]


def _smoke(argv: list[str]) -> tuple[int, str, str]:
    from generator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _strict_json(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in smoke --json")

    return json.loads(text, parse_constant=refuse)


def test_smoke_survives_hostile_http_answers(tmp_path: Path) -> None:
    cat = catalog_copy(tmp_path)
    ledger_file = cat / "ledger" / f"{APP}.yaml"
    before = snapshot(tmp_path)
    slowest = [0.0]
    with hostile_server() as server:

        @settings(max_examples=40, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(script=scripts(), as_json=st.booleans())
        @example(script=KNOWN[0], as_json=True)
        @example(script=KNOWN[1], as_json=False)
        @example(script=KNOWN[2], as_json=True)
        @example(script=KNOWN[3], as_json=False)
        @example(script=KNOWN[4], as_json=True)
        @example(script=KNOWN[5], as_json=False)
        @example(script=KNOWN[6], as_json=True)
        def attack(script: dict[str, Reply], as_json: bool) -> None:
            server.routes = script
            argv = ["smoke", APP, "--endpoint", server.url, "--timeout", str(TIMEOUT), "--runs", "1",
                    "--catalog", str(cat), *(["--json"] if as_json else [])]
            started = time.monotonic()
            code, out, err = _smoke(argv)
            took = time.monotonic() - started
            slowest[0] = max(slowest[0], took)
            assert "Traceback" not in err and "internal error" not in err, err
            assert code in (0, 1), (code, out, err)
            assert took < BOUND, f"smoke took {took:.1f} s (bound {BOUND} s)"
            assert "\x1b" not in out + err
            if as_json:
                record = _strict_json(out)
                assert record["verdict"] in ("pass", "regression", "fail", "error")
                assert all(len(reason) <= 510 for reason in record["reasons"])
            else:
                assert ("PASS" in out) == (code == 0)

        attack()
    rows = ledger.history(cat, APP)  # everything recorded reads back as valid ledger rows
    assert rows and all(r.verdict in ("pass", "regression", "fail") for r in rows)
    assert set(written(tmp_path, before)) <= {ledger_file}
    assert slowest[0] < BOUND
