"""The YAML we emit reads back as the same strings in every reader that matters."""

from __future__ import annotations

import pytest
import yaml as pyyaml

from generator.yamlout import dump, load

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
