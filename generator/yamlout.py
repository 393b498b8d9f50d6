"""Deterministic YAML emission that keeps catalog text inert.

Emission goes through PyYAML's libyaml emitter (fast, and a YAML 1.1 representer: `yes`, `on`, `1_000`,
`1:20` come out quoted, so Go's YAML 1.1 readers in Helm and Olares read them as strings too). Strings
holding `{{` or `}}` are written double-quoted with those braces escaped (`\\x7B`, `\\x7D`): the value reads
back unchanged, yet no file we emit contains Helm template syntax (Olares lint rejects `{{` in
OlaresManifest.yaml, and Helm never sees catalog text as a template). Reading uses ruamel.yaml.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from ruamel.yaml import YAML

# Characters safe to emit raw in plain, single-quoted and block scalars. Anything else (C0/C1 controls,
# DEL, the YAML 1.1 line breaks NEL/LS/PS, \r, a BOM, non-characters) goes double-quoted, where the
# emitter escapes it: raw, a reader rejects it or turns it into a line break.
_SPECIAL = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_STR = "tag:yaml.org,2002:str"
# What other readers take for a non-string but PyYAML's YAML 1.1 resolver does not: YAML 1.2 numbers
# (`0E0`, `1e5`, `0o17`; ruamel, Go's yaml.v3) and go-yaml v2's one-letter booleans (`y`, `N`: Helm reads
# values with it). Quoted too, so every reader gets the string back.
_AMBIGUOUS = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^0o[0-7]+$|^[-+]?\.(inf|Inf|INF)$"
                        r"|^\.(nan|NaN|NAN)$|^[yYnN]$")


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _SPECIAL.search(value) or "{{" in value or "}}" in value:
        return dumper.represent_scalar(_STR, value, style='"')
    if "\n" in value:
        return dumper.represent_scalar(_STR, value, style="|")
    if _AMBIGUOUS.match(value):
        return dumper.represent_scalar(_STR, value, style="'")
    return dumper.represent_scalar(_STR, value)


_Dumper.add_representer(str, _str)


def _escape_braces(text: str) -> str:
    """Every string holding `{{`/`}}` was emitted double-quoted, the only place those pairs can occur in
    our output (empty collections print as `{}`): escaping them there keeps the value and drops the syntax."""
    return text.replace("{{", "\\x7B\\x7B").replace("}}", "\\x7D\\x7D")


def dump(data: Any) -> str:
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=4096, allow_unicode=True,
                     default_flow_style=False)
    return _escape_braces(text)


_LOADER = YAML(typ="safe")


def load(text: str) -> Any:
    return _LOADER.load(text)
