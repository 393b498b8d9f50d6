"""Issue 40 cause 9 (smoke): nothing is recorded unless the endpoint is an OpenAI-compatible LLM server. Whatever
else answers 200 on every path (an HTML page, plain text, JSON that is no model list, an empty body) is "not the
app": an error, exit 1, no ledger row. A real socket server on 127.0.0.1 (tests/support/hostile_http.py)."""

from __future__ import annotations

import json

import pytest

from support.hostile_http import Reply, catalog_copy, hostile_server, no_traceback, response, run_catalog, APP

PAGES = {
    "html": response(200, b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>",
                     headers=[("Content-Type", "text/html")]),
    "text": response(200, b"OK", headers=[("Content-Type", "text/plain")]),
    "empty": response(200, b""),
    "json object": response(200, json.dumps({"status": "ok", "models": ["x"]}).encode()),
    "json list": response(200, b"[]"),
    "html as json": response(200, b"<html>not json</html>"),
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_an_endpoint_answering_200_everywhere_is_not_recorded(tmp_path, page):
    cat = catalog_copy(tmp_path)
    with hostile_server() as server:
        server.default = Reply(PAGES[page])
        ran = run_catalog("smoke", APP, "--endpoint", server.url, "--timeout", "5", "--runs", "1",
                          "--catalog", str(cat))
    no_traceback(ran)
    assert ran.code == 1, ran.out + ran.err
    assert "not an OpenAI-compatible server" in ran.out + ran.err
    assert not (cat / "ledger").exists(), "a ledger row was written for something that is not an LLM server"
