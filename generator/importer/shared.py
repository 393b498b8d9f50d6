"""Import of the shared-app layout (docs/forms.md "Import"): a chart of the second public store, or one this project
rendered in the shared form, read as the app it serves.

The layout (github.com/coynntis/olares-one-market@cb991c8fe7ae29766d41269cad880f6c452fab7e, e.g.
`llamacppqwen36a3bone/`): OlaresManifest 0.12.0 / v3 with `options.shared`, `spec.onlyAdmin`, `sharedEntrances`
(host `sharedentrances-<app>`) and a client entrance served by an nginx client proxy (`templates/clientproxy.yaml`),
empty `<app>/<app>/` and `<app>/<app>srv/` subchart folders, the market's own labels in `metadata.categories`, and the
settings `LLM_CONTEXT_WINDOW`, `LLM_MAX_OUTPUT_TOKENS`, `LLM_API_KEY` read through `.Values.olaresEnv` into the
launcher's env, where a bash launcher collects the optional flags in an array (`EXTRA_LLM_ARGS+=(--n-predict ...)`)
and passes it as `"${EXTRA_LLM_ARGS[@]}"`.

`read_layout` recognises the layout and rewrites, in memory only, the two launcher forms the generic reader does not
take (importer/shell.py reads `${VAR}` and `${VAR:-default}`): an array fed only by the settings is dropped (what it
carries is the shared form's own settings, rendered again by `form: shared`), and `${LLM_X:-${Y:-d}}` reads `${Y:-d}`
(the setting is empty at install: the chart's default holds). `finish` then carries onto the imported app what the
layout says: `form: shared`, the market categories, a title the Market accepts (with a note of the original), the
accelerator modes other than `nvidia` as `devices:` of the catalog's devices of that mode (or a note), upstream's
GPU-memory semantics as a note, and a launcher that builds an engine from git at start as a draft reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from generator.catalog import Catalog, Resolved
from generator.core import CatalogError
from generator.importer.result import APP_KEYS, Imported
from generator.importer.source import ChartFiles

SETTINGS = ("LLM_CONTEXT_WINDOW", "LLM_MAX_OUTPUT_TOKENS", "LLM_API_KEY")
OLARES_CATEGORIES = {"AI", "Creativity", "Productivity_v112", "Developer Tools", "Fun", "Lifestyle", "Utilities_v112"}
CATEGORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 -]{0,39}$")  # generator/schema/app.py MarketCategory
TITLE_CHAR = re.compile(r"[A-Za-z0-9 -]")  # OLARES021: an entrance title (the app's title) is only these
ARRAY_USE = re.compile(r'"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\}"?')
ARRAY_ADD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+=\(")
NESTED = re.compile(r"\$\{(" + "|".join(SETTINGS) + r"):-(\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-[^{}]*)?\})\}")
HAMI_ENV = re.compile(r"name:\s*[\"']?CUDA_DEVICE_MEMORY_LIMIT_0[\"']?\s*\n\s*value:\s*[\"']?(\d+)([mMgG])[\"']?")
BUILD_LINE = "the launcher builds the engine when the pod starts"  # importer/build.py's reason for the same build
CODELOAD = re.compile(r"codeload\.github\.com/([\w.-]+)/([\w.-]+)/(?:tar\.gz|zip)/")
GIT_BUILD = re.compile(r"git\s+clone\b[^\n]*?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?(?:\s|$)")
# `git clone "$REPO_URL" ...`: the URL set in the launcher (`REPO_URL="https://github.com/o/r"`, or with a default,
# `${COLIBRI_REPO:-https://github.com/o/r}`) or in the chart's ConfigMap (`LUCE_REPO_URL: "https://github.com/o/r"`)
GIT_URL_OF = r"\b{name}\s*[=:]\s*[\"']?(?:\$\{{[A-Za-z_][A-Za-z0-9_]*:-)?https?://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?[\"'}}\s]"


@dataclass
class Layout:
    """What the shared layout of one chart says beyond the generic import."""

    manifest: Mapping[str, object]  # OlaresManifest.yaml as read, before the import renders the chart
    settings: tuple[str, ...]  # the LLM_* settings the chart reads through olaresEnv
    # the chart's other settings: editable envs with no default, value or valueFrom, so empty when Olares installs the
    # app (app-service sets each env to its value or else its default, importer/helmview.py); read as empty, and not
    # rendered again by `form: shared`
    empty: tuple[str, ...] = ()
    empty_line: int | None = None  # the manifest line of the first of them
    arrays: dict[str, list[str]] = field(default_factory=dict)  # a dropped flag array -> the settings it carried
    rewritten: list[str] = field(default_factory=list)  # file: what was rewritten (notes)


def _manifest(chart: ChartFiles) -> dict[str, Any] | None:
    text = chart.text("OlaresManifest.yaml")
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None  # the generic import reports it
    return data if isinstance(data, dict) else None


def is_shared(manifest: Mapping[str, object]) -> bool:
    options = manifest.get("options")
    return (isinstance(options, dict) and options.get("shared") is True) or bool(manifest.get("sharedEntrances"))


def _array_settings(text: str, name: str) -> list[str] | None:
    """The settings an array is fed from, when every `NAME+=(...)` line sits under a test of one of them; None when
    anything else feeds it (then it is left for the generic reader to refuse)."""
    found: list[str] = []
    for line in text.splitlines():
        set_to = re.search(r"\b" + name + r"=\(([^)]*)\)", line)
        if set_to is not None and set_to.group(1).strip():
            return None  # set to flags of its own (`REASONING_ARGS=(--reasoning on)`): not the settings' array
        for match in ARRAY_ADD.finditer(line):
            if match.group(1) != name:
                continue
            used = [s for s in SETTINGS if s in line]
            if not used:
                return None
            found += used
    return sorted(set(found)) or None  # an array no setting feeds is no setting's


def _rewrite(text: str, layout: Layout, rel: str) -> str:
    for name in sorted({m.group(1) for m in ARRAY_USE.finditer(text)}):
        carried = _array_settings(text, name)
        if carried is None:
            continue
        layout.arrays[name] = carried
        text = re.sub(r'(^[ \t]*)?[ \t]*"?\$\{' + name + r'\[@\]\}"?[ \t]*',
                      lambda m: m.group(1) if m.group(1) is not None else " ", text, flags=re.MULTILINE)
        layout.rewritten.append(f"{rel}: the flag array {name} (fed by {', '.join(carried)}) is the shared form's "
                                "settings: rendered again by `form: shared`, not an app field")
    if NESTED.search(text):
        text = NESTED.sub(lambda m: m.group(2), text)
        layout.rewritten.append(f"{rel}: ${{LLM_*:-${{...}}}} read as the chart's default (the setting is empty at "
                                "install)")
    # a use that began its line keeps the line's indentation (a block scalar's lines must), so `"${A[@]}" 2>&1 | tee`
    # stays inside the YAML; a continued line left with nothing but whitespace is dropped, and a continuation
    # followed by an emptied line is joined to it (bash would)
    text = re.sub(r"\n[ \t]*\\\n", "\n", text)
    return re.sub(r"\\\n[ \t]*\n", "\n", re.sub(r"(?<=\S)[ \t]+\\\n", " \\\n", text))


def _drop_settings(text: str, names: tuple[str, ...]) -> str:
    """The manifest text without the `envs` entries of the shared form's settings: the import renders the chart as
    installed with every setting empty (the chart's defaults), and `form: shared` declares them again."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skip_indent: int | None = None
    for line in lines:
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if skip_indent is not None:
            blank = not stripped.strip()
            if not blank and (indent < skip_indent or (indent == skip_indent and stripped.startswith("- "))):
                skip_indent = None
            else:
                continue  # a line of the dropped entry (or a blank line inside it)
        match = re.match(r"-\s+envName:\s*['\"]?([A-Z0-9_]+)", stripped)
        if match and match.group(1) in names:
            skip_indent = indent
            continue
        out.append(line)
    return "".join(out)


def read_layout(chart: ChartFiles) -> tuple[ChartFiles, Layout | None]:
    """`chart` with the shared layout's launcher forms rewritten (in memory), and the layout; the chart itself and
    None when it is not a shared app."""
    manifest = _manifest(chart)
    if manifest is None or not is_shared(manifest):
        return chart, None
    entries = [e for e in manifest.get("envs") or () if isinstance(e, dict) and isinstance(e.get("envName"), str)]
    envs = [e["envName"] for e in entries]
    empty = tuple(e["envName"] for e in entries if e["envName"] not in SETTINGS and e.get("editable") is True
                  and not e.get("required") and all(e.get(k) in (None, "") for k in ("default", "value", "valueFrom")))
    files = dict(chart.files)
    manifest_text = chart.text("OlaresManifest.yaml") or ""
    layout = Layout(manifest, tuple(s for s in SETTINGS if s in envs), empty=empty,
                    empty_line=_env_line(manifest_text, empty[0]) if empty else None)
    if layout.settings or layout.empty:
        files["OlaresManifest.yaml"] = _drop_settings(manifest_text, layout.settings + layout.empty).encode("utf-8")
    for rel, raw in chart.files.items():
        if not rel.startswith("templates/") or not rel.endswith((".yaml", ".yml", ".tpl")):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue  # the generic import reports it
        new = _rewrite(text, layout, rel)
        if new != text:
            files[rel] = new.encode("utf-8")
    return replace(chart, files=files), layout


def _section(manifest: Mapping[str, object], key: str) -> dict[str, Any]:
    value = manifest.get(key)
    return value if isinstance(value, dict) else {}


def _title(app: dict[str, Any], notes: list[str]) -> None:
    title = app.get("title")
    if not isinstance(title, str):
        return
    fixed = "".join(c if TITLE_CHAR.match(c) else (" " if c in "()/_" else "") for c in title)
    fixed = " ".join(fixed.split())[:30].strip()
    if fixed and fixed != title:
        app["title"] = fixed
        notes.append(f"title {title!r} -> {fixed!r}: the Market takes 1-30 letters, digits, spaces and hyphens "
                     "(OLARES021); the original is upstream's")


def _categories(app: dict[str, Any], manifest: Mapping[str, object], notes: list[str], required: bool) -> None:
    meta = _section(manifest, "metadata")
    labels = [c for c in meta.get("categories") or () if isinstance(c, str)]
    market = [c for c in labels if c not in OLARES_CATEGORIES and CATEGORY.match(c)]
    if market and not app.get("categories"):
        app["categories"] = list(dict.fromkeys(market))[:8]
        notes.append(f"categories {', '.join(app['categories'])}: the store's own labels from metadata.categories "
                     "(the manifest now carries Olares' AI)")
    elif required and not market and not app.get("categories"):
        app["categories"] = ["LLM Chat"]
        notes.append(f"categories [LLM Chat]: metadata.categories {labels!r} names no market label")


def _modes(app: dict[str, Any], manifest: Mapping[str, object], cat: Catalog, notes: list[str],
           unmapped: list[str]) -> None:
    spec = _section(manifest, "spec")
    modes = [e.get("mode") for e in spec.get("accelerator") or () if isinstance(e, dict)]
    own = cat.devices.get(app.get("device", ""))
    targets = list(app.get("devices") or ())
    for mode in modes:
        if not isinstance(mode, str) or mode == "nvidia" or (own is not None and own.accelerator == mode):
            continue
        device = next((d for d in sorted(cat.devices.values(), key=lambda d: d.id) if d.accelerator == mode), None)
        if device is None:
            unmapped.append(f"OlaresManifest.yaml: spec.accelerator mode {mode}: no device of that mode in the "
                            "catalog (devices/); add one and list it in the app's `devices:` to carry it")
            continue
        if all(t.get("device") != device.id for t in targets):
            targets.append({"device": device.id})
            notes.append(f"accelerator mode {mode} carried as devices: {device.id} (the fit plans it there)")
    if targets:
        app["devices"] = targets


def _resolved(app: dict[str, Any], cat: Catalog) -> Resolved | None:
    """The imported app resolved against the catalog (None where it cannot be yet: a draft's model or stack)."""
    from generator.schema import App
    from generator.yamlio import parse_document

    def tuples(node: Any) -> Any:  # the strict schema reads YAML sequences as tuples
        if isinstance(node, list):
            return tuple(tuples(v) for v in node)
        return {k: tuples(v) for k, v in node.items()} if isinstance(node, dict) else node

    try:
        parsed = App.model_validate(tuples(app))
        return Resolved(app=parsed, model=cat.models[parsed.model], stack=cat.stacks[parsed.stack],
                        device=cat.devices[parsed.device], genesis=cat.genesis, file=f"apps/{parsed.name}.yaml",
                        doc=parse_document(b"{}", "import", None), market=cat.market)
    except (KeyError, ValueError, CatalogError):
        return None


def _fit_says(app: dict[str, Any], cat: Catalog) -> str:
    """What the fit sizes for the imported app, in the words of `check`'s FIT002 (the cap, the need and the margin),
    or where to read it when the app cannot be resolved yet (a draft)."""
    from generator.fit import size_gpu

    r = _resolved({k: v for k, v in app.items() if k != "gpu_memory_mib"}, cat)
    if r is None:
        return "`catalog explain` shows what the fit needs"
    sizing = size_gpu(r)
    return (f"the fit sizes it at {sizing.cap_mib:,} MiB (need {round(sizing.need_mib):,} + margin "
            f"{round(sizing.margin_mib):,})")


def _slots(app: dict[str, Any], cat: Catalog, notes: list[str]) -> None:
    """The slot flag the shared form writes out (generator/chart/shared.py `explicit_slots`) read back from the argv
    is dropped from extra_args where, without it, the shared form writes the same one again."""
    from generator.chart import knobs_for
    from generator.engines import engine_for
    from generator.engines import settings_for
    from generator.fit import sized

    extra = list(app.get("extra_args") or ())
    r = _resolved(app, cat)
    if r is None or not extra:
        return
    knobs = knobs_for(r)
    at = next((i for i in range(len(extra) - 1) if extra[i] in knobs.slot_flags), None)
    if at is None or not knobs.slot_setting:
        return
    trial = dict(app, extra_args=extra[:at] + extra[at + 2:])
    without = _resolved(trial, cat)
    if without is None:
        return
    planned = sized(without)
    spec = engine_for(planned)
    if any(t in knobs.slot_flags for t in spec.argv):
        return
    if str(getattr(settings_for(planned, spec), knobs.slot_setting).value) == extra[at + 1]:
        app["extra_args"] = trial["extra_args"]
        if not app["extra_args"]:
            app.pop("extra_args")
        notes.append(f"{extra[at]} {extra[at + 1]} is the slot count the shared form writes out: not an app field")


def _gpu(result: Imported, manifest: Mapping[str, object], cat: Catalog, notes: list[str], whole: bool,
         text: str) -> None:
    """Upstream asked a whole GPU with no HAMi limit in the pod: the app keeps that meaning (the device's usable most),
    and the note says what the fit needs and what the chart now caps."""
    if result.app is None:
        return
    app = result.app
    spec = _section(manifest, "spec")
    nvidia = next((e for e in spec.get("accelerator") or () if isinstance(e, dict) and e.get("mode") == "nvidia"), {})
    required, limited = nvidia.get("requiredGPUMemory"), nvidia.get("limitedGPUMemory")
    device_id = app.get("device")
    device = cat.devices.get(device_id) if isinstance(device_id, str) else None
    mib = app.get("gpu_memory_mib")
    if device is not None and (not isinstance(mib, int) or mib > device.hami_cap_mib):
        app["gpu_memory_mib"] = mib = device.hami_cap_mib
    fit = _fit_says(app, cat)
    how = "a whole GPU through nvidia.com/gpu" if whole else "no GPU resource in the pod"
    asks = f"the manifest asks {required or '?'} to {limited or '?'}"
    belt = _in_container_cap(text)
    if belt is not None and (device is None or belt < device.memory_mib):
        # upstream capped the app inside the container below the card: that cap is what the app keeps
        notes.append(f"GPU memory: upstream set no HAMi request in the pod ({how}; {asks}) but capped it in the "
                     f"container (CUDA_DEVICE_MEMORY_LIMIT_0 {belt:,} MiB); the chart now requests and caps {mib:,} "
                     f"MiB; {fit}")
        return
    above = (f"; its CUDA_DEVICE_MEMORY_LIMIT_0 {belt:,} MiB is above the {device.memory_mib:,} MiB card, no cap"
             if belt is not None and device is not None else "")
    source = (f", the usable most of {device.name}, as upstream let the app use the whole card"
              if device is not None and mib == device.hami_cap_mib else
              f", upstream's limitedGPUMemory {limited}" if limited else "")
    notes.append(f"GPU memory: upstream set no HAMi limit in the pod ({how}; {asks}{above}); the chart now "
                 f"requests and caps {mib:,} MiB{source}; {fit}")


def _env_line(manifest: str, name: str) -> int | None:
    """The line of the manifest's `envName: <name>`."""
    for number, line in enumerate(manifest.splitlines(), start=1):
        if re.match(r"\s*-?\s*envName:\s*['\"]?" + re.escape(name) + r"['\"]?\s*$", line):
            return number
    return None


def _in_container_cap(text: str) -> int | None:
    """The MiB a chart's `CUDA_DEVICE_MEMORY_LIMIT_0` env sets (HAMi's in-container cap, `m`/`g` suffixed), if any."""
    match = HAMI_ENV.search(text)
    if match is None:
        return None
    value, unit = int(match.group(1)), match.group(2).lower()
    return value * 1024 if unit == "g" else value


# what the generic import lists as unmapped that `form: shared` renders again
MODELLED = re.compile(r"manifest env (LLM_[A-Z_]+) is not modelled|env (LLM_[A-Z_]+) renders from the manifest env|"
                      r"options\.shared is not modelled|spec\.onlyAdmin|sharedEntrances|Service sharedentrances-|"
                      r"container nginx \(|ConfigMap nginx-config|Service [a-z0-9]+cli ports|"
                      r"entrances\[0\]\.(name|host) '[a-z0-9]+cli'")
# the generic import's notes on the settings it was shown empty (read_layout left them out of its manifest)
SETTING_NOTE = r"\.Values\.olaresEnv\.({names}): .*declares no env"
# ... and, where upstream set no HAMi limit, what the GPU note says instead
WHOLE_GPU = re.compile(r"nvidia\.com/gpu: |differs from gpu_memory_mib|CUDA_DEVICE_MEMORY_LIMIT_0")


def _cloned_repo(text: str, script: str, templates: str) -> str | None:
    """The repository a `git clone` line clones, where its URL is written or set in a variable it reads."""
    match = GIT_BUILD.search(text)
    if match is not None:
        return match.group(2)
    clone = re.search(r"git\s+clone\b[^\n]*", text)
    if clone is None:
        return None
    # each variable the clone line reads (`--branch "$REPO_BRANCH" "$REPO_URL"`): the one set to a GitHub URL
    for name in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", clone.group(0)):
        url = re.search(GIT_URL_OF.format(name=name), script) or re.search(GIT_URL_OF.format(name=name), templates)
        if url is not None:
            return url.group(2)
    return None


def _builds(result: Imported, templates: str) -> None:
    script = "\n".join(text for _line, text in result.launcher)
    builds = any(m.startswith(BUILD_LINE) for m in result.missing)
    for _line, text in result.launcher:
        repo = _cloned_repo(text, script, templates)
        # a launcher that builds (importer/build.py said so) from a GitHub source archive it downloads
        # (`https://codeload.github.com/ggml-org/llama.cpp/tar.gz/${REPO_REF}`, the second store's dsv4flash0731one)
        archive = CODELOAD.search(text) if builds and repo is None else None
        repo = archive.group(2) if archive is not None else repo
        if repo is None:
            continue
        reason = f"builds {repo} from git at start: pin an image"
        # the one reason says what the generic import's line on the build says (importer/build.py), and names what
        result.missing = [m for m in result.missing if not m.startswith(BUILD_LINE)]
        if reason not in result.missing:
            result.missing.insert(0, reason)
        if result.status == "ok":
            result.status = "draft"
        return


def finish(result: Imported, layout: Layout, chart: ChartFiles, cat: Catalog) -> None:
    """Carry onto the imported app what the shared layout says (see the module docstring)."""
    text = "\n".join(raw.decode("utf-8", "replace") for rel, raw in chart.files.items()
                     if rel.startswith("templates/") or rel == "values.yaml")
    _builds(result, text)
    # the settings' envs were left out of the manifest the import read (read_layout): its notes that the manifest
    # declares no such env are not true of the chart, whatever the import made of it
    left_out = SETTING_NOTE.format(names="|".join(map(re.escape, layout.settings + layout.empty)) or "LLM_[A-Z_]+")
    result.notes = [n for n in result.notes if not re.search(left_out, n)]
    app = result.app
    if app is None or result.status not in ("ok", "draft"):
        return
    notes: list[str] = []
    if cat.market.form != "shared":
        app["form"] = "shared"  # the store's own form covers it otherwise
    notes.append("form: shared (options.shared, sharedEntrances"
                 + (f"; settings {', '.join(layout.settings)} read through olaresEnv" if layout.settings else "")
                 + ")")
    notes += layout.rewritten
    said: list[str] = []  # what the app file's header says too: where the app differs from upstream's meaning
    if layout.empty:
        said_empty = (f"settings {', '.join(layout.empty)} (editable, no default: empty when Olares installs the app) "
                      "are read empty and not rendered by `form: shared`: the app runs with the launcher's defaults "
                      "for them")
        at = layout.empty_line
        result.unmapped.append(f"{chart.where('OlaresManifest.yaml')}{f':{at}' if at else ''}: {said_empty}")
    env = app.get("env")
    settings = (*SETTINGS, *layout.empty)  # the form's, or read empty (said above): not app env
    if isinstance(env, dict) and any(k in settings for k in env):
        app["env"] = {k: v for k, v in env.items() if k not in settings}
        if not app["env"]:
            app.pop("env")
    title = app.get("title")
    _title(app, said)
    if title != app.get("title"):  # the generic import's lines that quote the title the catalog renders
        result.unmapped = [line.replace(f"(the catalog renders {title!r})", f"(the catalog renders {app['title']!r})")
                           for line in result.unmapped]
    _categories(app, layout.manifest, said, cat.market.categories)
    _modes(app, layout.manifest, cat, said, result.unmapped)
    _slots(app, cat, notes)
    whole_gpu = "nvidia.com/gpumem" not in text
    if whole_gpu:
        _gpu(result, layout.manifest, cat, said, "nvidia.com/gpu" in text, text)
    notes += said
    result.app_notes = said
    kept = [line for line in result.unmapped
            if not MODELLED.search(line) and not (whole_gpu and WHOLE_GPU.search(line))]
    if len(kept) != len(result.unmapped):
        notes.append(f"{len(result.unmapped) - len(kept)} chart parts of the shared layout (its settings, shared "
                     "entrance, client proxy, whole-GPU request) are what `form: shared` renders again")
    result.unmapped = kept
    result.notes += notes
    if result.unmapped:
        app["unmapped"] = list(result.unmapped)
    else:
        app.pop("unmapped", None)
    result.app = {k: app[k] for k in APP_KEYS if k in app}


__all__ = ["Layout", "SETTINGS", "finish", "is_shared", "read_layout"]
