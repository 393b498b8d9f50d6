"""The YAML we emit reads back as the same strings in every reader that matters."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
import yaml as pyyaml

from generator.yamlio.yamlout import dump, load

AMBIGUOUS = ["yes", "No", "on", "OFF", "y", "N", "true", "null", "~", "1_000", "1:20", "0x1F", "0o17", "0E0", "1e5",
             ".5e3", ".inf", "-.Inf", ".NaN", "2026-01-01", "0.97", "8000", "", "- dash", "key: value", "#hash"]


@pytest.mark.parametrize("text", AMBIGUOUS)
def test_ambiguous_strings_stay_strings_for_yaml_1_1_and_1_2_readers(text):
    out = dump({"k": text})
    assert load(out) == {"k": text}  # YAML 1.2 (ruamel)
    assert pyyaml.safe_load(out) == {"k": text}  # YAML 1.1 (PyYAML, as Go's v2 reader resolves)


def test_template_syntax_is_escaped_but_reads_back():
    out = dump({"title": "a {{ .Values.x }} b", "n": "{{{{"})
    assert "{{" not in out and "}}" not in out
    assert load(out) == {"title": "a {{ .Values.x }} b", "n": "{{{{"}
    assert pyyaml.safe_load(out) == load(out)


SCALARS = st.one_of(st.text(max_size=12), st.sampled_from(AMBIGUOUS), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False))
TREES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(TREES)
@example("._")  # ruamel's YAML 1.2 float pattern takes `_` between digits; once emitted unquoted, it crashed ruamel
@example({"k": "1_000"})
def test_any_plain_data_reads_back_unchanged_in_both_readers(data):
    """dump builds the node graph itself (no PyYAML representer): whatever the data, both readers agree."""
    out = dump(data)
    assert load(out) == data
    assert pyyaml.safe_load(out) == data
    assert dump(data) == out


def test_emission_matches_pyyaml_safe_dumper_where_no_quoting_rule_applies():
    data = {"name": "app", "args": ["--port", 8080, True, None, 1.5], "nested": {"k": [], "m": {}}, "count": -3}
    assert dump(data) == pyyaml.safe_dump(data, sort_keys=False, width=4096, allow_unicode=True,
                                          default_flow_style=False)


def test_repeated_values_are_never_turned_into_anchors():
    shared = {"a": "x"}
    out = dump({"one": shared, "two": shared, "list": [shared, shared]})
    assert "&" not in out and "*" not in out


# What the layout of generator/yamlio/yamlout.py `_block` meets: strings that need each scalar style (plain, quoted,
# escaped, literal blocks with and without a final newline, leading spaces, template braces), keys libyaml quotes,
# empty collections, mappings in sequences; the result must be libyaml's own, byte for byte.
LAYOUT_TEXT = st.one_of(st.text(max_size=12), st.sampled_from(AMBIGUOUS),
                        st.sampled_from(["a\nb", "a\nb\n", "a\n\nb\n", "  lead\nx", "\nx", "x\n\n", "tail \nx",
                                         "{{ x }}\ny", "é — ü\nz", "\u2028", "\t", "'q'", '"dq"', "- item",
                                         "a: b", "#c", "x" * 5000, ("word " * 900) + "\nend"]),
                        st.text(alphabet=st.sampled_from("ab \n:-#'\"{}é\t"), max_size=16))
LAYOUT_SCALARS = st.one_of(LAYOUT_TEXT, st.integers(), st.booleans(), st.none())
LAYOUT_TREES = st.recursive(LAYOUT_SCALARS, lambda inner: st.lists(inner, max_size=4)
                            | st.dictionaries(LAYOUT_TEXT, inner, max_size=4), max_leaves=24)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(LAYOUT_TEXT, LAYOUT_TREES, min_size=1, max_size=5))
@example({"k": {"a": ["x\ny", {"b": "c\nd\n"}], "e": {}}, "l": [[], {}, "- x", {"m": ["n", "o\n"]}]})
@example({"spec": {"fullDescription": "one\ntwo\n", "note": "  indented\nline"}})
def test_the_layout_is_libyamls_byte_for_byte(data):
    from generator.yamlio import yamlout

    laid = yamlout._block(data)
    if laid is not None:
        assert laid == yamlout._libyaml(data)
    assert dump(data) == yamlout._escape_braces(yamlout._libyaml(data))


def test_the_layout_covers_charts():
    """A chart's documents are laid out without libyaml's help for the whole document (the speed of render)."""
    from generator.yamlio import yamlout

    data = {"name": "app", "spec": {"fullDescription": "a\nb\n", "locale": ["en-US"], "license": [{"text": "MIT"}]},
            "envs": [], "options": {}}
    assert yamlout._block(data) == yamlout._libyaml(data)
