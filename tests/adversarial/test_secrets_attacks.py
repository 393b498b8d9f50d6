"""Attacks that try to get a credential printed or written: in a publish target URL, in a smoke endpoint
URL, in a header a server reflects back, in an error message. One test per attack; each scans stdout,
stderr and every file the run wrote.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest

from support.bump import run_cli
from generator.core.redact import MASK, credentials, redact, secret_forms, split_userinfo
from generator.publish.secrets import Redactor, safe_url
from support.hostile_http import (ALIAS, APP, CONTEXT, HEALTHY, MODELS, REFLECT, Reply, assert_nowhere, catalog_copy,
                          hostile_server, json_reply, no_traceback, run_catalog, snapshot, written)
from support.publish import free_port

SLASHED = "tok/EN+S3CRET="  # a password holding `/`, `+` and `=` (base64 alphabet), as CI tokens do
B64 = base64.b64encode(f"bot:{SLASHED}".encode()).decode()
LEAKS = ["S3CRET", "EN+S3CRET", B64]


# --- the redactor itself -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, secret", [
    ("oci://ci:S3CRET@host/charts/x", "S3CRET"),
    (f"git:http://bot:{SLASHED}@host/m.git#main", "S3CRET"),
    ("push bot:pw-S3CRET@host:5000/x failed", "S3CRET"),
    ("http://bot:p@ss:w/rd-S3CRET@127.0.0.1:8000/v1", "S3CRET"),  # `@`, `:` and `/` in the password
    ("fatal: unable to access 'https://u:S3CRET@h/x.git/': 403", "S3CRET"),
    ("http://bot:S3CRET@[::1]:9000", "S3CRET"),
    ("http://u:S3CRET@127.0.0.1:notaport/x", "S3CRET"),
    ("Authorization: Bearer S3CRETS3CRET", "S3CRET"),
    ('{"headers": {"authorization": "Basic Ym90OlMzQ1JFVA=="}}', "Ym90OlMzQ1JFVA=="),
    ("proxy said: basic Ym90OlMzQ1JFVA==", "Ym90OlMzQ1JFVA=="),
    ('{"token": "S3CRET", "n": 1}', "S3CRET"),
    ("access_token=S3CRET&x=1", "S3CRET"),
    ("client_secret: S3CRET", "S3CRET"),
    ("https://h/x?sig=S3CRET&se=2030", "S3CRET"),
    ("https://s3/x?X-Amz-Signature=S3CRET", "S3CRET"),
    ("token ghp_" + "S3CRET" * 6, "S3CRET"),
    ("github_pat_11AAAAAAA0" + "S3CRET" * 5, "S3CRET"),
    ("HF hf_" + "S3CRET" * 6, "S3CRET"),
])
def test_redactor_masks_every_credential_form(text, secret):
    masked = redact(text)
    assert secret not in masked and MASK in masked


@pytest.mark.parametrize("text", [
    "oci://127.0.0.1:5000/charts/app@sha256:0123abcd",  # an OCI digest is not userinfo
    "ghcr.io/org/img:v1@sha256:abc123",
    "git@github.com:owner/repo.git",  # scp-like git URL: a user, no password
    "mail alice@example.com",
    "the basic idea, a bearer of news",
    '{"max_tokens": 800, "completion_tokens": 12, "tokens_per_s": 70.1}',
    "http://127.0.0.1:8000/v1",
])
def test_redactor_keeps_ordinary_text(text):
    assert redact(text) == text


def test_redactor_masks_known_secrets_in_every_encoding():
    secret = "p@ss/w0rd+x"
    hidden = Redactor()
    hidden.add(secret, "alice")
    text = " ".join(secret_forms([secret], "alice"))
    assert hidden(text).replace(MASK, "").strip() == ""


@pytest.mark.parametrize("hostile", ["a." * 100_000, "x://" * 50_000, "a-" * 100_000 + ":", "http://a:b@" * 20_000,
                                     "@a:" * 60_000, "a:" + "@a/" * 100_000, '"token": "' + "x" * 200_000])
def test_redactor_time_is_linear_on_hostile_text(hostile):
    started = time.monotonic()
    redact(hostile)
    assert time.monotonic() - started < 3.0


def test_userinfo_ends_at_the_last_at_before_the_host():
    assert split_userinfo(f"http://bot:{SLASHED}@127.0.0.1:8000/v1") == ("http://127.0.0.1:8000/v1", f"bot:{SLASHED}")
    assert credentials("http://bot:p%40ss@h/") == ("http://h/", "bot", "p@ss")
    assert safe_url(f"http://bot:{SLASHED}@host/m.git") == "http://host/m.git"
    assert split_userinfo("git@github.com:o/r.git") == ("git@github.com:o/r.git", None)


# --- publish (failure 2) -----------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["--json", None])
def test_publish_target_password_not_printed(capsys, recorded: Path, tmp_path: Path, form):
    """oci://user:password@host: the target column, the detail, the progress line and the errors."""
    root = recorded.parent
    before = snapshot(root)
    target = f"oci://ci:S3CRET@127.0.0.1:{free_port()}/charts"
    started = time.monotonic()
    code, out, err = run_cli(capsys, "publish", "--to", target, "--plain-http", "--catalog", recorded,
                             *([form] if form else []))
    assert time.monotonic() - started < 60
    assert code == 1, out + err
    assert_nowhere(["S3CRET"], out, err, files=written(root, before))
    assert "oci://***@127.0.0.1:" in out
    if form:
        rows = json.loads(out)
        assert rows and {r["action"] for r in rows} == {"failed"}


def test_publish_git_target_password_with_slash_not_printed(capsys, recorded: Path):
    """git:http://bot:tok/EN+S3CRET=@host: a `/` in the password used to defeat the redactor."""
    root = recorded.parent
    before = snapshot(root)
    target = f"git:http://bot:{SLASHED}@127.0.0.1:{free_port()}/m.git"
    code, out, err = run_cli(capsys, "publish", "--to", target, "--catalog", recorded, "--json")
    assert code == 1, out + err
    assert_nowhere(LEAKS, out, err, files=written(root, before))
    assert {r["target"] for r in json.loads(out)} == {f"git:http://127.0.0.1:{target.rsplit(':', 1)[1]}#main"}


def test_publish_bad_target_form_error_not_printed(capsys, recorded: Path):
    code, out, err = run_cli(capsys, "publish", "--to", f"ftp://bot:{SLASHED}@host/x", "--catalog", recorded)
    assert code == 2 and "expected git:PATH_OR_URL" in err
    assert_nowhere(LEAKS, out, err)


# --- smoke (failures 2 and 17) ----------------------------------------------------------------------

def test_smoke_endpoint_password_with_slash_not_printed(tmp_path):
    """Used to crash with "Port could not be cast to integer value as 'tok'" (printing part of it)."""
    cat = catalog_copy(tmp_path)
    before = snapshot(tmp_path)
    with hostile_server({"/health": HEALTHY, "/v1/models": MODELS}) as server:
        endpoint = server.url.replace("http://", f"http://bot:{SLASHED}@")
        ran = run_catalog("smoke", APP, "--endpoint", endpoint, "--timeout", "3", "--runs", "1",
                          "--catalog", str(cat))
    no_traceback(ran)
    assert ran.code == 1
    assert f"@ {server.url}" in ran.out  # the endpoint, shown without its credentials
    assert any(f"Basic {B64}".encode() in r for r in server.requests), "the credentials were not sent as Basic auth"
    assert_nowhere(LEAKS, ran.out, ran.err, files=written(tmp_path, before))


@pytest.mark.parametrize("form", ["--json", None])
def test_smoke_reflected_authorization_not_printed_or_recorded(tmp_path, form):
    """A server (or a debugging proxy) that echoes the request headers in its error body."""
    cat = catalog_copy(tmp_path)
    before = snapshot(tmp_path)
    token_body = b' {"token": "hf_' + b"S3CRET" * 6 + b'"}'
    routes = {"/health": HEALTHY, "/v1/models": json_reply({"data": [{"id": ALIAS, "meta": {"n_ctx": CONTEXT}}]}),
              "/v1/chat/completions": Reply(b"echo: " + REFLECT + token_body)}
    with hostile_server(routes) as server:
        endpoint = server.url.replace("http://", f"http://bot:{SLASHED}@")
        ran = run_catalog("smoke", APP, "--endpoint", endpoint, "--timeout", "3", "--runs", "1",
                          "--catalog", str(cat), *([form] if form else []))
    no_traceback(ran)
    assert ran.code == 1
    assert "HTTP 500: echo: POST /v1/chat/completions" in ran.out and "Basic ***" in ran.out
    files = written(tmp_path, before)
    assert cat / "ledger" / f"{APP}.yaml" in files
    assert_nowhere(LEAKS, ran.out, ran.err, files=files)


def test_cli_error_for_a_bad_endpoint_does_not_print_its_password(tmp_path):
    cat = catalog_copy(tmp_path)
    ran = run_catalog("smoke", APP, "--endpoint", f"http://bot:{SLASHED}@127.0.0.1:notaport", "--catalog", str(cat))
    no_traceback(ran)
    assert ran.code == 2 and "is not a URL this tool can call" in ran.err
    assert_nowhere(LEAKS, ran.out, ran.err)
