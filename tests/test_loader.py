"""Catalog YAML is read by libyaml with YAML 1.2's core schema: values are what ruamel.yaml (the YAML 1.2
reader) loads, every key and item keeps its line, and the few YAML features a catalog must not use fail at
their line."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.core.errors import CatalogError
from generator.yamlio.loader import read_document

PLAIN = ["yes", "No", "on", "OFF", "y", "true", "False", "null", "~", "", "1_000", "0x1F", "0o17", "017", "0b101",
         "1e5", "1.5", ".5", "-.inf", ".NaN", "2026-01-02", "2024-02-29", "2026-1-2", "2026-01-02 10:00:00", "12:30", "1:20", "+7", "-0",
         "8000", "24300m", "v1.0", "0.97"]


def _doc(tmp_path: Path, text: str):
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    return read_document(path, "doc.yaml")


def _same(a, b) -> bool:
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("text", PLAIN)
def test_plain_scalars_load_as_ruamel_yaml_1_2_loads_them(tmp_path, text):
    source = f"k: {text}\n"
    expected = YAML(typ="safe", pure=True).load(source)["k"]
    if hasattr(expected, "date") and not isinstance(expected, str) and type(expected).__name__ == "datetime" \
            and (expected.hour, expected.minute, expected.second) == (0, 0, 0):
        expected = expected.date()  # the catalog reads midnight timestamps as dates
    assert _same(_doc(tmp_path, source).data["k"], expected), (text, expected)


@pytest.mark.parametrize("text", ["2026-02-30", "2026-13-01", "0000-01-01"])
def test_an_impossible_date_is_refused_at_its_line_as_the_constructor_refuses_it(tmp_path, text):
    with pytest.raises(CatalogError) as err:
        _doc(tmp_path, f"a: 1\nk: {text}\n")
    with pytest.raises(ValueError) as constructor:
        YAML(typ="safe", pure=True).load(f"k: {text}\n")
    assert f"doc.yaml:2: YAML syntax error: {text!r} is not a valid !!timestamp ({constructor.value})" in str(err.value)


def test_explicit_tags_and_flow_collections(tmp_path):
    doc = _doc(tmp_path, "a: !!str 12\nb: !!int '7'\nc: {d: [1, 'x', NO]}\n")
    assert doc.data == {"a": "12", "b": 7, "c": {"d": (1, "x", "NO")}}


def test_a_lone_equals_sign_is_a_string(tmp_path):
    # YAML 1.1's `value` type is not in 1.2's core schema (and ruamel.yaml resolves it but cannot build it)
    assert _doc(tmp_path, "k: =\n").data == {"k": "="}


def test_every_key_and_item_keeps_its_line(tmp_path):
    doc = _doc(tmp_path, "# comment\nname: x\nargs:\n  - --a\n  - --b\nnested:\n  key: 1\n")
    assert doc.line_of(("name",)) == 2
    assert doc.line_of(("args", 1)) == 5
    assert doc.line_of(("nested", "key")) == 7
    assert doc.line_of(("nested", "missing")) == 6  # nearest ancestor


def test_documents_do_not_share_data(tmp_path):
    first = _doc(tmp_path, "a: {b: 1}\n")
    first.data["a"]["b"] = 2
    assert _doc(tmp_path, "a: {b: 1}\n").data == {"a": {"b": 1}}  # same text, parsed once, copied out


@pytest.mark.parametrize("text, line, words", [
    ("a: 1\n<<: {b: 2}\n", 2, "merge key"),
    ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'"),
    ("a: !custom x\n", 1, "could not determine a constructor"),
    ("a: [1,\n", 2, "YAML syntax error"),
    ("a: !!int x\n", 1, "'x' is not a valid !!int"),
])
def test_unsupported_or_broken_yaml_fails_at_its_line(tmp_path, text, line, words):
    with pytest.raises(CatalogError) as err:
        _doc(tmp_path, text)
    message = str(err.value)
    assert message.startswith(f"doc.yaml:{line}: ") and words in message, message


def test_loader_and_emitter_keep_their_own_resolver_memo(tmp_path):
    # both memoise scalar tags, but YAML 1.2 (catalog) and 1.1 (emitter) disagree on `yes`: the emitter
    # must still quote it after the loader has resolved it as a string
    from generator.yamlio.yamlout import dump

    assert _doc(tmp_path, "k: yes\n").data == {"k": "yes"}
    assert dump({"k": "yes"}) == "k: 'yes'\n"


@pytest.mark.parametrize("text", ["0.9", "-1.5", "1.", ".5", "-0.0", "10.25", "1_0.5", "1e5", "1.5e3", "+1.5",
                                  ".inf", "-.inf", ".nan", "true", "false", "True", "FALSE", "0x1f", "0o17", "-.5"])
def test_the_common_scalars_load_as_ruamel_constructs_them(text: str) -> None:
    """The loader's quick paths for plain decimals and `true`/`false` give what ruamel's YAML 1.2 constructor does."""
    from ruamel.yaml import YAML

    from generator.yamlio.loader import parse_document

    ours = parse_document(f"v: {text}\n".encode(), "t.yaml", None).data["v"]
    theirs = YAML(typ="safe").load(f"v: {text}\n")["v"]
    assert type(ours) is type(theirs)
    assert ours == theirs or (ours != ours and theirs != theirs)  # NaN
    assert str(ours) == str(theirs)


def test_a_file_is_read_whole_by_its_size_and_refused_past_the_cap(tmp_path):
    """read_bytes reads what the file holds (not a cap-sized buffer) and still refuses a file past the cap."""
    from generator.core.errors import InputError
    from generator.yamlio.loader import read_bytes

    path = tmp_path / "app.yaml"
    path.write_bytes(b"name: x\n" * 100)
    assert read_bytes(path, "app.yaml", max_bytes=800) == b"name: x\n" * 100  # exactly the cap
    assert read_bytes(path, "app.yaml") == b"name: x\n" * 100
    with pytest.raises(InputError, match="larger than 799 bytes"):
        read_bytes(path, "app.yaml", max_bytes=799)
