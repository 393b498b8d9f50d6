"""One chart -> one app of the catalog (plus the drafts it needs), with everything it could not map.

The result says, per fact of the chart, where it went: a field of the app (or of its stack or model), the
app's `extra_args` or `env` (kept, rendered again), or the app's `unmapped` list (kept for the record:
the catalog cannot express it, so a re-render will not have it). Nothing is dropped silently.
"""

from __future__ import annotations

from typing import cast

from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from generator.core import Data, tuples
from generator.adapters import CappedRenderer
from generator.catalog import Catalog, ChatTemplateFile, Resolved
from generator.chart import PROFILES
from generator.core import InputError
from generator.fit import sized
from generator.importer import programs
from generator.importer.argv import Mapped, map_argv
from generator.importer.drafts import Pool, StackDraft, list_at, map_at
from generator.importer.helmview import marked_envs, render_chart
from generator.importer.source import ChartFiles
from generator.importer.workload import read_pod
from generator.yamlio import Document
from generator.schema import App
from generator.importer.argvmap import _apply_argv
from generator.importer.context import _Ctx, _declared, _launcher
from generator.importer.envmap import _consumed_vars, _download_dir_elsewhere, _env
from generator.importer.features import _features
from generator.importer.launch import (
    _choose_stack,
    _draft_stack,
    _draft_stack_model,
    _engine_launch,
    _no_engine,
    _table,
)
from generator.importer.manifest import (
    PER_MODE_NOTE,
    _manifest_defaults,
    _manifest_rest,
    _meta,
    _meta_bento,
    _profile_note,
)
from generator.importer.podmap import _pod_rest, _pre_exec
from generator.importer.resources import _device, _gpu_memory, _resources
from generator.importer.result import APP_KEYS, Imported, _unsupported, _where_key


def import_chart(files: ChartFiles, cat: Catalog, pool: Pool, renderer: CappedRenderer | None = None,
                 renamed: Mapping[str, str] | None = None) -> Imported:
    """Read one chart into an app of `cat` (drafts go to `pool`). Raises InputError for what must stop the
    run (not a chart, unknown engine, missing value); an unsupported engine is a result, not an error.
    `renamed` maps an upstream app name to the catalog's (catalog/corrections.yaml `renamed`, read by sync)."""
    result = Imported(files.label)
    rendered = render_chart(files, renderer)
    ctx = _Ctx(rendered, result, renamed)
    for note in rendered.notes:
        result.notes.append(str(note))
    result.profile = ctx.profile.name
    if ctx.profile.name != cat.market.profile:
        _profile_note(ctx, PROFILES[cat.market.profile])
    app: dict[str, Data] = {}
    _meta(ctx, app)
    _carried(ctx, cat, files, app)
    pod = read_pod(rendered, ctx.lines)
    engine = _engine_launch(pod, pool)
    if engine is None:
        return _no_engine(result, pod, files)
    launch, family, prefix = engine
    if launch.problems or pod.problems:
        raise InputError(launch.problems + pod.problems)
    launch.argv = _manifest_defaults(ctx, launch.argv)
    result.engine = family
    result.launcher = [(o.line, t) for o, t in launch.pre_exec]  # read by importer/__init__.py (issue 23)
    tokens = launch.argv[prefix:]
    port_text = next((tokens[i + 1].text for i in range(len(tokens) - 1) if tokens[i].text == "--port"), None)
    port = int(port_text) if port_text and port_text.isdigit() else None
    stack = _choose_stack(pool, launch, family, prefix, port, ctx)
    draft_stack: StackDraft | None = None
    if stack is None:
        draft_stack = _draft_stack(pool, launch, family, prefix, port, str(app.get("name") or files.label))
        stack = _draft_stack_model(draft_stack)
    mapped = map_argv(family, tokens, _table(cat, stack if draft_stack is None else None), stack)
    if _declared(family).audio:  # speech recognition on vLLM is recognised by its model
        found = programs.unsupported(launch.image, launch.program, "",
                                     mapped.model_repo[0] if mapped.model_repo else None)
        if found:
            if draft_stack is not None:
                pool.stacks.pop(draft_stack.id, None)
            return _unsupported(result, found)
    result.stack = stack.id
    result.stack_draft = pool.is_draft_stack(stack.id)
    if draft_stack is not None and mapped.fields.get("speculative") and _launcher(family).own_speculative:
        method = mapped.fields["speculative"]["method"]
        list_at(draft_stack.data, "spec_methods").append(method)
        map_at(draft_stack.data, "speculative_args")[method] = []
    app["stack"] = stack.id
    ctx.pod_writes = pod.writes
    _features(ctx, launch, mapped, family, stack, pool, app, pod.writes)
    _download_dir_elsewhere(ctx, launch, mapped)
    _apply_argv(ctx, mapped, app, pool, family, pod.fetches)
    consumed = _consumed_vars(pod, launch)
    _env(ctx, launch, stack, family, consumed, cat, app)
    _gpu_memory(ctx, launch, app)
    _device(ctx, cat, app)  # by the GPU memory it needs
    _meta_bento(ctx, cat, app)  # the hero figure is the app's own device's, or none (importer/bento.py)
    _resources(ctx, launch, app)
    fetch_lines = {f.origin.line for f in pod.fetches if f.by == "launcher script"}
    _pre_exec(ctx, launch, {x for x in fetch_lines if x})
    _manifest_rest(ctx, app, port, stack)
    _pod_rest(ctx, pod, launch, stack.port, stack.health_path)
    for stray in mapped.stack_args_missing:
        ctx.note(f"stack {stack.id}", f"the stack's shared args include `{stray}`, which the chart does not pass; a "
                                      "re-render adds it")
    _finish(ctx, cat, mapped, app)
    _carry_modes(ctx, cat, files)
    return result


def _carried(ctx: _Ctx, cat: Catalog, files: ChartFiles, app: dict[str, Data]) -> None:
    """The fields the chart's catalog block carries (importer/carry.py), over what `_meta` read (a bento figure).
    A further device or stack this catalog has no file for is left out, with a note."""
    from generator.importer.carry import FIELDS, VALUES, carried

    found = carried(files)
    if found is None:
        return
    fields, ctx.stated, line = found
    entries = fields.get("devices")
    if isinstance(entries, list):
        known = [e for e in entries
                 if e.get("device") in cat.devices and ("stack" not in e or e["stack"] in cat.stacks)]
        for entry in (e for e in entries if e not in known):
            ctx.note(f"{files.where(VALUES)}:{line}", f"devices: {entry.get('device')} on stack "
                     f"{entry.get('stack') or 'of the app'}: the catalog has no devices/ or stacks/ file for it; "
                     "left out")
        fields["devices"] = known
        if not known:
            del fields["devices"]
    app.update(cast(dict[str, Data], fields))  # plain values as an app file holds them (a benchmark's date too)
    for key in FIELDS:
        if key not in fields:
            app.pop(key, None)
    ctx.result.carried = FIELDS
    stated = f"; the app states {' and '.join(ctx.stated)} (not left to the fit)" if ctx.stated else ""
    ctx.note(f"{files.where(VALUES)}:{line}",
             f"{', '.join(fields) or 'nothing'} from the chart's catalog block{stated}")


def _carry_modes(ctx: _Ctx, cat: Catalog, files: ChartFiles) -> None:
    """A chart's other accelerator modes back as `devices:` entries when they render the chart again
    (importer/modes.py); else the PER_MODE_NOTE stays."""
    from generator.importer.modes import carry, renders

    result = ctx.result
    notes = [n for n in result.unmapped if PER_MODE_NOTE in n]
    spec = ctx.r.manifest.get("spec") or {}
    accel = spec.get("accelerator") if isinstance(spec, dict) else None
    if result.status != "ok" or result.app is None or len(notes) != 1 or not isinstance(accel, list):
        return
    modes = [str(a.get("mode")) for a in accel if isinstance(a, dict)]
    chart = {rel: text for rel in files.files if (text := files.text(rel)) is not None}
    left = [n for n in result.unmapped if n not in notes]
    app: dict[str, Data] = {k: v for k, v in result.app.items() if k != "unmapped"}
    if left:
        app["unmapped"] = list[Data](left)
    entries: list[dict[str, Data]] | None
    if "devices" in result.carried:  # the catalog block names the devices: kept when they render the chart again
        named = app.get("devices")
        entries = [e for e in named if isinstance(e, dict)] if isinstance(named, list) else []
        if not renders(cat, app, entries, chart, _resolved):
            return
    else:
        entries = carry(cat, app, chart, modes, _resolved)
    if not entries:
        return
    app["devices"] = list[Data](entries)
    result.app = {k: app[k] for k in APP_KEYS if k in app}
    result.unmapped = left
    ctx.note("devices", f"spec.accelerator {', '.join(modes[1:])}: {', '.join(str(e['device']) for e in entries)} "
                        "(the app with these entries renders the chart again)")


def _finish(ctx: _Ctx, cat: Catalog, mapped: Mapped, app: dict[str, Data]) -> None:
    """The app document in the catalog's key order, validated; the result's notes and unmapped facts sorted."""
    result = ctx.result
    for note in mapped.notes:
        result.notes.append(str(note))
    result.unmapped.sort(key=_where_key)
    if result.unmapped:
        app["unmapped"] = list(result.unmapped)
    app.setdefault("status", "active")  # a chart has no status; a new app starts active (--update leaves it)
    ordered = {k: app[k] for k in APP_KEYS if k in app}
    _validate(ctx, ordered)
    if result.status == "ok":
        _omit_sized(ctx, cat, ordered)
    result.app = ordered


def _omit_sized(ctx: _Ctx, cat: Catalog, app: dict[str, Data]) -> None:
    """A GPU memory (and a vLLM utilization) equal to what the fit sizes is written as the catalog writes it:
    left out (generator/fit/sizing.py `sized`). The room the app leaves (`gpu_room`) and its measured calibration
    rows (`calibration`) are part of that sizing: the chart's catalog block's (importer/carry.py), else the existing
    app's. A number the block says the app states is kept."""
    existing = cat.apps.get(str(app.get("name")))
    room = existing.app.gpu_room if existing is not None and "gpu_room" not in ctx.result.carried else None
    calibration = existing.app.calibration if existing is not None and "calibration" not in ctx.result.carried \
        else None
    mib, util = app.get("gpu_memory_mib"), app.get("gpu_memory_utilization")
    # a chart's catalog block says which of them the app states (ctx.stated); without one, the catalog's app does
    block = bool(ctx.result.carried)
    if mib is None or "gpu_memory_mib" in ctx.stated or (
            not block and existing is not None and existing.app.gpu_memory_mib == mib):
        return  # the app states this very number: it is kept
    tries = [("gpu_memory_mib", "gpu_memory_utilization"), ("gpu_memory_mib",)] if util is not None \
        else [("gpu_memory_mib",)]
    if util is not None and ("gpu_memory_utilization" in ctx.stated or (
            not block and existing is not None and existing.app.gpu_memory_utilization == util)):
        tries = [("gpu_memory_mib",)]  # the utilization the app states is kept
    for left_out in tries:
        fields = {k: v for k, v in tuples(app).items() if k not in left_out}
        if room is not None and "gpu_room" not in fields:
            fields["gpu_room"] = room
        if calibration and "calibration" not in fields:
            fields["calibration"] = calibration
        candidate = App.model_validate(fields)
        r = _resolved(cat, candidate)
        if r is None:
            return
        filled = sized(r).app
        if filled.gpu_memory_mib == mib and filled.gpu_memory_utilization == util:
            for key in left_out:
                del app[key]
            ctx.note("gpu_memory_mib", f"{mib} MiB{f' and utilization {util}' if len(left_out) == 2 else ''} is what "
                                       "the fit sizes (generator/fit/sizing.py): left out, as the catalog writes it")
            return


def _resolved(cat: Catalog, app: App) -> Resolved | None:
    model, stack, device = cat.models.get(app.model), cat.stacks.get(app.stack), cat.devices.get(app.device)
    if model is None or stack is None or device is None:
        return None
    template: ChatTemplateFile | None = cat.chat_templates.get(app.chat_template) if app.chat_template else None
    return Resolved(app=app, model=model, stack=stack, device=device, genesis=cat.genesis, file=f"{app.name}.yaml",
                    doc=Document(Path(f"{app.name}.yaml"), {}), market=cat.market, chat_template=template)


def _validate(ctx: _Ctx, app: dict[str, Data]) -> None:
    result = ctx.result
    draft = result.stack_draft or result.model_draft or bool(result.missing)
    if result.stack_draft:
        result.missing.append(f"stack {result.stack} is a draft (drafts/stacks/{result.stack}.yaml)")
    try:
        App.model_validate(tuples(app))
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            if err["type"] == "missing":
                # the quantization names a weight of the model: with the model unknown, the model's reason says it
                said = ("model",) if loc == "quantization" else ()
                if not any(m.startswith((loc, *said)) for m in result.missing):
                    result.missing.append(loc)
            else:
                result.missing.append(f"{loc}: {err['msg']}")
        draft = True
    result.status = "draft" if draft else "ok"


__all__ = ["import_chart", "marked_envs"]
