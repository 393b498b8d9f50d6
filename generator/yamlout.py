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
from ruamel.yaml.emitter import Emitter
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.representer import RoundTripRepresenter


class _BraceEscaper:
    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, data: str) -> Any:
        return self._stream.write(data.replace("{", "\\x7B").replace("}", "\\x7D"))


class _InertEmitter(Emitter):
    def write_double_quoted(self, text: Any, split: Any = True) -> None:
        real = self.stream
        self.stream = _BraceEscaper(real)
        try:
            super().write_double_quoted(text, split)
        finally:
            self.stream = real


_YAML11 = VersionedResolver(version=(1, 1))


# Characters safe to emit raw in plain, single-quoted and block scalars. Anything else (C0/C1 controls,
# DEL, the YAML 1.1 line breaks NEL/LS/PS, \r, a BOM, non-characters) goes double-quoted, where the
# emitter escapes it: raw, a reader rejects it or turns it into a line break.
_SPECIAL = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _str(representer: RoundTripRepresenter, value: str) -> Any:
    if _SPECIAL.search(value):
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    # Go's YAML (Helm, Olares) reads YAML 1.1: `yes`, `on`, `1_000`, `1:20` must stay strings there too.
    if _YAML11.resolve(ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str" and "\n" not in value:
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    if "{{" in value or "}}" in value or "{%" in value:
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return representer.represent_str(value)


class _Representer(RoundTripRepresenter):
    pass


_Representer.add_representer(str, _str)


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Emitter = _InertEmitter
    yaml.Representer = _Representer
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    return yaml


_YAML = _yaml()


def dump(data: Any) -> str:
    buf = io.StringIO()
    _YAML.dump(data, buf)
    return buf.getvalue()


def load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)
