"""The one jinja2 environment: ChartSpec -> {relative path: text}, in memory.

Jinja uses `[[ ]]` / `[% %]` so it never collides with Helm's `{{ }}`; catalog values reach files only
through the `toyaml` filter (values.yaml, Chart.yaml, OlaresManifest.yaml, owners), never through the
Helm templates, so catalog text cannot become a template.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from . import yamlout
from .plan import CONTAINER, ChartSpec

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
ROOT_FILES = {"Chart.yaml": "Chart.yaml.j2", "OlaresManifest.yaml": "OlaresManifest.yaml.j2",
              "values.yaml": "values.yaml.j2", "owners": "owners.j2"}
_IDENT = re.compile(r"^[a-z][a-z0-9]*$")


def _helm_ident(value: str) -> str:
    if not _IDENT.match(value):
        raise ValueError(f"{value!r} cannot be a Go template field name")
    return value


def _gostr(value: str) -> str:
    """A Go/YAML double-quoted string literal."""
    return json.dumps(value, ensure_ascii=True)


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        loader=FileSystemLoader(str(TEMPLATES)),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
    )
    env.filters["toyaml"] = lambda v: yamlout.dump(v).rstrip("\n")
    env.filters["gostr"] = _gostr
    env.filters["helm_ident"] = _helm_ident
    return env


@lru_cache(maxsize=1)
def _helm_templates() -> tuple[str, ...]:
    folder = TEMPLATES / "chart" / "templates"
    return tuple(sorted(p.name for p in folder.glob("*.j2")))


def render(spec: ChartSpec) -> dict[str, str]:
    env = environment()
    context = {"name": spec.name, "chart": spec.chart, "manifest": spec.manifest, "values": spec.values,
               "owners": spec.owners, "container": CONTAINER}
    files = {out: env.get_template(src).render(context) for out, src in ROOT_FILES.items()}
    for name in _helm_templates():
        files[f"templates/{name[:-3]}"] = env.get_template(f"chart/templates/{name}").render(context)
    return dict(sorted(files.items()))
