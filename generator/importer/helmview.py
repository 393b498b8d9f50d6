"""Render a chart the way Olares does: the real Helm engine (helm_python) with the values Olares injects.

Olares renders OlaresManifest.yaml as a Go template too (the maintainer's manifests branch on
`{{- if and .Values.admin .Values.bfl.username (eq .Values.admin .Values.bfl.username) }}`: the admin
branch sizes the shared server, the `else` branch the per-user client; see
github.com/aamsellem/orales-one-market@fb7e236 generate-model-app.sh). The manifest is rendered in a first
pass, its entrances give `.Values.domain`, then the templates are rendered with the admin's values
(`admin == bfl.username`, generator/lint/values.py), so the admin branch is the one imported.

Helm renders a missing value as an empty string, silently. So before rendering, every `.Values.a.b` a
template reads outside a guard (`if`, `with`, `default`, ...) is looked up in values.yaml plus the
injected values; a missing one is an input error at its line. `.Values.olaresEnv.X` for an env the
manifest does not declare is what Olares renders empty: a note, not an error.

The templates are rendered twice. Once with each declared env as a mark (`<olaresEnv:NAME>`), so a value that
came from an env is traced to it; once with the values Olares injects at install: app-service puts every env of
the app's AppEnv into `.Values.olaresEnv` as its effective value (beclab/Olares@982b0b54a8c863be49e18299986bf9f534ca71ec
framework/app-service/pkg/appinstaller/helm_utils.go:303-314 `AddEnvironmentVariables`:
`values["olaresEnv"][env.EnvName] = env.GetEffectiveValue()`), the value set or else the manifest's default
(beclab/api@36519b6c26524f89f83d01eee3c5ed6bc658fba7 api/sys.bytetrade.io/v1alpha1/common_types.go:33-40
`GetEffectiveValue`). A value a template computes from an env (the official SGLang charts' `llmbase.gpuMiB`
helper turns SGLANG_REQUIRED_GPU_MEMORY "23Gi" into `nvidia.com/gpumem: 23552`; of the mark it makes 0) differs
between the two renders: the defaults' render is what Olares installs, so it is the one kept, with a note.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.adapters import CappedRenderer, Helm, HelmFailure
from generator.core import InputError, Problem, translate_os_error
from generator.importer.objects import maps
from generator.importer.shellwords import MAX_ARG_BYTES
from generator.importer.source import ChartFiles
from generator.lint import Doc, documents
from generator.lint import OWNER, olares_values
from generator.yamlio import load_untrusted

MANIFEST = "OlaresManifest.yaml"
MANIFEST_TEMPLATE = "templates/zz-catalog-import-manifest.yaml"  # not `_*`: Helm does not render partials
I18N_TEMPLATE = "templates/zz-catalog-import-i18n-{locale}.yaml"
OLARES_ENV_MARK = "<olaresEnv:{name}>"  # what a declared env renders to (never `$(`: Kubernetes would expand it)
_MARK = re.compile(r"<olaresEnv:([A-Za-z_][A-Za-z0-9_]*)>")
_ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)
_COMMENT = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}", re.DOTALL)
_REF = re.compile(r"(?<![\w$.])(\$?)\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_GUARDS = ("default", "coalesce", "hasKey", "empty", "required", "dig", "kindIs", "typeIs")
_BLOCKS = ("if", "with", "range", "define", "block")
_ERROR_AT = re.compile(r"(?P<file>[^\s:()\"]+\.(?:yaml|yml|tpl|txt)):(?P<line>[0-9]+)(?::(?P<col>[0-9]+))?")
_SAFE_DIR = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_MANIFEST_VERSION = re.compile(r"""^olaresManifest\.version:\s*['"]?([0-9]+)\.([0-9]+)""", re.MULTILINE)
_API_V3 = re.compile(r"""^apiVersion:\s*['"]?v3['"]?\s*$""", re.MULTILINE)
Path_ = tuple[str | int, ...]  # a value's place in a document body: keys and list indexes
DocKey = tuple[str, str, str]  # (template, kind, name) of a rendered document
Unknown = dict[DocKey, dict[Path_, tuple[str, ...]]]  # values computed from envs with no default, and those envs
PROBE = "1"  # what an env with no known value is set to, to find the values a template computes from it
MAX_PROBES = 8  # envs probed one by one (one Helm render each); the official SGLang base chart has 4


def plain_manifest(text: str) -> bool:
    """An olaresManifest 0.12.0+ / apiVersion v3 manifest is plain YAML: Olares reads it verbatim, never rendered,
    so `{{ ... }}` in its text is literal (beclab/Olares docs/developer/develop/package/manifest.md, the 0.12.0
    page, https://docs.olares.com/developer/develop/package/manifest.html; OAC rejects template syntax in it:
    beclab/Olares framework/oac internal/manifest/template_syntax.go checkNoTemplateSyntax; chart rule
    OLARES011). An older manifest is a Go template (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e
    docs/developer/develop/package/manifest.md, the 0.11.0 page: its appScope example branches on `.Values.admin`)."""
    found = _MANIFEST_VERSION.search(text)
    return bool(_API_V3.search(text)) or (found is not None and (int(found.group(1)), int(found.group(2))) >= (0, 12))


def env_mark(name: str) -> str:
    return OLARES_ENV_MARK.format(name=name)


def marked_envs(text: str) -> list[str]:
    """The manifest envs a rendered value came from (`<olaresEnv:NAME>` marks)."""
    return _MARK.findall(text)


@dataclass
class Rendered:
    """A chart after Helm: its root files parsed, its templates rendered into Kubernetes documents."""

    files: ChartFiles
    chart: dict[str, object]
    values: dict[str, object]
    manifest: dict[str, object]
    manifest_templated: bool  # the manifest held `{{ }}` directives
    i18n: dict[str, dict[str, object]]
    owners: tuple[str, ...]
    docs: list[Doc]
    declared_env: tuple[str, ...]
    notes: list[Problem] = field(default_factory=list)
    # values a template computes from an env with no default (set at install), with those envs (helmview
    # `_unknown_paths`): the chart does not say what they are
    unknown: Unknown = field(default_factory=dict)

    def where(self, rel: str) -> str:
        return self.files.where(rel)

    def lines(self, rel: str) -> list[str]:
        text = self.files.text(rel)
        return text.splitlines() if text is not None else []

    def line(self, rel: str, *needles: str, after: int = 1) -> int | None:
        """1-based line of the first line at or after `after` holding every needle (None: not found)."""
        lines = self.lines(rel)
        for number in range(max(after, 1), len(lines) + 1):
            if all(n in lines[number - 1] for n in needles):
                return number
        return None

    def problem(self, rel: str, message: str, *needles: str, after: int = 1) -> Problem:
        line = self.line(rel, *needles, after=after) if needles else None
        return Problem(self.where(rel), line, None, message)


def _yaml(files: ChartFiles, rel: str, text: str) -> Any:
    """A chart file's YAML, read as the catalog reads its own (yamlio/loader.py `load_untrusted`): a duplicate key
    (a second `metadata:` that would silently win), an alias or deep nesting is an error at its line."""
    return load_untrusted(text, files.where(rel))


def _mapping(files: ChartFiles, rel: str, *, optional: bool = False) -> dict[str, Any]:
    text = files.text(rel)
    if text is None:
        if optional:
            return {}
        raise InputError([Problem(files.where(rel), None, None, "missing")])
    data = _yaml(files, rel, text)
    if data is None and optional:
        return {}
    if not isinstance(data, dict):
        raise InputError([Problem(files.where(rel), 1, None, f"expected a YAML mapping, got {type(data).__name__}")])
    return data


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _missing_at(values: Mapping[str, object], path: list[str]) -> int | None:
    """The index of the first key of `path` that `values` does not have; None when the whole path resolves."""
    node: object = values
    for index, key in enumerate(path):
        if not (isinstance(node, dict) and key in node):
            return index
        node = node[key]
    return None


def missing_refs(files: ChartFiles, rel: str, text: str, values: Mapping[str, object],
                 declared_env: tuple[str, ...]) -> tuple[list[Problem], list[Problem]]:
    """(errors, notes): unguarded `.Values` paths that resolve to nothing, and undeclared olaresEnv reads."""
    errors: list[Problem] = []
    notes: list[Problem] = []
    text_wo_comments = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    rebinding = 0  # depth of `with`/`range` blocks, where `.` is not the root
    stack: list[str] = []
    for match in _ACTION.finditer(text_wo_comments):
        body = match.group(1).strip()
        head = body.split(None, 1)[0] if body else ""
        if head == "end":
            if stack and stack.pop() in ("with", "range"):
                rebinding -= 1
            continue
        guarded = head in ("if", "else", "with", "range") or any(re.search(rf"\b{g}\b", body) for g in _GUARDS)
        for ref in _REF.finditer(body):
            rooted, path = ref.group(1) == "$", ref.group(2).lstrip(".").split(".")
            if rebinding and not rooted:
                continue
            line = _line_at(text_wo_comments, match.start())
            missing_at = _missing_at(values, path)
            if missing_at is None:
                continue
            dotted = ".Values." + ".".join(path)
            if path[0] == "olaresEnv" and missing_at == 1:
                notes.append(Problem(files.where(rel), line, None,
                                     f"{dotted}: the manifest declares no env {path[1]!r}, so Olares renders it "
                                     "empty; declare it under `envs:` in OlaresManifest.yaml"))
            elif not guarded:
                errors.append(Problem(files.where(rel), line, None,
                                      f"the template reads {dotted}, which neither values.yaml nor Olares provides "
                                      "(Helm would render it empty); add it to values.yaml or guard it with "
                                      "`default`"))
        if head in _BLOCKS:
            stack.append(head)
            if head in ("with", "range"):
                rebinding += 1
    return errors, notes


def _write(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = folder / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as exc:  # a full disk: `write` errors carry no path, the message must name one
            raise translate_os_error(exc, path, "write") from exc


def _helm_problems(files: ChartFiles, message: str, chart_dir: str) -> list[Problem]:
    """A Helm engine error as `file:line` problems: its `<chart>/templates/x.yaml:12:3` becomes our path."""
    first = message.strip().splitlines()[0] if message.strip() else message
    match = _ERROR_AT.search(message)
    detail = " ".join(part.strip() for part in message.strip().splitlines()[1:]) or first
    if match:
        rel = match.group("file")
        if rel.startswith(chart_dir + "/"):
            rel = rel[len(chart_dir) + 1:]
        if rel == MANIFEST_TEMPLATE:
            rel = MANIFEST
        elif rel.startswith("templates/zz-catalog-import-i18n-"):
            rel = f"i18n/{rel[len('templates/zz-catalog-import-i18n-'):-len('.yaml')]}/{MANIFEST}"
        hint = "; the value is missing: add it to values.yaml or guard it" if "nil pointer" in message else ""
        return [Problem(files.where(rel), int(match.group("line")), None, f"Helm cannot render it: {detail}{hint}")]
    return [Problem(files.label, None, None, f"Helm cannot render the chart: {first}")]


def _render(renderer: CappedRenderer, folder: Path, values: dict[str, Any], name: str) -> dict[str, str]:
    # a stranger's templates: rendered in a capped worker (memory, time, output), HelmFailure past a cap
    out = renderer.render(folder, values, name=name, namespace=f"{name}-{OWNER}")
    prefix = f"{folder.name}/"
    return {(k.removeprefix(prefix)): v for k, v in sorted(out.items())}


def _declared_env(manifest: dict[str, Any]) -> tuple[str, ...]:
    names = []
    for env in manifest.get("envs") or ():
        if isinstance(env, dict) and env.get("envName"):
            names.append(str(env["envName"]))
    return tuple(names)


def _plain_texts(files: ChartFiles, i18n_rels: list[str]) -> dict[str, str]:
    """The manifest and its translations as written (a plain manifest: nothing rendered)."""
    out = {MANIFEST_TEMPLATE: files.text(MANIFEST) or ""}
    out.update({I18N_TEMPLATE.format(locale=rel.split("/")[1]): files.text(rel) or "" for rel in i18n_rels})
    return out


def _first_pass(renderer: CappedRenderer, folder: Path, values: dict[str, Any], name: str, files: ChartFiles,
                chart_dir: str) -> dict[str, str]:
    try:
        return _render(renderer, folder, values, name)
    except HelmFailure as exc:
        raise InputError(_helm_problems(files, exc.detail, chart_dir)) from exc


def render_chart(files: ChartFiles, renderer: CappedRenderer | None = None) -> Rendered:
    """Parse and render `files`; InputError (file:line) when Helm or YAML refuses it or a value is missing.
    `renderer` is the import run's capped Helm worker (one is started for this chart when None)."""
    if renderer is None:
        with Helm().capped_renderer() as own:
            return _render_chart(files, own)
    return _render_chart(files, renderer)


def installed_env(manifest: Mapping[str, object], declared: tuple[str, ...]) -> dict[str, str]:
    """The `.Values.olaresEnv` Olares injects at install: each env's default (GetEffectiveValue with no value set,
    see the module docstring). An env with no default (the user fills it at install) or taken from a system env
    (`valueFrom`) has no value known here: it stays a mark."""
    out = {name: env_mark(name) for name in declared}
    for env in maps(manifest, "envs"):
        if not env.get("envName") or env.get("valueFrom"):
            continue
        default = env.get("default")
        if isinstance(default, str | int | float) and not isinstance(default, bool):
            if len(str(default)) > MAX_ARG_BYTES:  # exec could not pass it: refused before it is split or expanded
                raise InputError([Problem("OlaresManifest.yaml", None, f"envs.{env['envName']}.default",
                                          f"{len(str(default))} bytes; an env value is at most "
                                          f"{MAX_ARG_BYTES // 1024} KiB (Linux MAX_ARG_STRLEN): refused unread")])
            out[str(env["envName"])] = str(default)  # "" too: GetEffectiveValue gives it
    return out


def _unmark(value: str, env: dict[str, str]) -> str:
    return _MARK.sub(lambda m: env.get(m.group(1), m.group(0)), value)


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _reconciled(marked: Any, effective: Any, env: dict[str, str], path: Path_,
                diffs: list[tuple[Path_, Any, Any]]) -> Any:
    """`marked` where it is `effective` once its marks are the envs' values; else `effective` (recorded)."""
    if isinstance(marked, dict) and isinstance(effective, dict) and marked.keys() == effective.keys():
        return {k: _reconciled(marked[k], effective[k], env, (*path, str(k)), diffs) for k in marked}
    if isinstance(marked, list) and isinstance(effective, list) and len(marked) == len(effective):
        pairs = enumerate(zip(marked, effective, strict=True))
        return [_reconciled(m, e, env, (*path, i), diffs) for i, (m, e) in pairs]
    same = _unmark(marked, env) == effective if isinstance(marked, str) and isinstance(effective, str) \
        else marked == effective
    if same:
        return marked
    diffs.append((path, marked, effective))
    return effective


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, dict | list) else f"a {type(value).__name__} of {len(value)}"
    return text if len(text) <= 80 else text[:77] + "..."


def doc_key(doc: Doc) -> DocKey:
    return doc.source, doc.kind, doc.name


def _paired(docs: list[Doc], others: list[Doc]) -> tuple[list[tuple[Doc, Doc]], list[Doc], list[Doc]]:
    """(pairs, only in `docs`, only in `others`): documents paired by template, kind and name, in order."""
    pending: dict[DocKey, list[Doc]] = {}
    for doc in others:
        pending.setdefault(doc_key(doc), []).append(doc)
    pairs, alone = [], []
    for doc in docs:
        twins = pending.get(doc_key(doc)) or []
        if twins:
            pairs.append((doc, twins.pop(0)))
        else:
            alone.append(doc)
    return pairs, alone, [d for rest in pending.values() for d in rest]


def _line_of(files: ChartFiles, rel: str, path: Path_) -> int | None:
    """The template line of a value, for a note's `file:line`: its keys looked up in order, each at or after the
    line of the one before (`limits:` then `nvidia.com/gpumem:`); None when its last key is not found."""
    lines = (files.text(rel) or "").splitlines()
    at, found = 0, None
    for key in (p for p in path if isinstance(p, str)):
        hit = next((n for n in range(at, len(lines)) if f"{key}:" in lines[n]), None)
        if hit is not None:
            at, found = hit, hit + 1
        else:
            found = None
    return found


def _effective_docs(files: ChartFiles, docs: list[Doc], effective_docs: list[Doc],
                    env: dict[str, str]) -> tuple[list[Doc], list[Problem]]:
    """The marked render's documents, each value a template computed from an env taken from the render with the
    envs' defaults (what Olares installs); a note per value taken. A document only the defaults' render has is
    added, one it lacks is dropped (each noted)."""
    notes: list[Problem] = []
    pairs, dropped, added = _paired(docs, effective_docs)
    out: list[Doc] = []
    for doc, twin in pairs:
        diffs: list[tuple[Path_, Any, Any]] = []
        body = _reconciled(doc.body, twin.body, env, (), diffs)
        for path, was, now in diffs:
            notes.append(Problem(files.where(doc.source), _line_of(files, doc.source, path), None,
                                 f"{doc.label} {_dotted(path)}: {_shown(now)} with the manifest envs' defaults, what "
                                 f"Olares installs (the template computes it from an env: {_shown(was)} with the "
                                 "env as a placeholder)"))
        out.append(Doc(doc.source, body))
    for doc in dropped:
        notes.append(Problem(files.where(doc.source), None, None, f"{doc.label} is not rendered with the manifest "
                             "envs' defaults (what Olares installs): left out"))
    for doc in added:
        notes.append(Problem(files.where(doc.source), None, None, f"{doc.label} is rendered only with the manifest "
                             "envs' defaults (what Olares installs): read from that render"))
        out.append(doc)
    return out, notes


def _unknown_paths(docs: list[Doc], probes: dict[str, list[Doc]], env: dict[str, str]) -> Unknown:
    """The values a template computes from an env with no value known before install (no default): those that
    change when that env alone is set to PROBE, each with the envs it changes with."""
    out: Unknown = {}
    for name, probed in probes.items():
        probe_env = {**env, name: PROBE}
        for doc, twin in _paired(docs, probed)[0]:
            diffs: list[tuple[Path_, Any, Any]] = []
            _reconciled(doc.body, twin.body, probe_env, (), diffs)
            for path, _was, _now in diffs:
                at = out.setdefault(doc_key(doc), {})
                at[path] = (*at.get(path, ()), name)
    return out


def path_to(node: Any, target: Any, path: Path_ = ()) -> Path_ | None:
    """Where the object `target` (by identity) sits in a document body."""
    if node is target:
        return path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found = path_to(value, target, (*path, key))
        if found is not None:
            return found
    return None


def _second_pass(renderer: CappedRenderer, folder: Path, files: ChartFiles, chart_dir: str, name: str,
                 manifest: dict[str, Any], values: dict[str, Any], declared: tuple[str, ...],
                 injected: dict[str, Any]) -> tuple[list[Doc], list[Problem], Unknown]:
    """The templates rendered with the envs as marks, again with their defaults (what Olares installs, which wins
    where a template computes a value from an env) and, when an env has no default, with it set to PROBE (to find
    the values computed from it): (documents, notes, values computed from an env with no default)."""
    effective_env = installed_env(manifest, declared)
    unknown = tuple(n for n in declared if effective_env[n] == env_mark(n))

    def render(env: dict[str, str]) -> dict[str, str]:
        return _render(renderer, folder, olares_values(name, manifest, values, olares_env=env), name)

    try:
        rendered = _render(renderer, folder, injected, name)
        installed = rendered if effective_env == injected["olaresEnv"] else render(effective_env)
    except HelmFailure as exc:
        raise InputError(_helm_problems(files, exc.detail, chart_dir)) from exc
    probes: dict[str, dict[str, str]] = {}
    for env_name in unknown[:MAX_PROBES]:
        try:
            probes[env_name] = render({**effective_env, env_name: PROBE})
        except HelmFailure:
            continue  # the template refuses the probe (a `fail` on its format): nothing is learnt from it
    docs, errors = documents(rendered)
    installed_docs, installed_errors = documents(installed) if installed is not rendered else (docs, [])
    if errors or installed_errors:
        raise InputError([Problem(files.where(src), None, None, msg) for src, msg in errors or installed_errors])
    notes: list[Problem] = []
    if installed is not rendered:
        docs, notes = _effective_docs(files, docs, installed_docs, effective_env)
    unknown_paths = _unknown_paths(docs, {n: documents(text)[0] for n, text in probes.items()}, effective_env)
    return docs, notes, unknown_paths


def _render_chart(files: ChartFiles, renderer: CappedRenderer) -> Rendered:
    chart = _mapping(files, "Chart.yaml")
    values = _mapping(files, "values.yaml", optional=True)
    name = str(chart.get("name") or files.name)
    manifest_text = files.text(MANIFEST) or ""
    i18n_rels = sorted(rel for rel in files.files if re.fullmatch(r"i18n/[A-Za-z0-9_-]+/OlaresManifest\.yaml", rel))
    chart_dir = name if _SAFE_DIR.match(name) and name not in (".", "..") else "chart"
    root = Path(tempfile.mkdtemp(prefix="catalog-import-"))
    try:
        # pass 1: the manifest (and its translations) alone, as templates
        first = root / "manifest" / chart_dir
        kept = {rel: data for rel, data in files.files.items()
                if not rel.startswith("templates/") or Path(rel).name.startswith("_")}
        kept[MANIFEST_TEMPLATE] = manifest_text.encode("utf-8")
        for rel in i18n_rels:
            kept[I18N_TEMPLATE.format(locale=rel.split("/")[1])] = files.files[rel]
        _write(first, kept)
        base_values = olares_values(name, {}, values)
        merged = _deep_merge(values, base_values)
        problems: list[Problem] = []
        notes: list[Problem] = []
        for rel in [MANIFEST, *i18n_rels]:
            errs, found = missing_refs(files, rel, files.text(rel) or "", merged, ())
            problems += errs
            notes += found
        plain = plain_manifest(manifest_text)
        if plain:  # read as Olares reads it: no `.Values` reference in it is a template
            problems, notes = [], []
        if problems:
            raise InputError(problems)
        out = _plain_texts(files, i18n_rels) if plain else _first_pass(renderer, first, base_values, name, files,
                                                                        chart_dir)
        manifest = _yaml(files, MANIFEST, out.get(MANIFEST_TEMPLATE, ""))
        if not isinstance(manifest, dict):
            raise InputError([Problem(files.where(MANIFEST), 1, None, "the rendered manifest is not a YAML mapping")])
        i18n: dict[str, dict[str, Any]] = {}
        for rel in i18n_rels:
            locale = rel.split("/")[1]
            data = _yaml(files, rel, out.get(I18N_TEMPLATE.format(locale=locale), ""))
            i18n[locale] = data if isinstance(data, dict) else {}
        # pass 2: the templates, with the admin's values
        declared = _declared_env(manifest)
        injected = olares_values(name, manifest, values, olares_env={e: env_mark(e) for e in declared})
        merged = _deep_merge(values, injected)
        for rel in sorted(files.files):
            if rel.startswith("templates/") and rel.endswith((".yaml", ".yml", ".tpl")):
                errs, found = missing_refs(files, rel, files.text(rel) or "", merged, declared)
                problems += errs
                notes += found
        if problems:
            raise InputError(problems)
        second = root / "templates" / chart_dir
        _write(second, files.files)
        docs, computed, unknown = _second_pass(renderer, second, files, chart_dir, name, manifest, values, declared,
                                               injected)
        notes += computed
    finally:
        shutil.rmtree(root, ignore_errors=True)
    owners_data = _mapping(files, "owners", optional=True) if "owners" in files.files else {}
    owners = tuple(str(o) for o in owners_data.get("owners") or ()) if isinstance(owners_data, dict) else ()
    return Rendered(files=files, chart=chart, values=values, manifest=manifest,
                    manifest_templated="{{" in manifest_text and not plain_manifest(manifest_text), i18n=i18n,
                    owners=owners, docs=docs,
                    declared_env=declared, notes=notes, unknown=unknown)


__all__ = ["Rendered", "doc_key", "env_mark", "installed_env", "marked_envs", "missing_refs", "path_to", "render_chart"]
