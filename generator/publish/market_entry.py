"""One app of an Olares Market Source: its summary and its detail entry, read from a chart as the maintainer's
build script reads it.

The rules are those of github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9
`scripts/build-catalog.js` (docs/market-source.md lists them with the lines they come from):
- the app id is the first 8 hex characters of the MD5 of the app name;
- CPU `4000m` -> "4" (parseInt / 1000), memory, disk and GPU `24Gi` -> "25769803776" (parseInt x the binary
  unit, Ki/Mi/Gi/Ti only), "0" when the field is absent;
- Helm directive lines (`{{ if }}`, `{{ else }}`, `{{ end }}`) are dropped before YAML parsing, keeping the
  `if` branch, and inline `{{ ... }}` expressions are removed;
- every other field is taken from the manifest with the script's JavaScript defaults (`a || b`, where `""`,
  `0`, `false` and null are false but `[]` and `{}` are true).

Both manifest profiles are read: `olares-v2` (olaresManifest 0.10.0, flat `spec.requiredCpu / requiredMemory /
requiredDisk / requiredGpu`, the beclab/api `AppSpec` fields) and `olares-v3` (0.12.0, the same figures in the
first `spec.accelerator` entry, beclab/api `ResourceRequirement`: `requiredGPUMemory`). A v3 chart gives the
entry a v2 chart of the same app gives; the maintainer's script itself reads only the flat fields.

The one deliberate difference: the script stamps `updated_at` and `mergedAt` with the time of the build; here
they are the release date of the version (midnight UTC), so the same releases give the same bytes and hash.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from generator.chart import PROFILES
from generator.chart import Tree
from generator.core import InputError, Problem
from generator.yamlio import chartdata

MANIFEST = "OlaresManifest.yaml"
CHART = "Chart.yaml"
_BYTE_UNITS = (("Ki", 1024), ("Mi", 1048576), ("Gi", 1073741824), ("Ti", 1099511627776))


# ---- JavaScript semantics the script relies on -------------------------------------------------------------


def js_truthy(value: object) -> bool:
    """JavaScript truthiness: null, false, 0, NaN and "" are false; [] and {} are true."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return not (value == 0 or math.isnan(value))
    return True


def js_or(*values: Any) -> Any:
    """`a || b || c`: the first true value, else the last one."""
    for value in values[:-1]:
        if js_truthy(value):
            return value
    return values[-1]


def js_number(value: float) -> str:
    """`String(n)` for the numbers a manifest holds."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def js_string(value: object) -> str:
    """`String(v)` / template-literal interpolation."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


_INT_PREFIX = re.compile(r"^\s*([+-]?)(0[xX][0-9a-fA-F]+|\d+)")


def js_parse_int(text: str) -> float | int:
    """`parseInt(text)`: the leading integer (decimal, or hex after 0x); NaN when there is none."""
    m = _INT_PREFIX.match(text)
    if not m:
        return math.nan
    digits = m.group(2)
    number = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    return -number if m.group(1) == "-" else number


def parse_cpu(value: object) -> str:
    """build-catalog.js parseCpu: "4000m" -> "4", "500m" -> "0.5", 4 -> "4", absent -> "0"."""
    if not js_truthy(value):
        return "0"
    text = js_string(value)
    if text.endswith("m"):
        number = js_parse_int(text)
        return js_number(number / 1000 if not (isinstance(number, float) and math.isnan(number)) else number)
    return text


def parse_bytes(value: object) -> str:
    """build-catalog.js parseBytes: "24Gi" -> "25769803776" (parseInt x unit); other notations unchanged."""
    if not js_truthy(value):
        return "0"
    text = js_string(value)
    for suffix, factor in _BYTE_UNITS:
        if text.endswith(suffix):
            number = js_parse_int(text)
            return js_number(number * factor if isinstance(number, int) else number)
    return text


def app_id(name: str) -> str:
    """The Market's app id: the first 8 hex characters of md5(name)."""
    return hashlib.md5(name.encode("utf-8")).hexdigest()[:8]


def js_value(value: Any) -> JsonValue:
    """What `JSON.stringify(jsyaml.load(text))` keeps of a parsed YAML value: integral floats are integers,
    NaN/Infinity are null, timestamps are ISO strings, keys are strings."""
    if isinstance(value, dict):
        return {_js_key(k): js_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [js_value(v) for v in value]
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo is None else value.astimezone(dt.UTC).replace(tzinfo=None)
        return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
    if isinstance(value, dt.date):
        return value.strftime("%Y-%m-%dT00:00:00.000Z")
    if isinstance(value, (bytes, bytearray)):
        return None
    return cast(JsonValue, value)


def _js_key(key: Any) -> str:
    return js_string(key) if not isinstance(key, str) else key


def _array_index(key: str) -> int | None:
    """A canonical array index ("0", "42", not "042"): JavaScript objects list those keys first, in order."""
    if key.isdigit() and (key == "0" or key[0] != "0"):
        number = int(key)
        if number < 2**32 - 1:
            return number
    return None


def js_ordered(value: Any) -> Any:
    """`value` with every object's keys in JavaScript's property order (array indices first, ascending,
    then the rest in insertion order): what JSON.stringify writes, and so what the hash reads."""
    if isinstance(value, dict):
        indexed = sorted((i, k) for k in value if (i := _array_index(k)) is not None)
        keys = [k for _, k in indexed] + [k for k in value if _array_index(k) is None]
        return {k: js_ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [js_ordered(v) for v in value]
    return value


def js_iso(date: str) -> str:
    """A release date (YYYY-MM-DD) as `new Date(...).toISOString()` writes midnight UTC."""
    return dt.date.fromisoformat(date).strftime("%Y-%m-%dT00:00:00.000Z")


# ---- reading a chart ---------------------------------------------------------------------------------------

_IF = re.compile(r"^\{\{-?\s*if\b")
_ELSE = re.compile(r"^\{\{-?\s*else\b")
_END = re.compile(r"^\{\{-?\s*end\b")
_INLINE = re.compile(r"\{\{.*?\}\}")


def strip_helm_templates(text: str) -> tuple[str, list[int]]:
    """build-catalog.js stripHelmTemplates, and for each kept line its line number in `text`."""
    kept: list[str] = []
    lines: list[int] = []
    in_else = False
    for number, line in enumerate(text.split("\n"), start=1):
        trimmed = line.strip()
        if _IF.match(trimmed):
            continue
        if _ELSE.match(trimmed):
            in_else = True
            continue
        if _END.match(trimmed):
            in_else = False
            continue
        if in_else:
            continue
        kept.append(_INLINE.sub("", line))
        lines.append(number)
    return "\n".join(kept), lines


class _Reader(BaseModel):
    """The fields the entry needs; the rest of the manifest is ignored, as the script ignores it."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


Scalar = str | int | float | bool | None


class ChartYaml(_Reader):
    name: Scalar = None
    version: Scalar = None
    appVersion: Scalar = None


class ManifestMetadata(_Reader):
    name: Scalar = None
    icon: JsonValue = None
    description: JsonValue = None
    title: JsonValue = None
    version: JsonValue = None
    categories: JsonValue = None


class Accelerator(_Reader):
    """An `olares-v3` resource mode (beclab/api manifest ResourceMode + ResourceRequirement)."""

    mode: Scalar = None
    requiredCpu: Scalar = None
    requiredMemory: Scalar = None
    requiredDisk: Scalar = None
    requiredGPUMemory: Scalar = None


class ManifestSpec(_Reader):
    versionName: JsonValue = None
    fullDescription: JsonValue = None
    upgradeDescription: JsonValue = None
    promoteImage: JsonValue = None
    promoteVideo: JsonValue = None
    subCategory: JsonValue = None
    locale: JsonValue = None
    developer: JsonValue = None
    requiredMemory: Scalar = None
    requiredDisk: Scalar = None
    requiredGpu: Scalar = None  # olares-v2 (beclab/api AppSpec yaml:"requiredGpu")
    requiredCpu: Scalar = None
    supportClient: JsonValue = None
    supportArch: JsonValue = None
    target: JsonValue = None
    submitter: JsonValue = None
    doc: JsonValue = None
    website: JsonValue = None
    featuredImage: JsonValue = None
    sourceCode: JsonValue = None
    license: JsonValue = None
    legal: JsonValue = None
    onlyAdmin: JsonValue = None
    accelerator: tuple[Accelerator, ...] = ()  # olares-v3


class ManifestEntrance(_Reader):
    name: JsonValue = None
    host: JsonValue = None
    port: JsonValue = None
    title: JsonValue = None
    icon: JsonValue = None
    authLevel: JsonValue = None
    invisible: JsonValue = None
    openMethod: JsonValue = None
    disablePreload: JsonValue = None


class Manifest(_Reader):
    config_version: Scalar = Field(None, alias="olaresManifest.version")
    config_type: JsonValue = Field(None, alias="olaresManifest.type")
    api_version: Scalar = Field(None, alias="apiVersion")
    metadata: ManifestMetadata | None = None
    spec: ManifestSpec | None = None
    permission: JsonValue = None
    entrances: tuple[ManifestEntrance, ...] | None = None
    middleware: JsonValue = None
    options: JsonValue = None

    @property
    def profile(self) -> str:
        """olares-v3 when the GPU figures sit in `spec.accelerator`, else olares-v2 (the flat fields)."""
        return "olares-v3" if self.spec is not None and self.spec.accelerator else "olares-v2"

    def resources(self) -> tuple[Scalar, Scalar, Scalar, Scalar]:
        """(cpu, memory, disk, gpu) as the manifest states them: the flat v2 fields, else the first v3
        accelerator entry's."""
        spec = self.spec or ManifestSpec()
        flat = (spec.requiredCpu, spec.requiredMemory, spec.requiredDisk, spec.requiredGpu)
        if any(js_truthy(v) for v in flat) or not spec.accelerator:
            return flat
        mode = spec.accelerator[0]
        return mode.requiredCpu, mode.requiredMemory, mode.requiredDisk, mode.requiredGPUMemory


class LocaleManifest(_Reader):
    """An `i18n/<locale>/OlaresManifest.yaml`: only titles and descriptions are read."""

    metadata: ManifestMetadata | None = None
    spec: ManifestSpec | None = None


@dataclass(frozen=True)
class ChartView:
    """One chart as the entry builder reads it."""

    folder: str  # the chart folder's name (the script's last fallback for the app name)
    chart: ChartYaml
    manifest: Manifest
    i18n: tuple[tuple[str, LocaleManifest], ...]  # (locale, manifest), in folder order

    @property
    def name(self) -> str:
        return js_string(js_or(self.chart.name, self.manifest.metadata.name if self.manifest.metadata else None,
                               self.folder))

    @property
    def chart_version(self) -> str:
        return js_string(self.chart.version)

    @property
    def profile(self) -> str:
        """The manifest profile the chart is written in (generator/chart/profiles.py), by its
        `olaresManifest.version` and `apiVersion`; a chart that names neither is read by its resource fields."""
        manifest = self.manifest
        for name, prof in sorted(PROFILES.items()):
            if js_string(manifest.config_version) == prof.manifest_version and (
                    manifest.api_version is None or js_string(manifest.api_version) == prof.api_version):
                return name
        for name, prof in sorted(PROFILES.items()):
            if manifest.api_version is not None and js_string(manifest.api_version) == prof.api_version:
                return name
        return manifest.profile


def _parse(text: str, where: str, *, strip: bool) -> Any:
    body, lines = strip_helm_templates(text) if strip else (text, [])
    try:
        return chartdata.load(body)
    except (MarkedYAMLError, YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (lines[mark.line] if strip and mark is not None and mark.line < len(lines)
                else (mark.line + 1 if mark is not None else None))
        what = (getattr(exc, "problem", None) or str(exc).splitlines()[0]).strip()
        raise InputError([Problem(where, line, None, f"not valid YAML ({what}); re-render the chart")]) from exc


def _model(cls: type[_Reader], data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise InputError([Problem(where, 1, None, f"expected a mapping of {cls.__name__} fields; re-render the chart")])
    try:
        return cls.model_validate(js_value(data))
    except ValidationError as exc:
        problems = [Problem(where, None, ".".join(str(p) for p in err["loc"]) or None, err["msg"])
                    for err in exc.errors()]
        raise InputError(problems) from exc


def read_chart(tree: Tree, folder: str, where: str | None = None) -> ChartView:
    """The chart files of one app ({path: text}) as the entry builder reads them; InputError naming the file."""
    base = where or folder
    for required in (CHART, MANIFEST):
        if required not in tree:
            raise InputError([Problem(f"{base}/{required}", None, None, "missing; a market chart has Chart.yaml and "
                                      "OlaresManifest.yaml")])
    locales = tuple(sorted({p.split("/")[1] for p in tree if p.startswith("i18n/") and p.count("/") == 2
                            and p.endswith(f"/{MANIFEST}")}))
    texts = tuple(tree[f"i18n/{locale}/{MANIFEST}"] for locale in locales)
    return _read_chart(tree[CHART], tree[MANIFEST], locales, texts, folder, base)


@lru_cache(maxsize=4096)
def _read_chart(chart_text: str, manifest_text: str, locales: tuple[str, ...], texts: tuple[str, ...], folder: str,
                base: str) -> ChartView:
    """read_chart of the files' texts, kept by them (a market server reads each chart once per format and for its
    profile: a third of its start at 1,000 apps was parsing the same YAML again); a ChartView is frozen."""
    chart = _model(ChartYaml, _parse(chart_text, f"{base}/{CHART}", strip=False), f"{base}/{CHART}")
    manifest = _model(Manifest, _parse(manifest_text, f"{base}/{MANIFEST}", strip=True), f"{base}/{MANIFEST}")
    i18n = []
    for locale, text in zip(locales, texts, strict=True):
        rel = f"i18n/{locale}/{MANIFEST}"
        i18n.append((locale, _model(LocaleManifest, _parse(text, f"{base}/{rel}", strip=True), f"{base}/{rel}")))
    return ChartView(folder, chart, manifest, tuple(i18n))


# ---- the entries -------------------------------------------------------------------------------------------


class _Entry(BaseModel):
    """Fields in the order the script writes them (the hash reads them in that order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def as_json(self) -> dict[str, JsonValue]:
        return cast(dict[str, JsonValue], js_ordered(self.model_dump(mode="json")))


class Summary(_Entry):
    """An app in /api/v1/appstore/info `data.apps`."""

    id: str
    name: str
    version: JsonValue
    category: JsonValue
    description: JsonValue
    icon: JsonValue
    screenshots: None = None
    tags: None = None
    metadata: None = None
    source: int = 1
    updated_at: str


class Entrance(_Entry):
    name: JsonValue
    host: JsonValue
    port: JsonValue
    title: JsonValue
    icon: JsonValue
    authLevel: JsonValue
    invisible: JsonValue
    openMethod: JsonValue
    disablePreload: JsonValue


class LocaleText(_Entry):
    metadata: dict[str, JsonValue]
    entrances: None = None
    spec: dict[str, JsonValue]


class VersionInfo(_Entry):
    """beclab/market internal/v2/types VersionInfo."""

    appName: str
    version: JsonValue
    versionName: JsonValue
    mergedAt: str
    upgradeDescription: str = ""


class Detail(_Entry):
    """An app in /api/v1/applications/info `apps` (beclab/market ApplicationInfoEntry, as the script fills it)."""

    id: str
    name: str
    cfgType: JsonValue
    chartName: str
    icon: JsonValue
    description: JsonValue
    appID: str
    title: JsonValue
    version: JsonValue
    categories: JsonValue
    versionName: JsonValue
    fullDescription: JsonValue
    upgradeDescription: JsonValue
    promoteImage: JsonValue
    promoteVideo: JsonValue
    subCategory: JsonValue
    locale: JsonValue
    developer: JsonValue
    requiredMemory: str
    requiredDisk: str
    supportClient: JsonValue
    supportArch: JsonValue
    requiredGPU: str
    requiredCPU: str
    rating: int = 0
    target: JsonValue
    permission: JsonValue
    entrances: list[Entrance]
    middleware: JsonValue
    options: JsonValue
    submitter: JsonValue
    doc: JsonValue
    website: JsonValue
    featuredImage: JsonValue
    sourceCode: JsonValue
    license: JsonValue
    legal: JsonValue
    i18n: dict[str, LocaleText]
    namespace: str = ""
    onlyAdmin: JsonValue
    lastCommitHash: str = ""
    createTime: int = 0
    updateTime: int = 0
    count: None = None
    versionHistory: list[VersionInfo]
    screenshots: None = None
    tags: None = None
    metadata: None = None
    updated_at: str


@dataclass(frozen=True)
class AppEntry:
    app_id: str
    summary: Summary
    detail: Detail


def _get(model: BaseModel | None, field: str) -> Any:
    return getattr(model, field) if model is not None else None


def build_entry(view: ChartView, release_date: str) -> AppEntry:
    """The summary and detail build-catalog.js writes for this chart, stamped with the release date."""
    meta, spec, manifest, chart = view.manifest.metadata, view.manifest.spec, view.manifest, view.chart
    name = view.name
    ident = app_id(name)
    stamp = js_iso(release_date)
    categories = js_or(_get(meta, "categories"), [])
    first_category = categories[0] if isinstance(categories, list) and categories else None
    version = js_or(_get(meta, "version"), chart.version)
    description = js_or(_get(meta, "description"), "")
    icon = js_or(_get(meta, "icon"), "")
    cpu, memory, disk, gpu = manifest.resources()
    i18n = {locale: LocaleText(
        metadata={"title": js_or(_get(lm.metadata, "title"), ""),
                  "description": js_or(_get(lm.metadata, "description"), "")},
        spec={"fullDescription": js_or(_get(lm.spec, "fullDescription"), ""),
              "upgradeDescription": js_or(_get(lm.spec, "upgradeDescription"), "")},
    ) for locale, lm in view.i18n}
    locale = (["en-US", *[k for k in i18n if k != "en-US"]] if i18n else js_or(_get(spec, "locale"), ["en-US"]))
    entrances = [Entrance(
        name=js_or(e.name, ""), host=js_or(e.host, ""), port=js_or(e.port, 0), title=js_or(e.title, ""),
        icon=js_or(e.icon, ""), authLevel=js_or(e.authLevel, "private"), invisible=js_or(e.invisible, False),
        openMethod=js_or(e.openMethod, ""), disablePreload=js_or(e.disablePreload, False),
    ) for e in js_or(manifest.entrances, ())]
    summary = Summary(id=ident, name=name, version=version, category=js_or(first_category, ""),
                      description=description, icon=icon, updated_at=stamp)
    detail = Detail(
        id=ident, name=name, cfgType=js_or(manifest.config_type, "app"), chartName=f"{name}-{view.chart_version}.tgz",
        icon=icon, description=description, appID=ident, title=js_or(_get(meta, "title"), name), version=version,
        categories=categories,
        versionName=js_or(_get(spec, "versionName"), chart.appVersion, _get(meta, "version"), ""),
        fullDescription=js_or(_get(spec, "fullDescription"), _get(meta, "description"), ""),
        upgradeDescription=js_or(_get(spec, "upgradeDescription"), ""),
        promoteImage=js_or(_get(spec, "promoteImage"), None),
        promoteVideo=js_or(_get(spec, "promoteVideo"), ""), subCategory=js_or(_get(spec, "subCategory"), ""),
        locale=locale, developer=js_or(_get(spec, "developer"), ""), requiredMemory=parse_bytes(memory),
        requiredDisk=parse_bytes(disk), supportClient=js_or(_get(spec, "supportClient"), {}),
        supportArch=js_or(_get(spec, "supportArch"), []), requiredGPU=parse_bytes(gpu), requiredCPU=parse_cpu(cpu),
        target=js_or(_get(spec, "target"), ""), permission=js_or(manifest.permission, {}), entrances=entrances,
        middleware=js_or(manifest.middleware, None), options=js_or(manifest.options, {}),
        submitter=js_or(_get(spec, "submitter"), "orales-market"), doc=js_or(_get(spec, "doc"), ""),
        website=js_or(_get(spec, "website"), ""), featuredImage=js_or(_get(spec, "featuredImage"), ""),
        sourceCode=js_or(_get(spec, "sourceCode"), ""), license=js_or(_get(spec, "license"), []),
        legal=js_or(_get(spec, "legal"), None), i18n=i18n, onlyAdmin=js_or(_get(spec, "onlyAdmin"), False),
        versionHistory=[VersionInfo(appName=name, version=version, versionName=js_or(chart.appVersion, ""),
                                    mergedAt=stamp)],
        updated_at=stamp,
    )
    return AppEntry(ident, summary, detail)


def latest_order(entries: Sequence[AppEntry]) -> list[str]:
    """The script's `latest`: app names in id order, stably sorted by major*10000 + minor*100 + patch ascending."""

    def key(entry: AppEntry) -> float:
        parts = [_js_number_of(p) for p in js_string(entry.summary.version).split(".")]
        parts += [math.nan] * (3 - len(parts))
        value = parts[0] * 10000 + parts[1] * 100 + parts[2]
        return 0.0 if math.isnan(value) else value

    return [e.summary.name for e in sorted(entries, key=key)]


def _js_number_of(text: str) -> float:
    """`Number(text)` for a version component."""
    try:
        return float(text.strip()) if text.strip() else 0.0
    except ValueError:
        return math.nan


def id_ordered(entries: Iterable[AppEntry]) -> list[AppEntry]:
    """Entries in JavaScript object order of their ids (the script keys `apps` by id, inserted by folder name)."""
    by_id = {e.app_id: e for e in entries}
    return [by_id[k] for k in js_ordered({k: None for k in by_id})]


def entries_for(views: Mapping[str, tuple[ChartView, str]]) -> list[AppEntry]:
    """Entries of {folder: (chart, release date)}, in the script's order (folders by name, then id order)."""
    return id_ordered(build_entry(view, date) for _, (view, date) in sorted(views.items()))


__all__ = ["AppEntry", "ChartView", "Detail", "Manifest", "Summary", "app_id", "build_entry", "entries_for",
           "js_ordered", "latest_order", "parse_bytes", "parse_cpu", "read_chart", "strip_helm_templates"]
