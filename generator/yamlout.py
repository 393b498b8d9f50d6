"""Deterministic YAML emission (ruamel.yaml) that keeps catalog text inert.

Strings holding `{{` or `}}` are written double-quoted with every brace escaped (`\\x7B`, `\\x7D`): the
value reads back unchanged, yet no file we emit contains Helm template syntax (Olares lint rejects `{{`
in OlaresManifest.yaml, and Helm never sees catalog text as a template).
"""

from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.representer import SafeRepresenter


def _escape_braces(text: str) -> str:
    """Every string holding `{{`/`}}` was emitted double-quoted, the only place those pairs can occur in
    our output (empty collections print as `{}`): escaping them there keeps the value and drops the syntax."""
    return text.replace("{{", "\\x7B\\x7B").replace("}}", "\\x7D\\x7D")


_YAML11 = VersionedResolver(version=(1, 1))


# Characters safe to emit raw in plain, single-quoted and block scalars. Anything else (C0/C1 controls,
# DEL, the YAML 1.1 line breaks NEL/LS/PS, \r, a BOM, non-characters) goes double-quoted, where the
# emitter escapes it: raw, a reader rejects it or turns it into a line break.
_SPECIAL = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _str(representer: SafeRepresenter, value: str) -> Any:
    if _SPECIAL.search(value):
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    # Go's YAML (Helm, Olares) reads YAML 1.1: `yes`, `on`, `1_000`, `1:20` must stay strings there too.
    if _YAML11.resolve(ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str" and "\n" not in value:
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    if "{{" in value or "}}" in value:
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return representer.represent_str(value)


class _Representer(SafeRepresenter):
    pass


_Representer.add_representer(str, _str)


def _yaml() -> YAML:
    # typ="safe" with ruamel.yaml.clib emits through libyaml (C): ~4x faster than the pure emitter.
    yaml = YAML(typ="safe", pure=False)
    yaml.Representer = _Representer
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # keep the order the plan chose
    yaml.width = 4096
    yaml.allow_unicode = True
    return yaml


_YAML = _yaml()


def dump(data: Any) -> str:
    buf = io.StringIO()
    _YAML.dump(data, buf)
    return _escape_braces(buf.getvalue())


def load(text: str) -> Any:
    return _LOADER.load(text)


_LOADER = YAML(typ="safe")
