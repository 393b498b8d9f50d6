"""The one jinja2 environment: ChartSpec -> {relative path: text}, in memory.

Jinja uses `[[ ]]` / `[% %]` so it never collides with Helm's `{{ }}`; catalog values reach files only
through the `toyaml` filter (values.yaml, Chart.yaml, OlaresManifest.yaml, owners), never through the
Helm templates, so catalog text cannot become a template.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from jinja2 import FileSystemLoader, StrictUndefined, Template
from jinja2.sandbox import ImmutableSandboxedEnvironment

from generator.core.locate import templates_dir
from generator.yamlio import yamlout
from generator.chart.carried import block
from generator.chart.plan import CONTAINER, ChartSpec
from generator.chart.shared import API_KEY_ENV, CONTEXT_ENV, OUTPUT_ENV, SERVICE_PORT
from generator.engines.base import CHAT_TEMPLATE_FILE

TEMPLATES = templates_dir()  # top-level templates/ in a checkout, package data in a wheel (core/locate.py)
ROOT_FILES = {"Chart.yaml": "Chart.yaml.j2", "OlaresManifest.yaml": "OlaresManifest.yaml.j2",
              "values.yaml": "values.yaml.j2", "owners": "owners.j2"}
I18N_TEMPLATE = "I18nManifest.yaml.j2"
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
        auto_reload=False,  # templates do not change during a run: no stat per get_template
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
def _templates() -> tuple[tuple[str, Template], ...]:
    """(output path, template) for every file of a chart, in path order."""
    env = environment()
    sources = dict(ROOT_FILES)
    for path in sorted((TEMPLATES / "chart" / "templates").glob("*.j2")):
        sources[f"templates/{path.name[:-3]}"] = f"chart/templates/{path.name}"
    return tuple((out, env.get_template(src)) for out, src in sorted(sources.items()))


def _fetch_dollar(spec: ChartSpec) -> bool:
    """Whether a file the init container fetches holds `$`: Kubernetes expands `$(VAR)` in env values, so
    the template then doubles every `$` of FILE_i_SRC/DST (the schema refuses `$` there; this is the second
    line of defence, and charts without a `$` keep their bytes)."""
    files = spec.values.model_fetch.files + tuple(f for _, m in spec.values.modes for f in m.files)
    return any("$" in value for f in files for value in (f.repo, f.revision, f.file, f.path))


def _shared(spec: ChartSpec) -> dict[str, object] | None:
    """The shared form's names for the templates (None: the single form renders as before)."""
    manifest = spec.manifest.shared
    if manifest is None:
        return None
    return {"host": manifest.entrance.host, "port": SERVICE_PORT, "context_env": CONTEXT_ENV, "output_env": OUTPUT_ENV,
            "api_key_env": API_KEY_ENV}


def render(spec: ChartSpec) -> dict[str, str]:
    """The chart's files; a Helm template that renders empty for this app (the chat-template ConfigMap of an app
    without one) is left out, and `spec.files` (shipped verbatim) are added."""
    context = {"name": spec.name, "chart": spec.chart.to_data(), "manifest": spec.manifest.to_data(),
               "values": spec.values.to_data(), "owners": spec.owners.to_data(), "container": CONTAINER,
               "fetch_dollar": _fetch_dollar(spec),
               "models_path": spec.profile.models_path,
               "modes": [m.mode for m in spec.modes],  # per-mode charts: the Deployment picks .Values.modes.<mode>
               "engine": "$engine" if spec.modes else ".Values.engine",
               "chat_template": CHAT_TEMPLATE_FILE if CHAT_TEMPLATE_FILE in spec.files else None,
               "mounts": [{"name": m.name, "path": m.path, "kind": m.kind} for m in spec.engine.mounts],
               "shared": _shared(spec),
               "carried": block(spec.resolved.app, spec.resolved.sized)}  # values.yaml's last lines (chart/carried.py)
    out = {path: text for path, template in _templates() if (text := template.render(context)).strip()}
    i18n = environment().get_template(I18N_TEMPLATE)
    for locale, part in spec.i18n.items():  # olares-v3: i18n/<locale>/OlaresManifest.yaml (manifest.md "i18n")
        out[f"i18n/{locale}/OlaresManifest.yaml"] = i18n.render({"name": spec.name, "i18n": part.to_data()})
    out.update(spec.files)
    return dict(sorted(out.items()))
