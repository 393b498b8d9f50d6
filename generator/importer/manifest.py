"""OlaresManifest.yaml and Chart.yaml -> the app's metadata fields (name, title, owners, links, version,
entrances, options, envs, i18n), and what of the manifest the catalog cannot express.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from generator.catalog import Catalog
from generator.chart import Profile
from generator.core import Data
from generator.core import InputError, Problem
from generator.core import safe_line
from generator.importer.workload import Token
from generator.schema import Stack
from generator.schema import AppName
from generator.importer.context import _Ctx, _env_default, _perm
from generator.importer.objects import section

APP_NAME = TypeAdapter(AppName)  # the App schema's name rule (generator/schema/common.py), the one name validator
ROUTER_ENVS = ("MODEL_MODE", "MODEL_NAME", "MODEL_SUPPORTS")  # olares-v3's Router card (docs/profiles.md "Router")


def _manifest_defaults(ctx: _Ctx, tokens: list[Token]) -> list[Token]:
    """An argument that is a whole manifest env (`<olaresEnv:ENGINE_ARGS>`) is that env's default, word-split
    as the launcher's unquoted `${ENGINE_ARGS:-}` does (beclab/apps sglangqwen359bawq4bitv3/templates/
    wrappers.yaml@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049: ENGINE_ARGS, "a cmdline-style string ...
    shell-word-split and appended after the --model-path / --served-model-name / --host / --port baseline"). Each
    word's origin is the env's line in the manifest; an env without a default stays a mark (unmapped later)."""
    out: list[Token] = []
    for token in tokens:
        found = _env_default(ctx, token.text)
        if found is None:
            out.append(token)
            continue
        name, default = found
        origin = ctx.manifest_origin(f"envName: {name}")
        try:
            words = shlex.split(default)
        except ValueError:
            words = default.split()
        out += [Token(word, origin, (name,)) for word in words]
    return out


def _meta(ctx: _Ctx, app: dict[str, Data]) -> None:
    manifest, chart = ctx.r.manifest, ctx.r.chart
    meta, spec = section(manifest, "metadata"), section(manifest, "spec")
    _meta_names(ctx, app, meta, spec, chart)
    _meta_owners(ctx, app, spec)
    _meta_version(ctx, app, meta, spec, chart)


_SPEED = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*t/s\s*$")


def bento_benchmark(bento: Any, origin: str, today: dt.date, device: str | None = None,
                    named: bool = False) -> dict[str, Data] | None:
    """The measured hero speed of the maintainer's `metadata.bento` block (his scripts/build-catalog.js reads it:
    aamsellem/olares-one-market@39e2d0c7 scripts/build-catalog.js) as one benchmark of the app: `hero.value`
    `N t/s` the speed, `mtp.accept` (a percentage) the acceptance; no context (below). The block carries no date:
    `date` is the day the figure was read, said in `method`. None when the hero is not a speed (a SWE-bench
    score, an audio length). `method` quotes the label and says whose device the figure is for: `device` as the
    label names it (`named`), or the app's device taken for a label that names none (importer/bento.py)."""
    if not isinstance(bento, dict) or not isinstance(bento.get("hero"), dict):
        return None
    hero = bento["hero"]
    speed = _SPEED.match(str(hero.get("value", "")))
    if not speed or float(speed.group(1)) <= 0:
        return None
    bench: dict[str, Any] = {"tokens_per_s": float(speed.group(1))}
    caps: dict[str, Any] = bento["capabilities"] if isinstance(bento.get("capabilities"), dict) else {}
    mtp: dict[str, Any] = caps["mtp"] if isinstance(caps.get("mtp"), dict) else {}
    accept = mtp.get("accept")
    if mtp.get("enabled") and isinstance(accept, (int, float)) and not isinstance(accept, bool) and 0 < accept <= 100:
        bench["acceptance"] = round(float(accept) / 100, 4)
    # The context a hero label (`speed @ 262K`) or the `context` spec names is the server's --ctx-size, not the
    # prompt the speed was measured at (his notes: a short prompt, 2,000 tokens out): the benchmark records no
    # context, so the roofline holds it against an empty cache, the bound of any prompt (generator/fit/roofline.py).
    on = (f"a figure on {device}, as its label names it" if device and named else
          f"its label names no device: taken as a figure on the app's device {device}" if device else
          "its label names no device")
    bench.update({"date": today, "method": f"upstream's metadata.bento hero figure {hero.get('value')!s} "
                                          f"({hero.get('label')!s}), read on {today.isoformat()}: the chart's own "
                                          f"figure; {on} (prompt length not stated)",
                  "source": origin})
    return bench


def _meta_bento(ctx: _Ctx, cat: Catalog, app: dict[str, Data]) -> None:
    """The hero figure as the app's benchmark when its label names the app's device or none; a figure on another
    device (a catalog device or not) is left out of `benchmarks:` and said in unmapped (importer/bento.py)."""
    from generator.importer.bento import named_device

    meta: Mapping[str, Any] = section(ctx.r.manifest, "metadata")
    line = ctx.manifest_origin("hero:").line
    origin = (f"upstream's chart {meta.get('name')} {meta.get('version')} OlaresManifest.yaml"
              f"{f':{line}' if line else ''} metadata.bento.hero")
    own = cat.devices.get(str(app.get("device")))
    bento: dict[str, Any] = meta["bento"] if isinstance(meta.get("bento"), dict) else {}
    hero: dict[str, Any] = bento["hero"] if isinstance(bento.get("hero"), dict) else {}
    named = named_device(str(hero.get("label") or ""), cat.devices.values(), own)
    bench = bento_benchmark(bento, origin, dt.date.today(), own.name if own else None, named is not None)
    if bench is None:
        return
    if named is not None and (own is None or named.device is None or named.device.id != own.id):
        what = (f"{named.device.id}, not the app's device {own.id if own else '(none)'}" if named.device else
                "not a catalog device")
        ctx.unmapped(ctx.manifest_origin("hero:"), f"metadata.bento.hero {hero.get('value')!s} "
                     f"({hero.get('label')!s}) is a figure on {named.words} ({what}): kept out of benchmarks, "
                     "which are the app's own device's figures")
        return
    app["benchmarks"] = [bench]


def _meta_names(ctx: _Ctx, app: dict[str, Data], meta: Mapping[str, Any], spec: Mapping[str, Any],
                chart: Mapping[str, Any]) -> None:
    """The app's name, title, description and icon from the manifest (and Chart.yaml's agreement)."""
    upstream = str(meta.get("name") or chart.get("name") or "")
    name = ctx.renamed.get(upstream, upstream)  # a chart the catalog renames (a name over 30 characters)
    _check_name(ctx, name)  # before anything is built from it: the import writes apps/<name>.yaml
    app["name"] = name
    ctx.result.name = name
    if name != upstream:
        ctx.note(ctx.manifest_origin("name:"), f"metadata.name {upstream!r} imported as {name!r} (the catalog's "
                                               "rename: catalog/corrections.yaml `renamed`)")
    if chart.get("name") != upstream:
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "name:"), f"Chart.yaml name {chart.get('name')!r} differs from "
                                                              f"metadata.name {upstream!r}")
    if meta.get("appid") not in (None, upstream):
        ctx.unmapped(ctx.manifest_origin("appid:"), f"metadata.appid {meta.get('appid')!r} differs from the name")
    for key, src in (("title", "title"), ("description", "description"), ("icon", "icon")):
        if meta.get(src) is not None:
            app[key] = str(meta[src])
    full = spec.get("fullDescription")
    if full is not None and str(full) != app.get("description"):
        app["full_description"] = str(full)


def _check_name(ctx: _Ctx, name: str) -> None:
    """The app name is the file name the import writes (`apps/<name>.yaml`, `drafts/apps/<name>.yaml`): it must be
    an Olares app name (the schema's `AppName`: lowercase letters and digits, a letter first, at most 30, not
    reserved) before any path is built from it, so `../../releases` or `/abs/path/X` never becomes a path."""
    try:
        APP_NAME.validate_python(name)
    except ValidationError as exc:
        why = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        origin = ctx.manifest_origin("name:") if ctx.r.manifest.get("metadata") else ctx.lines.origin("Chart.yaml",
                                                                                                     "name:")
        raise InputError([Problem(origin.where, origin.line, "metadata.name",
                                  f"{safe_line(repr(name), 80)} is not an Olares app name ({why}); the import names "
                                  "the app's file by it: give the chart a lowercase name of letters and digits, "
                                  "a letter first, at most 30 characters")]) from None


_HANDLE = re.compile(r"^[A-Za-z0-9-]{1,39}$")  # an owner is a GitHub handle (schema/app.py `owners`)


def _meta_owners(ctx: _Ctx, app: dict[str, Data], spec: Mapping[str, Any]) -> None:
    """The owners: the chart's owners file, else spec.developer, else spec.submitter (the first that is a GitHub
    handle: a developer named `Liquid AI` is a company, the store's submitter `coynntis` the person who answers)."""
    owners = list(ctx.r.owners)
    for key in ("developer", "submitter"):
        value = spec.get(key)
        if owners or value is None or not _HANDLE.match(str(value)):
            continue
        owners = [str(value)]
        why = "" if key == "developer" else f" (spec.developer {str(spec.get('developer'))!r} is not a GitHub handle)"
        ctx.note(ctx.manifest_origin(f"{key}:"), f"no owners file: owners taken from spec.{key}{why}")
    if owners:
        app["owners"] = list[Data](owners)
    for key in ("developer", "submitter"):
        if spec.get(key) is not None and owners and str(spec[key]) != owners[0]:
            app[key] = str(spec[key])
    _meta_links(ctx, app, spec)


def _meta_links(ctx: _Ctx, app: dict[str, Data], spec: Mapping[str, Any]) -> None:
    """spec.website, sourceCode and license (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e
    docs/developer/develop/package/manifest.md "Spec"): kept as the app's own fields."""
    for key, field_name in (("website", "website"), ("sourceCode", "source_code")):
        if isinstance(spec.get(key), str) and spec[key].startswith(("https://", "http://")):
            app[field_name] = spec[key]
        elif spec.get(key) is not None:
            ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"spec.{key} {spec[key]!r} is not an http(s) URL")
    licenses = spec.get("license")
    if isinstance(licenses, list):
        kept: list[Data] = [{"text": str(e["text"]), **({"url": str(e["url"])} if e.get("url") else {})}
                            for e in licenses if isinstance(e, dict) and e.get("text")]
        if kept:
            app["license"] = kept
        if len(kept) != len(licenses):
            ctx.unmapped(ctx.manifest_origin("license:"), "a spec.license entry without `text` is not kept")


def _meta_version(ctx: _Ctx, app: dict[str, Data], meta: Mapping[str, Any], spec: Mapping[str, Any],
                  chart: Mapping[str, Any]) -> None:
    """The version and upgrade note; categories, Chart.yaml description and icon as the catalog writes them."""
    version = meta.get("version", chart.get("version"))
    if version is not None:
        app["version"] = str(version)
    if chart.get("version") is not None and str(chart.get("version")) != str(version):
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "version:"), f"Chart.yaml version {chart.get('version')} differs "
                                                                 f"from metadata.version {version}")
    if spec.get("upgradeDescription"):
        app["upgrade_description"] = str(spec["upgradeDescription"])
    if meta.get("categories") not in (None, ["AI"]):
        ctx.unmapped(ctx.manifest_origin("categories:"), f"metadata.categories {meta.get('categories')} (the catalog "
                                                         "writes [AI])")
    first_line = str(app.get("description", "")).splitlines()[0] if app.get("description") else ""
    if chart.get("description") not in (None, first_line):
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "description:"),
                     "Chart.yaml description differs from metadata.description (the catalog writes the app's "
                     "description in both)")
    if chart.get("icon") not in (None, app.get("icon")):
        ctx.unmapped(ctx.lines.origin("Chart.yaml", "icon:"), "Chart.yaml icon differs from metadata.icon")


def _manifest_rest(ctx: _Ctx, app: dict[str, Data], port: int | None, stack: Stack | None) -> None:
    """Manifest facts the catalog renders its own way: each difference is recorded."""
    manifest = ctx.r.manifest
    spec = section(manifest, "spec")
    _manifest_entrances(ctx, manifest, app, port, stack)
    _manifest_spec(ctx, spec, stack)
    _manifest_options(ctx, manifest)
    _manifest_envs(ctx, manifest)
    _manifest_top(ctx, manifest)
    _manifest_i18n(ctx, app)


def _manifest_entrances(ctx: _Ctx, manifest: Mapping[str, Any], app: dict[str, Data], port: int | None,
                        stack: Stack | None) -> None:
    """The one entrance the catalog renders: its name, host, port, title and icon."""
    name, title, icon = app.get("name"), app.get("title"), app.get("icon")
    entrances = [e for e in manifest.get("entrances") or () if isinstance(e, dict)]
    if len(entrances) != 1:
        ctx.unmapped(ctx.manifest_origin("entrances:"), f"{len(entrances)} entrances (the catalog renders one)")
    for entrance in entrances[:1]:
        expect = {"name": name, "host": name, "port": stack.port if stack else port, "title": title, "icon": icon,
                  "openMethod": "window", "authLevel": "internal"}
        for key, want in expect.items():
            got = entrance.get(key)
            if got is not None and want is not None and str(got) != str(want):
                ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"entrances[0].{key} {got!r} (the catalog renders "
                                                             f"{want!r})")
        for key in sorted(set(entrance) - set(expect)):
            ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"entrances[0].{key}: {entrance[key]!r} is not modelled")
    if manifest.get("sharedEntrances"):
        ctx.unmapped(ctx.manifest_origin("sharedEntrances:"), "sharedEntrances are not modelled")


PER_MODE_NOTE = "another accelerator mode"  # what a chart of several modes cannot give back: the devices of each


def _manifest_spec(ctx: _Ctx, spec: Mapping[str, Any], stack: Stack | None) -> None:
    """spec fields: versionName, the keys the catalog models, locale and supportArch."""
    version_name = spec.get("versionName")
    version = section(ctx.r.manifest, "metadata").get("version")
    if version_name is not None and str(version_name) != str(version):
        ctx.unmapped(ctx.manifest_origin("versionName:"), f"spec.versionName {version_name!r} (the catalog renders the "
                                                          f"app's version {version!r})")
    known_spec = {"versionName", "fullDescription", "upgradeDescription", "developer", "submitter", "locale",
                  "website", "sourceCode", "license",
                  "supportArch", "onlyAdmin", "accelerator", "requiredDisk", "limitedDisk", "requiredCpu",
                  "limitedCpu", "requiredMemory", "limitedMemory", "requiredGpu", "limitedGpu"}
    for key in sorted(set(spec) - known_spec):
        ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"spec.{key} is not modelled")
    if spec.get("locale") not in (None, ["en-US"]):
        ctx.unmapped(ctx.manifest_origin("locale:"), f"spec.locale {spec.get('locale')} (the catalog writes [en-US])")
    modes = [str(a.get("mode")) for a in spec.get("accelerator") or () if isinstance(a, dict)] \
        if isinstance(spec.get("accelerator"), list) else []
    if len(modes) > 1:  # one chart for several accelerator modes (the catalog's `devices:`, docs/devices.md "Charts")
        ctx.unmapped(ctx.manifest_origin("accelerator:"),
                     f"{PER_MODE_NOTE}: spec.accelerator {', '.join(modes[1:])} and values.yaml modes (imported for "
                     f"the {modes[0]} entry; declare the other devices under `devices:`)")
    elif spec.get("supportArch") not in (None, ["amd64"]):
        ctx.unmapped(ctx.manifest_origin("supportArch:"), f"spec.supportArch {spec.get('supportArch')} (the catalog "
                                                          "writes [amd64])")


def _manifest_options(ctx: _Ctx, manifest: Mapping[str, Any]) -> None:
    """permission and options as the profile and the catalog write them."""
    permission = manifest.get("permission") or {}
    if permission and permission != dict(ctx.profile.permission):
        ctx.unmapped(ctx.manifest_origin("permission:"), f"permission {permission} (the {ctx.profile.name} profile "
                                                         f"asks for {_perm(ctx.profile)})")
    options = manifest.get("options") or {}
    derived = {"LLMGatewaySupported"} if ctx.profile.llm_gateway else set()  # the Router card: the plan derives it
    for key in sorted(set(options) - {"apiTimeout", "dependencies"} - derived):
        ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"options.{key} is not modelled")
    if options.get("apiTimeout") not in (None, 0):
        ctx.unmapped(ctx.manifest_origin("apiTimeout:"), f"options.apiTimeout {options.get('apiTimeout')} (the catalog "
                                                         "writes 0)")
    for dep in options.get("dependencies") or ():
        if isinstance(dep, dict) and dep.get("name") != "olares":
            ctx.unmapped(ctx.manifest_origin("dependencies:"), f"dependency {dep.get('name')} {dep.get('version')} is "
                                                               "not modelled")


def _manifest_envs(ctx: _Ctx, manifest: Mapping[str, Any]) -> None:
    """Manifest envs: only the Hugging Face endpoint and token, filled as the profile says."""
    hf_from = {"HF_ENDPOINT": ctx.profile.hf_endpoint_from, "HF_TOKEN": ctx.profile.hf_token_from}
    for env in manifest.get("envs") or ():
        if not isinstance(env, dict):
            continue
        env_name = str(env.get("envName", ""))
        source = (env.get("valueFrom") or {}).get("envName") if isinstance(env.get("valueFrom"), dict) else None
        if ctx.profile.llm_gateway and env_name in ROUTER_ENVS:
            continue  # the Router card (generator/chart/plan.py): derived from the app's own facts
        if not any(h in env_name for h in ("HUGGINGFACE", "HF_")):
            ctx.unmapped(ctx.manifest_origin(env_name), f"manifest env {env_name} is not modelled")
        elif env_name in hf_from and source is not None and source != hf_from[env_name]:
            ctx.unmapped(ctx.manifest_origin(env_name),
                         f"manifest env {env_name} from {source} (the {ctx.profile.name} profile fills it from "
                         f"{hf_from[env_name]})")


def _manifest_top(ctx: _Ctx, manifest: Mapping[str, Any]) -> None:
    """Top-level keys the catalog does not model; the manifest type."""
    known_top = {"olaresManifest.version", "olaresManifest.type", "apiVersion", "metadata", "entrances", "spec",
                 "permission", "options", "envs", "workloadReplicas", "sharedEntrances"}
    for key in sorted(set(manifest) - known_top):
        ctx.unmapped(ctx.manifest_origin(f"{key}:"), f"{key} is not modelled")
    if manifest.get("olaresManifest.type") not in (None, "app"):
        ctx.unmapped(ctx.manifest_origin("olaresManifest.type"), f"olaresManifest.type "
                                                                 f"{manifest.get('olaresManifest.type')!r}")


def _manifest_i18n(ctx: _Ctx, app: dict[str, Data]) -> None:
    """Translations: the catalog writes none, so a differing one is recorded."""
    for locale, data in ctx.r.i18n.items():
        meta: Mapping[str, Any] = section(data, "metadata")
        ispec: Mapping[str, Any] = section(data, "spec")
        rel = f"i18n/{locale}/OlaresManifest.yaml"
        for key, want in (("title", app.get("title")), ("description", app.get("description"))):
            if meta.get(key) is not None and str(meta[key]) != str(want):
                ctx.unmapped(ctx.lines.origin(rel, f"{key}:"), f"{locale} metadata.{key} differs from the manifest's "
                                                               "(the catalog writes no translations)")
        full = ispec.get("fullDescription")
        if full is not None and str(full) != str(app.get("full_description") or app.get("description")):
            ctx.unmapped(ctx.lines.origin(rel, "fullDescription:"), f"{locale} spec.fullDescription differs from the "
                                                                    "manifest's")


def _profile_note(ctx: _Ctx, wanted: Profile) -> None:
    """The chart is in another manifest profile than the catalog renders: say what a re-render changes."""
    ctx.note(ctx.manifest_origin("apiVersion:"),
             f"the chart is in the {ctx.profile.name} manifest profile (olaresManifest "
             f"{ctx.profile.manifest_version}, apiVersion {ctx.profile.api_version}); the catalog renders "
             f"{wanted.name} (catalog/market.yaml, docs/profiles.md): the manifest version, resource fields, "
             f"permission {_perm(wanted)}, weights folder and Hugging Face envs of a re-render follow it")


__all__ = ["APP_NAME", "bento_benchmark", "PER_MODE_NOTE", "ROUTER_ENVS"]
