"""The one jinja2 environment: ChartSpec -> {relative path: text}, in memory.

Jinja uses `[[ ]]` / `[% %]` so it never collides with Helm's `{{ }}`; catalog values reach files only
through the `toyaml` filter (values.yaml, Chart.yaml, OlaresManifest.yaml, owners), never through the
Helm templates, so catalog text cannot become a template.

The templates are compiled ahead (`compile_ahead`, run by scripts/compile_templates.py): Jinja's own compiler turns
each into a Python module in templates/compiled/ (package data like the templates), loaded with Jinja's
`ModuleLoader` instead of lexing, parsing and compiling every template on every start (~87 M instructions).
templates/compiled/index.json names the Jinja version that compiled them and each template's SHA-256: where the
installed Jinja or a template differs (a template edited in a checkout), the templates are compiled from source as
before, so the output never depends on the compiled copy; tests/test_render_compiled.py fails while the copy is stale.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2 import BaseLoader, FileSystemLoader, ModuleLoader, StrictUndefined, Template
from jinja2.sandbox import ImmutableSandboxedEnvironment

from generator.core import templates_dir
from generator.yamlio import yamlout
from generator.chart.carried import block
from generator.chart.plan import CONTAINER, ChartSpec
from generator.chart.shared import API_KEY_ENV, CONTEXT_ENV, OUTPUT_ENV, SERVICE_PORT
from generator.engines import CHAT_TEMPLATE_FILE

TEMPLATES = templates_dir()  # top-level templates/ in a checkout, package data in a wheel (core/locate.py)
ROOT_FILES = {"Chart.yaml": "Chart.yaml.j2", "OlaresManifest.yaml": "OlaresManifest.yaml.j2",
              "values.yaml": "values.yaml.j2", "owners": "owners.j2"}
I18N_TEMPLATE = "I18nManifest.yaml.j2"
COMPILED = TEMPLATES / "compiled"  # the templates compiled ahead: one module per template and index.json
_IDENT = re.compile(r"^[a-z][a-z0-9]*$")


def _helm_ident(value: str) -> str:
    if not _IDENT.match(value):
        raise ValueError(f"{value!r} cannot be a Go template field name")
    return value


def _gostr(value: str) -> str:
    """A Go/YAML double-quoted string literal."""
    return json.dumps(value, ensure_ascii=True)


def template_names() -> list[str]:
    """Every Jinja template a chart is rendered from (templates/store/ is a scaffold copied, not rendered)."""
    chart = sorted(f"chart/templates/{p.name}" for p in (TEMPLATES / "chart" / "templates").glob("*.j2"))
    return sorted([*ROOT_FILES.values(), I18N_TEMPLATE, *chart])


def _index() -> dict[str, object]:
    """What templates/compiled/ must match: the Jinja version and each template's SHA-256."""
    return {"jinja2": jinja2.__version__,
            "templates": {name: hashlib.sha256((TEMPLATES / name).read_bytes()).hexdigest()
                          for name in template_names()}}


def _compiled_current() -> bool:
    """Whether templates/compiled/ was made by this Jinja from these templates (else they compile from source)."""
    try:
        kept = json.loads((COMPILED / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(kept == _index())


@lru_cache(maxsize=2)
def environment(from_source: bool = False) -> ImmutableSandboxedEnvironment:
    """The one environment; its templates come from templates/compiled/ where that is current, unless `from_source`
    (what `compile_ahead` compiles with)."""
    loader: BaseLoader = (ModuleLoader(str(COMPILED)) if not from_source and _compiled_current()
                          else FileSystemLoader(str(TEMPLATES)))
    env = ImmutableSandboxedEnvironment(
        loader=loader,
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


def compile_ahead(target: Path) -> None:
    """Compile every template into `target` (what templates/compiled/ holds): Jinja's compiled module of each (the
    file names Jinja's ModuleLoader looks up) and index.json. The same templates and Jinja give the same bytes."""
    env = environment(from_source=True)
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("tmpl_*.py"):
        old.unlink()
    for name in template_names():
        source = (TEMPLATES / name).read_text(encoding="utf-8")
        code = env.compile(source, name, name, raw=True, defer_init=True)
        header = f"# Generated by scripts/compile_templates.py from templates/{name}: do not edit.\n"
        (target / ModuleLoader.get_module_filename(name)).write_text(header + code + "\n", encoding="utf-8")
    (target / "index.json").write_text(json.dumps(_index(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


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
