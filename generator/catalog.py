"""The catalog aggregate: load every kind, index by id, resolve references, select apps."""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar
from collections.abc import Callable, Collection, Iterable

from pydantic import BaseModel

from generator.core import InputError, Problem, UsageError, translate_os_error
from generator.core import embedded_catalog
from generator.core import secrets_in
from generator.yamlio import Document, load_model, read_document
from generator.schema import FormName
from generator.schema import (App, Calibration, ChatTemplate, Device, DeviceTarget, GenesisRegistry, Market, Model,
                              Stack, WeightFile)

T = TypeVar("T", bound=BaseModel)
Identified = TypeVar("Identified", Model, Stack, Device)  # the kinds of file that carry an `id`

EMBEDDED = embedded_catalog()  # the catalog shipped with the tool (generator/core/locate.py finds it)
MARKET_FILE = "market.yaml"  # the catalog's market settings (generator/schema/market.py); optional


@dataclass(frozen=True)
class ChatTemplateFile:
    """A chat template of the catalog with its file's text (checked against its recorded sha256)."""

    meta: ChatTemplate
    text: str


def display_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Target:
    """One more device an app targets (`devices:`), its references looked up: the device, the stack that runs there
    (the app's own unless the entry names one) and the entry itself (docs/devices.md)."""

    device: Device
    stack: Stack
    entry: DeviceTarget
    index: int  # its position in `devices:` (for file:line)


@dataclass
class Resolved:
    """An app with its references looked up."""

    app: App
    model: Model
    stack: Stack
    device: Device
    genesis: GenesisRegistry | None
    file: str
    doc: Document
    market: Market = field(default_factory=Market)
    chat_template: ChatTemplateFile | None = None
    sized: tuple[str, ...] = ()  # app fields the memory fit filled in (generator/fit/sizing.py)
    targets: tuple[Target, ...] = ()  # the more devices it targets (`devices:`), in the app's order

    def line(self, *loc: str | int) -> int:
        return self.doc.line_of(tuple(loc))

    @property
    def form(self) -> FormName:
        """The app form its chart takes (docs/forms.md): the app's own `form:`, else the store's."""
        return self.app.form or self.market.form

    @property
    def mmproj(self) -> WeightFile | None:
        """The vision projector this app loads (app `mmproj` picks one of the model's, else the model's `mmproj`)."""
        return self.model.projector(self.app.mmproj)

    def on(self, target: Target) -> Resolved:
        """This app as it runs on `target`'s device: its device and stack, the entry's fields over the app's, and what
        was measured or stated for its own device left out (benchmarks, upstream's measured values, the GPU memory
        and vLLM utilization, and calibration rows of another image). The context is the entry's or the app's: the
        fit (generator/fit/devices.py) chooses one where the entry states none."""
        same = target.stack.image == self.stack.image
        app = variant_app(self.app, target.entry, same_image=same)
        if same:
            app = app.model_copy(update={"calibration": app.calibration + _carried(self.app.calibration, self.device,
                                                                                   target.device)})
        return replace(self, device=target.device, stack=target.stack, targets=(), sized=(), app=app)


def _total(device: Device, cap_mib: int) -> int:
    """The total an engine reads in the pod (the device's own, or its HAMi cap: Device.reported_total)."""
    return device.memory_mib if device.reported_total == "device" else cap_mib


def _carried(rows: tuple[Calibration, ...], own: Device, other: Device) -> tuple[Calibration, ...]:
    """vLLM's measured KV availability carried to another device: what it measures is the memory besides the KV
    (util x total - available), the same on any card for the same image and settings; the row's utilization is
    rescaled so that util x the other device's total is the measured util x total (rows that would need more than
    the whole card are dropped)."""
    out = []
    for row in rows:
        if row.measure != "kv_available" or row.cap_mib is None or row.gpu_memory_utilization is None:
            continue
        util = row.gpu_memory_utilization * _total(own, row.cap_mib) / _total(other, row.cap_mib)
        if util <= 1:
            out.append(row.model_copy(update={
                "gpu_memory_utilization": round(util, 6),
                "what": f"{row.what} (on {own.name}; carried with its util x total)"[:2000]}))
    return tuple(out)


# calibration rows that hold for the device they were measured on only (its cap, its total): not carried as they are
DEVICE_MEASURES = ("kv_available", "gpu_total")


def variant_app(app: App, entry: DeviceTarget, *, same_image: bool) -> App:
    """`app` with a `devices:` entry's fields over its own (see `Resolved.on`)."""
    spec = None if entry.speculative == "off" else entry.speculative or app.speculative
    update: dict[str, object] = {
        "device": entry.device, "stack": app.stack if entry.stack is None else entry.stack,
        "context_length": entry.context_length or app.context_length,
        "kv_cache_type": entry.kv_cache_type or app.kv_cache_type,
        "kv_cache_type_v": entry.kv_cache_type_v or (app.kv_cache_type_v if entry.kv_cache_type is None else None),
        "speculative": spec, "extra_args": app.extra_args if entry.extra_args is None else entry.extra_args,
        "gpu_memory_mib": entry.gpu_memory_mib, "gpu_memory_utilization": None, "devices": (),
        "benchmarks": (), "measured": (),
        "calibration": tuple(c for c in app.calibration if c.measure not in DEVICE_MEASURES) if same_image else (),
    }
    return app.model_copy(update=update)


@dataclass
class Catalog:
    root: Path
    models: dict[str, Model] = field(default_factory=dict)
    stacks: dict[str, Stack] = field(default_factory=dict)
    devices: dict[str, Device] = field(default_factory=dict)
    genesis: GenesisRegistry | None = None
    market: Market = field(default_factory=Market)
    chat_templates: dict[str, ChatTemplateFile] = field(default_factory=dict)
    apps: dict[str, Resolved] = field(default_factory=dict)

    def select(self, names: Iterable[str] = (), *, include_removed: bool = False) -> list[Resolved]:
        names = list(names)
        unknown = [n for n in names if n not in self.apps]
        if unknown:
            raise UsageError(f"unknown app(s): {', '.join(_suggest(n, self.apps) for n in unknown)}; "
                             "`catalog list` shows the apps")
        chosen = [self.apps[n] for n in names] if names else list(self.apps.values())
        if not include_removed and not names:
            chosen = [r for r in chosen if r.app.status != "removed"]
        return sorted(chosen, key=lambda r: r.app.name)

    def file_of(self, name: str) -> Path:
        return self.root / "apps" / f"{name}.yaml"


def _suggest(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"{name} (did you mean {close[0]}?)" if close else name


MAX_CATALOG_FILE_BYTES = 2**20  # 1 MiB: the largest catalog file today is ~10 KiB


def _inside(path: Path, root: Path) -> bool:
    """Whether `path`, symbolic links resolved, lies in the folder `root` (itself resolved)."""
    try:
        return os.path.commonpath([os.path.realpath(path), root]) == str(root)
    except ValueError:
        return False


def _files(folder: Path, root: Path, problems: list[Problem]) -> list[Path]:
    """The `*.yaml` files of one catalog folder. A symbolic link (the folder itself or a file) that leads
    outside the catalog is refused and never read: `ln -s /etc/shadow apps/x.yaml` must not echo the file."""
    if not folder.is_dir():
        return []
    if not _inside(folder, root):
        problems.append(Problem(display_path(folder), None, None, "a symbolic link to a folder outside the "
                                "catalog; refused (copy the folder into the catalog)"))
        return []
    out = []
    for path in sorted(folder.glob("*.yaml")):
        if not _inside(path, root):
            problems.append(Problem(display_path(path), None, None, "a symbolic link to a file outside the "
                                    "catalog; refused, not read (copy the file into the catalog)"))
        elif path.is_file():
            out.append(path)
    return out


def _load_all(folder: Path, cls: type[T], problems: list[Problem]) -> list[tuple[T, Document, str]]:
    out = []
    root = Path(os.path.realpath(folder.parent))
    for path in _files(folder, root, problems):
        name = display_path(path)
        try:
            doc = read_document(path, name, max_bytes=MAX_CATALOG_FILE_BYTES)
            secret_problems(doc, name)
            out.append((load_model(cls, doc, name), doc, name))
        except InputError as exc:  # a FileSystemError (an unreadable file) is no catalog problem: it propagates
            problems.extend(exc.problems)
    return out


def load_device_file(path: Path) -> Device:
    """One device file outside a catalog (a card a user describes: `catalog explain APP --device FILE.yaml`), checked
    as the catalog's own device files are: `file:line: what` on a bad field, InputError."""
    name = display_path(path)
    doc = read_document(path, name, max_bytes=MAX_CATALOG_FILE_BYTES)
    secret_problems(doc, name)
    return load_model(Device, doc, name)


SECRET_FIX = ("a committed catalog holds no secret: remove it (rule SEC001, docs/security.md). The chart gives the "
              "engine HF_TOKEN from the Olares env the manifest declares under `envs` (OLARES_USER_HUGGINGFACE_TOKEN "
              "in olares-v2, OLARES_SYSTEM_HUGGINGFACE_TOKEN in olares-v3), which each user sets in Olares; any other "
              "secret belongs in a Kubernetes Secret of the cluster, never in the catalog")


def secret_problems(doc: Document, name: str) -> None:
    """InputError at each literal secret of a catalog file (core/redact.py `secrets_in`): it would be printed by
    `explain` and published in values.yaml. The value itself is never shown."""
    found = secrets_in(doc.data)
    if found:
        raise InputError([Problem(name, doc.line_of(loc), ".".join(str(p) for p in loc) or None,
                                  f"{what} in the open; {SECRET_FIX}") for loc, what in found])


def _index(items: list[tuple[Identified, Document, str]], kind: str,
           problems: list[Problem]) -> dict[str, Identified]:
    index: dict[str, Identified] = {}
    for obj, doc, name in items:
        key = obj.id
        if key in index:
            problems.append(Problem(name, doc.line_of(("id",)), "id",
                                    f"duplicate {kind} id {key!r}; ids must be unique"))
        index[key] = obj
        stem = Path(name).stem
        if stem != key:
            problems.append(Problem(name, doc.line_of(("id",)), "id",
                                    f"{kind} id {key!r} must equal the file name {stem!r}"))
    return index


def load_catalog(root: Path | str | None = None) -> Catalog:
    """Load and cross-check a catalog folder; raises CatalogError with every problem found."""
    root = Path(root) if root else EMBEDDED
    if not (root / "apps").is_dir():
        raise UsageError(f"{display_path(root)}: not a catalog (no apps/ folder); pass --catalog DIR")
    problems: list[Problem] = []
    cat = Catalog(root=root)
    failed: dict[str, set[str]] = {}  # kind -> names whose file failed: what names them follows that error
    mark = len(problems)
    cat.models = _index(_load_all(root / "models", Model, problems), "model", problems)
    failed["model"], mark = _failed(problems, mark), len(problems)
    cat.stacks = _index(_load_all(root / "stacks", Stack, problems), "stack", problems)
    failed["stack"], mark = _failed(problems, mark), len(problems)
    cat.devices = _index(_load_all(root / "devices", Device, problems), "device", problems)
    failed["device"], mark = _failed(problems, mark), len(problems)
    registries = _load_all(root / "genesis", GenesisRegistry, problems)
    cat.genesis = registries[0][0] if registries else None
    cat.market = _load_market(root, problems)
    _check_market_devices(cat, problems)
    cat.chat_templates = _load_chat_templates(root, problems)
    mark = len(problems)
    loaded = _load_all(root / "apps", App, problems)
    failed["app"] = _failed(problems, mark)
    for app, doc, name in loaded:
        resolved = _resolve(cat, app, doc, name, problems, failed)
        if resolved:
            cat.apps[app.name] = resolved
        else:
            failed["app"].add(app.name)
    _check_replacements(cat, problems, failed["app"])
    if problems:
        raise InputError(problems)
    return cat


AFTER = "(after the error above)"


def _failed(problems: list[Problem], since: int) -> set[str]:
    """The names (file stems) of the files with a problem among problems[since:]."""
    return {Path(p.file).stem for p in problems[since:] if p.file}


def _load_market(root: Path, problems: list[Problem]) -> Market:
    path = root / MARKET_FILE
    if not path.is_file():
        return Market()
    name = display_path(path)
    try:
        return load_model(Market, read_document(path, name), name)
    except InputError as exc:
        problems.extend(exc.problems)
        return Market()


def _check_market_devices(cat: Catalog, problems: list[Problem]) -> None:
    """Every device the store targets (market.yaml `devices:`) is a device of the catalog."""
    path = cat.root / MARKET_FILE
    for device in cat.market.devices:
        if device not in cat.devices:
            known = ", ".join(sorted(cat.devices)) or "none"
            problems.append(Problem(display_path(path), _line_of(path, device), "devices",
                                    f"device {device!r} is not in devices/ (known: {known}); "
                                    "list only catalog devices"))


def _line_of(path: Path, text: str) -> int | None:
    """1-based line of the first line of the file holding `text`; None when none does or it cannot be read."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next((n for n, line in enumerate(lines, start=1) if text in line), None)


def _load_chat_templates(root: Path, problems: list[Problem]) -> dict[str, ChatTemplateFile]:
    out: dict[str, ChatTemplateFile] = {}
    folder = root / "chat_templates"
    for meta, doc, name in _load_all(folder, ChatTemplate, problems):
        if Path(name).stem != meta.id:
            problems.append(Problem(name, doc.line_of(("id",)), "id", f"chat template id {meta.id!r} must equal the "
                                    f"file name {Path(name).stem!r}"))
            continue
        path = folder / meta.file
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            problems.append(Problem(name, doc.line_of(("file",)), "file", f"{display_path(path)} does not exist; "
                                    "put the template next to this file"))
            continue
        except OSError as exc:
            raise translate_os_error(exc, path, "read") from exc
        digest = hashlib.sha256(data).hexdigest()
        if digest != meta.sha256:
            problems.append(Problem(name, doc.line_of(("sha256",)), "sha256", f"{meta.file} has sha256 {digest}, not "
                                    "the recorded one; check the change and record the new sum"))
            continue
        try:
            out[meta.id] = ChatTemplateFile(meta, data.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(Problem(name, doc.line_of(("file",)), "file", f"{meta.file} is not UTF-8 text"))
    return out


def _resolve(cat: Catalog, app: App, doc: Document, name: str, problems: list[Problem],
             failed: dict[str, set[str]] | None = None) -> Resolved | None:
    def bad(field_: str, message: str, follows: bool = False) -> None:
        problems.append(Problem(name, doc.line_of((field_,)), field_, message, follows))

    before = len(problems)
    if Path(name).stem != app.name:
        bad("name", f"app name {app.name!r} must equal the file name {Path(name).stem!r}")
    if app.name in cat.apps:
        bad("name", f"duplicate app name {app.name!r}")
    model = cat.models.get(app.model)
    stack = cat.stacks.get(app.stack)
    device = cat.devices.get(app.device)
    for kind, key, found, pool in (("model", app.model, model, cat.models), ("stack", app.stack, stack, cat.stacks),
                                   ("device", app.device, device, cat.devices)):
        if found is None and failed is not None and key in failed.get(kind, ()):
            bad(kind, f"{kind} {key!r} did not load {AFTER}", follows=True)
        elif found is None:
            bad(kind, f"unknown {kind} {key!r}; known: {', '.join(sorted(pool)) or 'none'}")
    if model is not None:
        _check_model_files(app, model, stack, doc, name, problems, bad)
    template = _check_extras(cat, app, model, stack, device, bad)
    if app.genesis_patches:
        _check_genesis_patches(cat, app, doc, name, problems, bad)
    if model is not None and stack is not None and len(problems) == before:
        _check_stack_offers(app, model, stack, doc, name, problems)
    if len(problems) > before or model is None or stack is None or device is None:
        return None
    targets = device_targets(cat, app, model, stack, doc, name, problems)
    if len(problems) > before:
        return None
    return Resolved(app=app, model=model, stack=stack, device=device, genesis=cat.genesis, file=name, doc=doc,
                    market=cat.market, chat_template=template, targets=targets)


def device_targets(cat: Catalog, app: App, model: Model, stack: Stack, doc: Document, name: str,
             problems: list[Problem]) -> tuple[Target, ...]:
    """The `devices:` entries with their device and stack, each variant checked as the app is (the stack offers its
    speculative method, the engine its options), its problems named `devices.<i>.<field>`."""
    out = []
    for index, entry in enumerate(app.devices):
        def bad(field_: str, message: str, index: int = index) -> None:
            problems.append(Problem(name, doc.line_of(("devices", index, field_)), f"devices.{index}.{field_}",
                                    message))

        device = cat.devices.get(entry.device)
        on = cat.stacks.get(entry.stack) if entry.stack else stack
        if device is None:
            bad("device", f"unknown device {entry.device!r}; known: {', '.join(sorted(cat.devices)) or 'none'}")
        if on is None:
            bad("stack", f"unknown stack {entry.stack!r}; known: {', '.join(sorted(cat.stacks))}")
        if device is None or on is None:
            continue
        variant = variant_app(app, entry, same_image=on.image == stack.image)
        found: list[Problem] = []

        def note(field_: str, message: str, found: list[Problem] = found) -> None:
            found.append(Problem(name, None, field_, message))

        _check_engine_features(variant, on, note)
        _check_stack_offers(variant, model, on, doc, name, found)
        for problem in found:
            bad(problem.field or "stack", f"on {device.name} (stack {on.id}): {problem.message}")
        out.append(Target(device=device, stack=on, entry=entry, index=index))
    return tuple(out)


def _check_model_files(app: App, model: Model, stack: Stack | None, doc: Document, name: str,
                       problems: list[Problem], bad: Callable[[str, str], None]) -> None:
    """The model has the app's quantization, its drafter and, for a llama.cpp vision app, a projector."""
    if model.weight(app.quantization) is None:
        bad("quantization", f"model {model.id!r} has no quantization {app.quantization!r}; known: "
            + ", ".join(w.quant for w in model.weights))
    drafter = app.speculative.drafter if app.speculative else None
    if drafter and model.drafter(drafter) is None:
        problems.append(Problem(name, doc.line_of(("speculative", "drafter")), "speculative.drafter",
                                f"model {model.id!r} has no drafter {drafter!r}; known: "
                                + (", ".join(d.id for d in model.drafters) or "none")))
    if app.vision and model.mmproj is None and stack is not None and stack.family.gguf:
        bad("vision", f"model {model.id!r} has no vision projector (mmproj); set vision: false")
    if app.mmproj is not None and model.projector(app.mmproj) is None:
        bad("mmproj", f"model {model.id!r} has no projector {app.mmproj!r}; known: "
            + (", ".join(p.quant for p in model.projectors()) or "none"))


def _check_genesis_patches(cat: Catalog, app: App, doc: Document, name: str, problems: list[Problem],
                           bad: Callable[[str, str], None]) -> None:
    """Every Genesis patch the app names is in the catalog's genesis/ registry."""
    if cat.genesis is None:
        bad("genesis_patches", "the catalog has no genesis/ registry")
        return
    for index, pid in enumerate(app.genesis_patches):
        if cat.genesis.patch(pid) is None:
            problems.append(Problem(name, doc.line_of(("genesis_patches", index)), f"genesis_patches.{index}",
                                    f"unknown Genesis patch {pid!r}; see catalog/genesis/"))


def _check_extras(cat: Catalog, app: App, model: Model | None, stack: Stack | None, device: Device | None,
                  bad: Callable[[str, str], None]) -> ChatTemplateFile | None:
    """Audio, the chat template, slot saving, pip packages and the GPU room; returns the app's chat template."""
    if model is not None and app.audio and not model.architecture.audio:
        bad("audio", f"model {model.id!r} has no audio encoder (architecture.audio); set audio: false")
    if stack is not None:
        _check_engine_features(app, stack, bad)
    template = cat.chat_templates.get(app.chat_template) if app.chat_template else None
    if app.chat_template and template is None:
        bad("chat_template", f"unknown chat template {app.chat_template!r}; known: "
            f"{', '.join(sorted(cat.chat_templates)) or 'none (add catalog/chat_templates/<id>.yaml)'}")
    if device is not None and app.gpu_room is not None and app.gpu_room.mib >= device.memory_mib:
        bad("gpu_room", f"gpu_room.mib {app.gpu_room.mib} is not below the {device.memory_mib} MiB of {device.name}")
    return template


def _check_engine_features(app: App, stack: Stack, bad: Callable[[str, str], None]) -> None:
    """Fields that only one engine family turns into arguments."""
    if app.audio and not stack.family.audio:
        bad("audio", f"audio input is a vLLM option; stack {stack.id} is {stack.engine}")
    if app.python_packages and not stack.command:
        bad("python_packages", f"stack {stack.id} runs its image's entrypoint: set the stack's `command` so the "
            "packages can be installed before it")
    if app.slot_save and not stack.family.slot_save:
        bad("slot_save", f"--slot-save-path is a llama-server option; stack {stack.id} runs {stack.fork} "
            f"{stack.engine}")


def _check_stack_offers(app: App, model: Model, stack: Stack, doc: Document, name: str,
                        problems: list[Problem]) -> None:
    """What the engine needs to build the app's argv: the stack offers the speculative method, the app gives what
    the stack's spelling of it takes (`{drafter}`, `{tokens}`), and a llama.cpp stack has a GGUF file to fetch.
    Checked here, when the catalog is resolved, so render, bump, explain and check all report it the same way."""
    def bad(loc: tuple[str, ...], message: str) -> None:
        problems.append(Problem(name, doc.line_of(loc), ".".join(loc), message))

    spec = app.speculative
    if spec is not None:
        if spec.method not in stack.spec_methods:
            offered = ", ".join(stack.spec_methods)
            bad(("speculative", "method"), f"stack {stack.id} ({stack.image}) does not offer speculative method "
                f"`{spec.method}`; " + (f"use one of: {offered}" if offered else "remove speculative (it offers none)"))
        else:
            spelling = stack.speculative_args[spec.method]  # the stack schema gives every offered method a spelling
            shown = " ".join(spelling)
            if "{drafter}" in spelling and not spec.drafter:
                known = ", ".join(d.id for d in model.drafters) or f"none in model {model.id!r}: add one there"
                bad(("speculative", "drafter"), f"stack {stack.id} spells `{spec.method}` with a drafter file "
                    f"({shown}) but none is set; set speculative.drafter ({known})")
            if "{tokens}" in spelling and spec.tokens is None:
                bad(("speculative", "tokens"), f"stack {stack.id} spells `{spec.method}` with a draft length ({shown}) "
                    "but none is set; set speculative.tokens (e.g. 3)")
    if stack.family.gguf:
        _check_gguf_files(app, model, stack, bad)


def _check_gguf_files(app: App, model: Model, stack: Stack, bad: Callable[[tuple[str, ...], str], None]) -> None:
    """A llama.cpp stack downloads single GGUF files: every weight it fetches names its `file`."""
    def check(loc: tuple[str, ...], what: str, weight: WeightFile | None) -> None:
        if weight is not None and weight.file is None:
            bad(loc, f"{what} ({weight.repo}) has no `file`; stack {stack.id} downloads one GGUF file: add `file:` to "
                f"it in model {model.id!r}")

    check(("quantization",), f"weights {app.quantization!r}", model.weight(app.quantization))
    drafter = model.drafter(app.speculative.drafter) if app.speculative and app.speculative.drafter else None
    if drafter is not None:
        check(("speculative", "drafter"), f"drafter {drafter.id!r}", drafter.weights[0])
    if app.vision:
        check(("vision",), "the vision projector (mmproj)", model.projector(app.mmproj))


def _check_replacements(cat: Catalog, problems: list[Problem], failed: Collection[str] = ()) -> None:
    for resolved in cat.apps.values():
        target = resolved.app.replaced_by
        if target and target in failed:  # its file is there but did not load: that error is the cause
            problems.append(Problem(resolved.file, resolved.line("replaced_by"), "replaced_by",
                                    f"app {target!r} did not load {AFTER}", follows=True))
        elif target and target not in cat.apps:
            problems.append(Problem(resolved.file, resolved.line("replaced_by"), "replaced_by",
                                    f"unknown app {target!r}; name an app of this catalog"))
