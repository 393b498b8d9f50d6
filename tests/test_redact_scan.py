"""The literal-secret scan's shortcuts (generator/core/redact.py): the one-pass pre-check of a catalog file and the
URL-password test read tokens differently from the full scan, and must find exactly what it finds.

Real parts: the redactor's own patterns on generated text (hypothesis), with the marks each format needs.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.core import redact

PIECES = ["hf_", "ghp_", "sk-", "eyJ", "AKIA", "xox", "b-", "://", "https://", "@", ":", "?", "&", "=", "token",
          "key", "pass", "***", "sha256:", "/", ".", "-", "_", " ", "\n", "'", '"', "<", "`", "\t", "admin", "host",
          "example.com", "abcdefghijklmnopqrstuvwxyz0123", "ABCDEFGHIJKLMNOP", "0123456789"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
KEYS = st.sampled_from(["name", "args", "env", "HF_TOKEN", "api_key", "max_tokens", "url", "description"])
DATA = st.recursive(TEXT | st.integers() | st.booleans(),
                    lambda inner: st.lists(inner, max_size=4).map(tuple) | st.dictionaries(KEYS, inner, max_size=4),
                    max_leaves=12)


def _url_password_by_bounds(text: str) -> bool:
    """The URL-password test as the full redactor bounds tokens (`_tokens`: positions in the whole text)."""
    for start, end in redact._tokens(text):
        for first, at in redact._userinfo_spans(text, start, end):
            _, sep, password = text[first:at].partition(":")
            if sep and password and password != redact.MASK:
                return True
    return False


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_the_url_password_test_reads_the_same_tokens(text):
    assert redact._url_password(text) == _url_password_by_bounds(text)


@settings(max_examples=400, deadline=None)
@given(DATA)
def test_the_pre_check_clears_only_data_the_full_scan_finds_nothing_in(data):
    named, strings = redact._suspect(data)
    full = redact._secrets_at(data, ())
    if not (named or strings):
        assert full == []
    if not strings:  # no string holds a secret of its own: only keys and flags can be found
        assert redact._secrets_at(data, (), strings=False) == full
    assert redact.secrets_in(data) == full


def test_each_kind_of_secret_passes_the_pre_check():
    for data in ({"a": "x https://admin:pw@example.com/y"}, {"a": ("see hf_" + "a" * 24,)},
                 {"b": "https://host/x.gguf?token=abc"}, {"env": {"HF_TOKEN": "v"}}, ("--api-key", "v")):
        assert any(redact._suspect(data)) and redact._secrets_at(data, ())
    assert redact._suspect({"a": "x https://example.com/y and mail@example.com", "b": "task-force ?a=b"}) \
        == (False, False)
    assert redact._suspect({"HF_TOKEN": "", "b": "https://admin:pw@example.com"}) == (True, True)
