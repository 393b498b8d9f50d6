"""Files the engine reads that the catalog renders itself: the chat template, slot saves and the pip
launcher's packages, from mounts, ConfigMaps and init-container writes.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from typing import Any

from pydantic import TypeAdapter, ValidationError

from generator.core import Data
from generator.engines import CHAT_TEMPLATE_DIR, CHAT_TEMPLATE_FILE, SLOT_DIR
from generator.importer.argv import Mapped
from generator.importer.drafts import Pool
from generator.importer.workload import Launch, pod_spec
from generator.importer.writes import Written, on_volume
from generator.schema import Stack
from generator.schema import PipPackage
from generator.importer import objects
from generator.importer.context import _Ctx, _declared, _launcher, _take

PIP_PACKAGE = TypeAdapter(PipPackage)  # the App schema's package spelling


def _written_for(launch: Launch, path: str, writes: list[Written]) -> Written | None:
    """The file an init container of the engine's pod writes at the engine's `path`: the same file of the same
    volume (mount paths and subPaths followed)."""
    mounts = tuple((str(m.get("mountPath") or ""), str(m.get("name") or ""), str(m.get("subPath") or ""))
                   for m in objects.maps(launch.container, "volumeMounts"))
    wanted = on_volume(mounts, path) if path.startswith("/") else None
    workload = (launch.workload.source, launch.workload.name)
    if wanted is None:
        return None
    found = [w for w in writes if w.workload == workload and on_volume(w.mounts, w.path) == wanted]
    return found[-1] if found else None  # the last write wins


def _mount_at(launch: Launch, folder: str) -> tuple[str, dict[str, Any]] | None:
    """(volume name, volume) of the engine container's mount at `folder`."""
    volumes = {v.get("name"): v for v in objects.items(pod_spec(launch.workload), "volumes") if isinstance(v, dict)}
    for mount in objects.items(launch.container, "volumeMounts"):
        if isinstance(mount, dict) and str(mount.get("mountPath", "")).rstrip("/") == folder.rstrip("/"):
            name = str(mount.get("name"))
            return name, volumes.get(name) or {}
    return None


def _features(ctx: _Ctx, launch: Launch, mapped: Mapped, family: str, stack: Stack, pool: Pool,
              app: dict[str, Data], writes: list[Written]) -> None:
    """`chat_template`, `slot_save`, `audio` and `python_packages`: each back from the spelling the catalog
    renders; what differs from it stays in `extra_args` / `unmapped` as before."""
    extra = mapped.extra
    flag = _launcher(family).chat_template_flag
    found = _take(extra, flag) if flag else None
    write = _written_for(launch, found[0], writes) if found is not None else None
    if found is not None and write is not None and write.text is not None:
        path, origin, start, count = found
        how = "decoding it with base64 -d" if write.how == "base64" else "as is"
        template_id = _chat_template(ctx, pool, write.text, str(write.value_origin),
                                     str(app.get("name") or ctx.result.label))
        app["chat_template"] = template_id
        ctx.handled_writes.add(write)
        ctx.handled_env[write.var] = write.value
        del extra[start:start + count]
        ctx.note(write.origin, f"init container {write.container} writes {write.path} from env {write.var} "
                               f"({how}), which {flag} reads: chat_template {template_id}; the catalog mounts it "
                               f"from a ConfigMap at {CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}")
        found = None
    if found is not None:
        path, origin, start, count = found
        folder, _, key = path.rpartition("/")
        mount = _mount_at(launch, folder) if folder else None
        map_name = str((mount[1].get("configMap") or {}).get("name")) if mount and isinstance(
            mount[1].get("configMap"), dict) else None
        doc = next((d for d in ctx.r.docs if d.kind == "ConfigMap" and d.name == map_name), None)
        data = (doc.body.get("data") or {}) if doc is not None else {}
        if mount is not None and map_name is not None and isinstance(data.get(key), str):
            text = data[key]
            where = ctx.lines.origin(doc.source, key) if doc is not None else origin
            template_id = _chat_template(ctx, pool, text, str(where), str(app.get("name") or ctx.result.label))
            app["chat_template"] = template_id
            ctx.handled_mounts.add(mount[0])
            ctx.handled_maps.add(map_name)
            del extra[start:start + count]
            if path != f"{CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}":
                ctx.note(origin, f"{flag} {path}: the catalog mounts the chat template at "
                                 f"{CHAT_TEMPLATE_DIR}/{CHAT_TEMPLATE_FILE}")
    if _declared(family).slot_save:
        found = _take(extra, "--slot-save-path")
        mount = _mount_at(launch, found[0]) if found is not None else None
        if found is not None and mount is not None and "emptyDir" in mount[1]:
            path, origin, start, count = found
            app["slot_save"] = True
            ctx.handled_mounts.add(mount[0])
            del extra[start:start + count]
            if path.rstrip("/") != SLOT_DIR:
                ctx.note(origin, f"--slot-save-path {path}: the catalog mounts its emptyDir at {SLOT_DIR}")
    if _declared(family).audio:
        found = _take(extra, "--limit-mm-per-prompt")
        if found is not None:
            try:
                limits = json.loads(found[0])
            except ValueError:
                limits = None
            # generator/engines/vllm.py renders {"image": 1 if vision else 0, "audio": 1}
            if isinstance(limits, dict) and set(limits) == {"image", "audio"} and limits["audio"] == 1 \
                    and limits["image"] in (0, 1) and not isinstance(limits["image"], bool):
                app["audio"] = True
                ctx.audio_image = bool(limits["image"])
                del extra[found[2]:found[2] + found[3]]
    _packages(ctx, launch, stack, app)


PIP_LAUNCHER = re.compile(r'^pip install --quiet ((?:[A-Za-z0-9][A-Za-z0-9._=+!-]* )+)&& exec (.+) "\$@"$')


def _packages(ctx: _Ctx, launch: Launch, stack: Stack, app: dict[str, Data]) -> None:
    """The pip launcher generator/engines/base.py `command` writes: `sh -c 'pip install --quiet PKG... && exec
    <stack command> "$@"' --`."""
    command = [str(x) for x in objects.items(launch.container, "command")]
    if launch.script is None or len(command) != 4 or command[:2] != ["sh", "-c"] or command[3] != "--":
        return
    match = PIP_LAUNCHER.match(command[2].replace("$$", "$").strip())
    if not match or match.group(2) != shlex.join(stack.command):
        return
    packages = match.group(1).split()
    try:
        for package in packages:
            PIP_PACKAGE.validate_python(package)
    except ValidationError:
        return
    app["python_packages"] = list[Data](packages)
    ctx.handled_lines |= {o.line for o, t in launch.pre_exec if t.startswith("pip install") and o.line}
    ctx.packages_launcher = True


def _chat_template(ctx: _Ctx, pool: Pool, text: str, ref: str, app: str) -> str:
    """The catalog's chat template with these bytes (by sha256), else a draft of one."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    known = next((t for t in pool.cat.chat_templates.values() if t.meta.sha256 == digest), None)
    if known is not None:
        return known.meta.id
    template_id = pool.add_chat_template(text, digest, ref, app)
    ctx.result.missing.append(f"chat_template {template_id}: a draft (drafts/chat_templates/{template_id}.yaml), "
                              "say what it changes (`purpose`) and move it with its .jinja to chat_templates/")
    return template_id


__all__ = ["PIP_LAUNCHER", "PIP_PACKAGE"]
