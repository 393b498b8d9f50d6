"""What an import writes: app files, drafts, and the `--update` edit of existing apps; planned in full first,
written only when the whole run is free of errors.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from pydantic import ValidationError
from ruamel.yaml import YAML

from generator.core import Data, tuples
from generator.catalog import Catalog, display_path
from generator.core import InputError, Problem, translate_os_error
from generator.core import atomic_write_text, writable
from generator.core import safe_line
from generator.importer.appyaml import _plain, emit, read_back, update_text
from generator.importer.result import APP_KEYS, CHART_FIELDS, Imported
from generator.importer.drafts import ModelDraft, Pool, StackDraft
from generator.schema import App

DRAFT_MARK = "[draft]"


class FileWriteJson(TypedDict):
    """One file's entry of `catalog import --json` (`writes`)."""

    path: str
    action: str


class DraftJson(TypedDict):
    """One draft's entry of `catalog import --json` (`drafts`), in its key order; `extends` only for a model."""

    path: str
    kind: str  # model, stack, chat template
    id: str
    apps: list[str]
    extends: NotRequired[str | None]  # the catalog model a model draft adds weights to
    missing: list[str]
    to_fix: list[str]
    guessed: list[str]


@dataclass
class FileWrite:
    path: Path
    text: str | None  # None: nothing to write (unchanged)
    action: str  # new app, updated app, unchanged app, draft app, draft model, draft stack

    def as_dict(self) -> FileWriteJson:
        return {"path": display_path(self.path), "action": self.action}


@dataclass
class Plan:
    writes: list[FileWrite] = field(default_factory=list)
    drafts: list[DraftJson] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)



def _header(result: Imported, label: str) -> list[str]:
    lines = [f"Imported by `catalog import` from {label} ({result.profile} chart)."]
    if result.unmapped:
        lines.append("`unmapped` lists what the chart does that the catalog cannot express (not rendered).")
    lines += [f"note: {note}" for note in result.app_notes]
    return lines


def _draft_header(kind: str, target: str, labels: list[str], missing: list[str], other: list[str],
                  guessed: list[str], adds: list[str]) -> list[str]:
    out = [f"{DRAFT_MARK} written by `catalog import` from {', '.join(labels)}; the catalog does not read drafts/."]
    if adds:
        out.append(f"{DRAFT_MARK} adds to {target}: {'; '.join(adds)}")
    if missing:
        out.append(f"{DRAFT_MARK} missing: {', '.join(missing)}")
    for problem in other:
        out.append(f"{DRAFT_MARK} to fix: {problem}")
    for guess in guessed:
        out.append(f"{DRAFT_MARK} guessed, check: {guess}")
    out.append(f"{DRAFT_MARK} when complete, move it to {target} (then `catalog check`).")
    return out


def _strip_header(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(f"# {DRAFT_MARK}"))


def _entry_repo(entry: dict[str, Data]) -> Data:
    """The repo of a model addition: a weight's or projector's own, a drafter's first weight's."""
    if "repo" in entry:
        return entry["repo"]
    weights = entry.get("weights")
    first = weights[0] if isinstance(weights, list) and weights else None
    return first.get("repo") if isinstance(first, dict) else None


def _model_text(draft: ModelDraft, labels: list[str]) -> str:
    missing, other = draft.missing()
    adds = [f"{key} {entry.get('quant') or entry.get('id')} "
            f"({_entry_repo(entry)})"
            for addition in draft.additions for key, entry in addition.items()]
    header = _draft_header("model", f"models/{draft.id}.yaml", labels, missing, other, draft.guessed,
                           adds if draft.existing is not None else [])
    if draft.base_text is None:
        return emit(draft.data, header)
    yaml = YAML(typ="rt")
    yaml.width = 118
    yaml.indent(mapping=2, sequence=4, offset=2)
    doc = yaml.load(_strip_header(draft.base_text))
    for addition in draft.additions:
        for key, entry in addition.items():
            if key == "mmproj":
                doc["mmproj"] = entry
            else:
                if key not in doc or doc[key] is None:
                    doc[key] = []
                doc[key].append(entry)
    import io

    buf = io.StringIO()
    yaml.dump(doc, buf)
    head = "".join(f"# {line}\n" for line in header)
    return head + buf.getvalue()


def _stack_text(draft: StackDraft, labels: list[str]) -> str:
    missing, other = draft.missing()
    header = _draft_header("stack", f"stacks/{draft.id}.yaml", labels, missing, other, draft.guessed, [])
    return emit(draft.data, header)


def _compare_fields(current: dict[str, Any], new: dict[str, Any],
                    fields: tuple[str, ...] = CHART_FIELDS) -> tuple[dict[str, Any], list[str]]:
    """(fields to set, fields to remove) so that the app's chart fields (`fields`) become `new`'s."""
    try:
        old_app = App.model_validate(tuples(current))
        new_app = App.model_validate(tuples(new))
    except ValidationError:
        return ({k: new[k] for k in fields if k in new and _plain(current.get(k)) != _plain(new[k])},
                [k for k in fields if k in current and k not in new])
    changes: dict[str, Any] = {}
    removals: list[str] = []
    for key in fields:
        if getattr(old_app, key) == getattr(new_app, key):
            continue
        default = App.model_fields[key].get_default(call_default_factory=True)
        if getattr(new_app, key) == default and key not in ("resources",):
            removals.append(key)
        else:
            changes[key] = new[key] if key in new else _plain(getattr(new_app, key).model_dump()
                                                               if hasattr(getattr(new_app, key), "model_dump")
                                                               else getattr(new_app, key))
    return changes, removals


def app_conflict(result: Imported, root: Path, update: bool) -> Problem | None:
    """What stops this imported app's own write (an existing app without --update, a draft over a live app, an
    earlier import of it); None when it can be written. `import_paths` skips such an app alone."""
    name = result.name
    if result.status not in ("ok", "draft") or result.app is None or not name:
        return None
    live = root / "apps" / f"{name}.yaml"
    if live.exists():
        shown = display_path(live)
        if not update:
            return Problem(shown, None, None, f"app {name!r} exists; pass --update to change only the fields that "
                                              "differ from the chart")
        if result.status == "draft":
            return Problem(shown, None, None, "--update would point the app at drafts ("
                           + "; ".join(result.missing) + "); complete them first")
        return None
    target = live if result.status == "ok" else root / "drafts" / "apps" / f"{name}.yaml"
    if target.exists() and not update:
        return Problem(display_path(target), None, None, f"{name!r} was imported before; pass --update to write "
                                                         "it again")
    return None


def _plan_app(result: Imported, name: str, root: Path, update: bool, plan: Plan, label: str) -> None:
    """The write of one imported app: a new app or draft, an --update of a live app, or the problem that stops it."""
    assert result.app is not None, "plan_writes() passes only imported apps"
    live = root / "apps" / f"{name}.yaml"
    draft_path = root / "drafts" / "apps" / f"{name}.yaml"
    conflict = app_conflict(result, root, update)
    if conflict is not None:
        plan.problems.append(conflict)
        return
    if live.exists():
        plan.writes.append(_update(live, result))
        return
    target = live if result.status == "ok" else draft_path
    header = _header(result, label)
    if result.status == "draft":
        first = f"{DRAFT_MARK} app written by `catalog import` from {label}; move it to apps/ once complete."
        missing = _relabel(result.missing, {result.label: label}) if result.label != label else result.missing
        header = [first, *(f"{DRAFT_MARK} missing: {m}" for m in missing), *header[1:]]
    text = emit(result.app, header)
    _check_readback(target, text, result.app, plan)
    plan.writes.append(FileWrite(target, text, "new app" if result.status == "ok" else "draft app"))


def recorded_label(path: Path, root: Path) -> str:
    """How the files an import writes name a chart: relative to the catalog when the chart lies in the catalog's
    repository (the catalog's parent folder), else by its own name only. Never a path of this machine: the app
    file is committed, and `/home/alice/Downloads/x.tgz` says nothing to the next reader (issue 24)."""
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, os.path.dirname(real_root)]) == os.path.dirname(real_root):
        return Path(os.path.relpath(real, real_root)).as_posix()
    return os.path.basename(real) or "chart"


def _relabel(value: Any, labels: dict[str, str]) -> Any:
    """`value` with every chart label in its strings (an origin `label/templates/x.yaml:12: ...`, a draft's source
    ref, an origin quoted inside a reason, `(label/templates/x.yaml:254)`) replaced by its recorded label: where it
    starts the string or follows a space or `(`, and ends there or before `/`, `:`, `)` or a space."""
    if isinstance(value, str):
        for old, new in labels.items():
            if old in value:
                value = re.sub(r"(?:(?<=^)|(?<=[ (]))" + re.escape(old) + r"(?=$|[/: )])",
                               new.replace("\\", "\\\\"), value)
        return value
    if isinstance(value, dict):
        return {k: _relabel(v, labels) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_relabel(v, labels) for v in value)
    return value


def _relabel_all(results: list[Imported], pool: Pool, labels: dict[str, str]) -> None:
    """What the import writes, relabelled (`recorded_label`); the report keeps the paths the user gave."""
    labels = {old: new for old, new in sorted(labels.items(), key=lambda kv: -len(kv[0])) if old != new}
    if not labels:
        return
    for result in results:
        if result.app is not None:
            result.app = _relabel(result.app, labels)
    for draft in pool.models.values():
        draft.data, draft.additions = _relabel(draft.data, labels), _relabel(draft.additions, labels)
        draft.apps = _relabel(draft.apps, labels)
    for sdraft in pool.stacks.values():
        sdraft.data, sdraft.apps = _relabel(sdraft.data, labels), _relabel(sdraft.apps, labels)
    for tdraft in pool.chat_templates.values():
        tdraft.data, tdraft.apps = _relabel(tdraft.data, labels), _relabel(tdraft.apps, labels)


def plan_writes(results: list[Imported], pool: Pool, cat: Catalog, update: bool,
                recorded: dict[str, str] | None = None) -> Plan:
    """The writes of an import; `recorded` maps each chart's label to the name the written files give it."""
    plan = Plan()
    root = cat.root
    recorded = recorded or {}
    _relabel_all(results, pool, recorded)
    seen: dict[str, str] = {}
    for result in results:
        if result.status not in ("ok", "draft") or result.app is None or not result.name:
            continue
        name = result.name
        if name in seen:
            plan.problems.append(Problem(result.label, None, None, f"app {name!r} is also imported from {seen[name]}; "
                                                                  "import one chart per app"))
            continue
        seen[name] = result.label
        _plan_app(result, name, root, update, plan, recorded.get(result.label, result.label))
    _plan_drafts(results, pool, root, plan, recorded)
    contained(plan, root)
    return plan


def _plan_drafts(results: list[Imported], pool: Pool, root: Path, plan: Plan, recorded: dict[str, str]) -> None:
    for draft in pool.models.values():
        if not draft.touched:
            continue
        path = root / "drafts" / "models" / f"{draft.id}.yaml"
        labels = [recorded.get(r.label, r.label) for r in results if r.model == draft.id and r.model_draft] \
            or draft.apps
        missing, other = draft.missing()
        plan.writes.append(FileWrite(path, _model_text(draft, labels), "draft model"))
        plan.drafts.append({"path": display_path(path), "kind": "model", "id": draft.id, "apps": draft.apps,
                            "extends": display_path(draft.existing) if draft.existing else None,
                            "missing": missing, "to_fix": other, "guessed": draft.guessed})
    for sdraft in pool.stacks.values():
        if not sdraft.touched:
            continue
        path = root / "drafts" / "stacks" / f"{sdraft.id}.yaml"
        labels = [recorded.get(r.label, r.label) for r in results if r.stack == sdraft.id] or sdraft.apps
        missing, other = sdraft.missing()
        plan.writes.append(FileWrite(path, _stack_text(sdraft, labels), "draft stack"))
        plan.drafts.append({"path": display_path(path), "kind": "stack", "id": sdraft.id, "apps": sdraft.apps,
                            "missing": missing, "to_fix": other, "guessed": sdraft.guessed})
    for tdraft in pool.chat_templates.values():
        path = root / "drafts" / "chat_templates" / f"{tdraft.id}.yaml"
        missing, other = tdraft.missing()
        header = _draft_header("chat template", f"chat_templates/{tdraft.id}.yaml (with {tdraft.data['file']})",
                               tdraft.apps, missing, other, [], [])
        plan.writes.append(FileWrite(path, emit(tdraft.data, header), "draft chat template"))
        plan.writes.append(FileWrite(path.with_name(str(tdraft.data["file"])), tdraft.text, "draft chat template file"))
        plan.drafts.append({"path": display_path(path), "kind": "chat template", "id": tdraft.id, "apps": tdraft.apps,
                            "missing": missing, "to_fix": other, "guessed": []})


def _check_readback(path: Path, text: str, data: dict[str, Any], plan: Plan) -> None:
    if _plain(read_back(path, text)) != _plain(data):  # pragma: no cover - the emitter's own guarantee
        plan.problems.append(Problem(display_path(path), None, None, "internal: the written file would not read "
                                                                     "back as imported; please report it"))


def _update(path: Path, result: Imported) -> FileWrite:
    assert result.app is not None
    text = path.read_text(encoding="utf-8")
    current = read_back(path, text)
    if not isinstance(current, dict):
        raise InputError([Problem(display_path(path), 1, None, "not a YAML mapping")])
    fields = tuple(dict.fromkeys(CHART_FIELDS + result.carried))  # and a chart's catalog block's (importer/carry.py)
    new = {k: v for k, v in result.app.items() if k in fields}
    changes, removals = _compare_fields(current, {**{k: current[k] for k in current if k not in fields}, **new}, fields)
    if not changes and not removals:
        return FileWrite(path, None, "unchanged app")
    expected = dict(current)
    for key, value in changes.items():
        expected[key] = value
    for key in removals:
        expected.pop(key, None)
    ordered = {k: expected[k] for k in list(current) + [k for k in APP_KEYS if k not in current] if k in expected}
    new_text = update_text(Path(display_path(path)), text, changes, removals, APP_KEYS, ordered)
    return FileWrite(path, new_text, "updated app: " + ", ".join([*changes, *(f"-{k}" for k in removals)]))


def contained(plan: Plan, root: Path) -> None:
    """Every planned write must land inside the catalog folder, through no link that leads out of it: a write
    that would not is a problem of the plan (so nothing at all is written). The app name is validated before any
    path is built (manifest.py `_check_name`); this is the second line, for every file the import writes."""
    real_root = os.path.realpath(root)
    for write in plan.writes:
        real = os.path.realpath(write.path)
        if os.path.commonpath([real, real_root]) != real_root or real == real_root:
            plan.problems.append(Problem(safe_line(write.path), None, None, "outside the catalog folder "
                                         f"{safe_line(display_path(root))}; the import writes only inside it"))


def apply(plan: Plan) -> None:
    for write in plan.writes:
        writable(write.path)  # a link at any target refuses the run before the first write
    for write in plan.writes:
        if write.text is None:
            continue
        try:
            atomic_write_text(write.path, write.text)
        except OSError as exc:
            raise translate_os_error(exc, write.path, "write") from exc


__all__ = ["DraftJson", "FileWrite", "FileWriteJson", "Plan", "app_conflict", "apply", "contained", "plan_writes",
           "recorded_label"]
