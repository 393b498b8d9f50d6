"""Models and stacks a chart needs and the catalog lacks: written as drafts that say which facts are missing.

Decision: a draft is a catalog file that does not validate yet, so it is kept out of the folders the
catalog loads. New files go to `<catalog>/drafts/{models,stacks,apps}/`; `catalog` commands never read
`drafts/`, so the catalog stays loadable. Each draft starts with a comment naming what is missing (the
fields the schema requires that a chart cannot tell: a model's architecture from config.json or the GGUF
metadata, a weight file's size, a stack's engine version) and what was guessed; completed, it is moved
to `models/`, `stacks/` or `apps/` and validates there. A weight, drafter or projector missing from an
existing model is drafted as that model's file with the entry added (drafts/models/<id>.yaml, a copy
of models/<id>.yaml with its comments); an app that needs a draft is itself a draft.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from generator.core import Data, tuples
from generator.catalog import Catalog
from generator.core import InputError, Problem
from generator.schema import ChatTemplate, Model, Stack

GGUF_QUANT = re.compile(r"(?i)(?:^|[-_.])"
                        r"((?:UD-)?(?:I?Q[0-9](?:_[0-9])?(?:_K)?(?:_[A-Z]{1,2})?|BF16|F16|F32|MXFP4(?:_MOE)?))$")
REPO_QUANT_TOKENS = ("nvfp4", "mxfp4", "fp8", "awq", "gptq", "int4", "int8", "autoround", "4bit", "8bit", "bf16")
BASE_NOISE = re.compile(r"(?i)[-_.](gguf|it|instruct|mtp|mp|\d+bit|awq|gptq|int4|int8|fp8|nvfp4|mxfp4|bf16|f16|"
                        r"autoround|dflash|assistant)(?=$|[-_.])")
DRAFTER_KIND = {"mtp": "mtp-assistant", "dflash": "dflash", "draft": "draft-model"}


def slug(text: str, limit: int = 63) -> str:
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return (out or "imported")[:limit].rstrip("-._")


def free_id(base: str, taken: Callable[[str], bool], limit: int = 63) -> str:
    """`base`, or where that is taken `base-imported`, `base-imported-2`, ...: the suffix always fits in `limit`
    (an id at the limit, `vllm-openai-sha256-<hash>`, made the same id again and looped for ever)."""
    candidate, n = base, 0
    while taken(candidate):
        n += 1
        suffix = "-imported" if n == 1 else f"-imported-{n}"
        candidate = slug(base[:limit - len(suffix)].rstrip("-._") + suffix, limit)
    return candidate


def base_name(repo: str, file: str | None = None) -> str:
    """A repo's model name without its publisher and quantization words: `unsloth/Qwen3.6-27B-GGUF` -> `Qwen3.6-27B`."""
    name = repo.split("/", 1)[-1]
    previous = None
    while previous != name:
        previous = name
        name = BASE_NOISE.sub("", name)
    return name


def gguf_quant(file: str) -> str | None:
    stem = re.sub(r"(?i)\.gguf$", "", file.rsplit("/", 1)[-1])
    match = GGUF_QUANT.search(stem)
    return match.group(1).lower() if match else None


def repo_format(repo: str) -> tuple[str, str | None]:
    """(quant id, weight format or None when it cannot be told) of a safetensors repo."""
    lower = repo.split("/", 1)[-1].lower()
    tokens = [t for t in REPO_QUANT_TOKENS if re.search(rf"(^|[-_.]){t}($|[-_.])", lower)]
    fmt = None
    if "nvfp4" in tokens:
        fmt = "nvfp4"
    elif "fp8" in tokens:
        fmt = "fp8"
    elif any(t in tokens for t in ("awq", "gptq", "int4", "autoround", "4bit")):
        fmt = "int4"
    elif "bf16" in tokens:
        fmt = "bf16"
    return ("-".join(tokens) if tokens else "bf16"), (fmt or "bf16")


def missing_fields(cls: type[BaseModel], data: dict[str, Data]) -> tuple[list[str], list[str]]:
    """(missing field paths, other validation problems) of `data` as a `cls`."""
    try:
        cls.model_validate(tuples(data))
    except ValidationError as exc:
        missing: list[str] = []
        other: list[str] = []
        errors = exc.errors()
        for err in errors:
            loc = ".".join(str(p) for p in err["loc"])
            if err["type"] == "missing":
                missing.append(loc)
            elif err["type"] == "too_short" and any(".".join(map(str, e["loc"])).startswith(loc + ".")
                                                    for e in errors):
                continue  # a list whose items are incomplete reads as empty: its items' errors say it
            else:
                other.append(f"{loc}: {err['msg']}")
        return missing, other
    return [], []



def list_at(data: dict[str, Data], key: str) -> list[Data]:
    """`data[key]`, a list of a draft document (set empty when absent), to add to."""
    value = data.setdefault(key, [])
    assert isinstance(value, list), f"{key} of a draft is not a list"
    return value


def map_at(data: dict[str, Data], key: str) -> dict[str, Data]:
    """`data[key]`, a mapping of a draft document (set empty when absent), to add to."""
    value = data.setdefault(key, {})
    assert isinstance(value, dict), f"{key} of a draft is not a mapping"
    return value


def _dicts(value: Data) -> list[dict[str, Data]]:
    """The mappings of a document's list (drafters, their weights); nothing for anything else."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


@dataclass
class ModelDraft:
    id: str
    data: dict[str, Data]  # the model file's data (existing fields plus the additions)
    existing: Path | None  # models/<id>.yaml when it extends a catalog model
    # this run's additions, {"weights"|"drafters"|"mmproj": entry} each
    additions: list[dict[str, dict[str, Data]]] = field(default_factory=list)
    guessed: list[str] = field(default_factory=list)
    apps: list[str] = field(default_factory=list)
    base_text: str | None = None  # the file the additions go into (an earlier draft, or models/<id>.yaml)
    touched: bool = False  # changed by this run (only touched drafts are written)

    def missing(self) -> tuple[list[str], list[str]]:
        return missing_fields(Model, self.data)


@dataclass
class StackDraft:
    id: str
    data: dict[str, Data]
    guessed: list[str] = field(default_factory=list)
    apps: list[str] = field(default_factory=list)
    touched: bool = True

    def missing(self) -> tuple[list[str], list[str]]:
        return missing_fields(Stack, self.data)


@dataclass
class ChatTemplateDraft:
    """A chat template a chart ships that the catalog lacks: its text, written next to the draft's YAML."""

    id: str
    data: dict[str, Data]  # the chat_templates/<id>.yaml data (no `purpose`: the import cannot tell it)
    text: str
    apps: list[str] = field(default_factory=list)

    def missing(self) -> tuple[list[str], list[str]]:
        return missing_fields(ChatTemplate, self.data)


def _plain_value(value: Any) -> Any:
    """A field compared as data: a tuple and a list alike, an image without Docker Hub's implicit registry."""
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, str):
        return value.removeprefix("docker.io/library/").removeprefix("docker.io/")
    return value


def _shown(value: Any) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


def _source(ref: str, note: str) -> dict[str, Data]:
    return {"ref": ref, "note": note}


class Pool:
    """The catalog's models and stacks plus the drafts one import run adds (shared by its apps)."""

    def __init__(self, cat: Catalog):
        self.cat = cat
        self.models: dict[str, ModelDraft] = {}
        self.stacks: dict[str, StackDraft] = {}
        self.chat_templates: dict[str, ChatTemplateDraft] = {}
        self._load_drafts()

    def _load_drafts(self) -> None:
        """Drafts an earlier import wrote: found again, extended rather than duplicated."""
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        loader = YAML(typ="safe")
        for path in sorted((self.cat.root / "drafts" / "models").glob("*.yaml")):
            try:
                text = draft_text(path, path.name)
                data = loader.load(text)
            except (YAMLError, InputError):  # a hand-broken draft is left alone (a new one with its name is refused)
                continue
            if isinstance(data, dict) and data.get("id") == path.stem and isinstance(data.get("weights"), list):
                existing = self.cat.root / "models" / f"{path.stem}.yaml"
                self.models[path.stem] = ModelDraft(path.stem, data, existing if existing.is_file() else None,
                                                    base_text=text)
        for path in sorted((self.cat.root / "drafts" / "stacks").glob("*.yaml")):
            try:
                data = loader.load(draft_text(path, path.name))
            except (YAMLError, InputError):
                continue
            if isinstance(data, dict) and data.get("id") == path.stem and path.stem not in self.cat.stacks:
                self.stacks[path.stem] = StackDraft(path.stem, data, touched=False)

    def _why_distinct(self, taken: str, data: dict[str, Any]) -> str:
        """Why a chart's draft stack is not the stack `taken` whose id it would have had (docs/import.md "Drafts
        extend, never overwrite": two images, commands or ports are two stacks; a stack draft is never merged)."""
        rule = "(a stack draft is never merged: docs/import.md \"Drafts extend, never overwrite\")"
        if taken in self.stacks:
            theirs: dict[str, Any] = self.stacks[taken].data
            where = f"the draft stack {taken} (drafts/stacks/{taken}.yaml)"
        elif taken in self.cat.stacks:
            theirs = self.cat.stacks[taken].model_dump(mode="json")
            where = f"the catalog's stack {taken}"
        else:
            return (f"id {data['id']}, not {taken}: a draft file of {taken} is there already "
                    f"(drafts/stacks/{taken}.yaml) {rule}")
        differ = [f"{key} ({_shown(theirs.get(key))} there, {_shown(data.get(key))} here)"
                  for key in ("image", "command", "port")
                  if _plain_value(theirs.get(key)) != _plain_value(data.get(key))]
        return (f"id {data['id']}, not {taken}: {where} has another {' and '.join(differ) or 'content'}; two "
                f"images, commands or ports are two stacks {rule}")

    def _on_disk(self, kind: str, draft_id: str) -> bool:
        """Whether drafts/<kind>/<id>.yaml exists (an earlier import's draft, possibly hand-edited)."""
        return (self.cat.root / "drafts" / kind / f"{draft_id}.yaml").exists()

    def snapshot(self) -> tuple[dict[str, ModelDraft], dict[str, StackDraft], dict[str, ChatTemplateDraft]]:
        """The drafts as they are now, to put back when a chart is skipped (its drafts are not written)."""
        return copy.deepcopy((self.models, self.stacks, self.chat_templates))

    def restore(self, saved: tuple[dict[str, ModelDraft], dict[str, StackDraft],
                                   dict[str, ChatTemplateDraft]]) -> None:
        self.models, self.stacks, self.chat_templates = saved

    # --- models ---------------------------------------------------------------------------------------

    def _model_data(self, model_id: str) -> dict[str, Data] | None:
        if model_id in self.models:
            return self.models[model_id].data
        model = self.cat.models.get(model_id)
        return model.model_dump(mode="json", exclude_defaults=True) if model else None

    def _all_models(self) -> dict[str, dict[str, Any]]:
        out = {mid: m.model_dump(mode="json", exclude_defaults=True) for mid, m in self.cat.models.items()}
        out.update({mid: d.data for mid, d in self.models.items()})
        return out

    def is_draft(self, model_id: str) -> bool:
        return model_id in self.models

    def find_weight(self, repo: str, file: str | None, revision: str | None) -> tuple[str, str, bool] | None:
        """(model id, quant, whether the catalog already has it) of a weight file."""
        for mid, model in self.cat.models.items():
            for w in model.weights:
                if w.repo == repo and w.file == file and (w.revision or "main") == (revision or "main"):
                    return mid, w.quant, True
        for mid, data in self._all_models().items():
            for weight in data.get("weights") or ():
                if weight["repo"] == repo and weight.get("file") == file \
                        and (weight.get("revision") or "main") == (revision or "main"):
                    return mid, weight["quant"], False
        return None

    def _owner_for(self, repo: str) -> tuple[str | None, str]:
        """The model a new weight of `repo` belongs to: one with a weight of the same repo, else one whose
        weights share the repo's base name (a guess, reported), else None."""
        models = self._all_models()
        for mid, data in models.items():
            if any(w["repo"] == repo for w in data.get("weights") or ()):
                return mid, f"it has weights from {repo}"
        base = base_name(repo).lower()
        for mid, data in models.items():
            if any(base_name(w["repo"]).lower() == base for w in data.get("weights") or ()):
                return mid, f"its weights' repos share the base name {base_name(repo)}"
        return None, ""

    def _extend(self, model_id: str) -> ModelDraft:
        if model_id not in self.models:
            data = self.cat.models[model_id].model_dump(mode="json", exclude_defaults=True)
            existing = self.cat.root / "models" / f"{model_id}.yaml"
            base = existing.read_text(encoding="utf-8") if existing.is_file() else None
            self.models[model_id] = ModelDraft(model_id, data, existing if existing.is_file() else None,
                                               base_text=base)
        draft = self.models[model_id]
        draft.touched = True
        return draft

    def add_weight(self, repo: str, file: str | None, revision: str | None, ref: str, app: str) -> tuple[str, str, str]:
        """(model id, quant id, how it was placed) for a weight file the catalog lacks; drafts it."""
        fmt: str | None
        if file is not None:
            quant, fmt = gguf_quant(file) or slug(Path(file).stem)[-20:], "gguf"
        else:
            quant, fmt = repo_format(repo)
        owner, why = self._owner_for(repo)
        weight: dict[str, Any] = {"quant": slug(quant), "format": fmt, "repo": repo}
        if file is not None:
            weight["file"] = file
        if revision and revision != "main":
            weight["revision"] = revision
        weight["sources"] = [_source(ref, "the file the chart downloads")]
        if weight["format"] is None:
            del weight["format"]
        if owner is None:
            model_id = free_id(slug(base_name(repo)), lambda m: m in self.cat.models or (
                m not in self.models and self._on_disk("models", m)))
            draft = self.models.get(model_id)
            if draft is None:
                draft = ModelDraft(model_id, {"id": model_id, "name": base_name(repo), "weights": []}, None)
                draft.guessed.append(f"id {model_id!r} and name {base_name(repo)!r} from the repo name {repo}")
                self.models[model_id] = draft
            draft.touched = True
            how = "new model"
        else:
            draft = self._extend(owner)
            model_id = owner
            how = f"added to model {owner} ({why})"
        known = {w.get("quant") for w in _dicts(list_at(draft.data, "weights"))}
        while weight["quant"] in known:
            weight["quant"] = slug(weight["quant"] + "-2")
        list_at(draft.data, "weights").append(weight)
        draft.additions.append({"weights": weight})
        draft.guessed.append(f"weights {weight['quant']}: quant id and format "
                             + (f"{weight.get('format')!r} " if weight.get("format") else "")
                             + f"from the {'file' if file else 'repo'} name")
        if app not in draft.apps:
            draft.apps.append(app)
        return model_id, weight["quant"], how

    def find_drafter(self, model_id: str, repo: str, file: str | None) -> str | None:
        data = self._model_data(model_id) or {}
        for drafter in _dicts(data.get("drafters")):
            for weight in _dicts(drafter.get("weights")):
                if weight.get("repo") == repo and weight.get("file") == file:
                    return str(drafter["id"])
        return None

    def add_drafter(self, model_id: str, method: str, repo: str, file: str | None, ref: str, app: str) -> str:
        draft = self._extend(model_id)
        quant, fmt = (gguf_quant(file) or "gguf", "gguf") if file else repo_format(repo)
        kind = DRAFTER_KIND.get(method, "draft-model")
        drafter_id = slug(f"{method}-{quant}")
        known = {d.get("id") for d in _dicts(draft.data.get("drafters"))}
        while drafter_id in known:
            drafter_id = slug(drafter_id + "-2")
        weight: dict[str, Any] = {"quant": slug(quant), "format": fmt, "repo": repo}
        if file:
            weight["file"] = file
        weight["sources"] = [_source(ref, "the drafter file the chart downloads")]
        if weight["format"] is None:
            del weight["format"]
        entry: dict[str, Data] = {"id": drafter_id, "kind": kind, "weights": [weight],
                                  "sources": [_source(ref, "the chart's drafter")]}
        list_at(draft.data, "drafters").append(entry)
        draft.additions.append({"drafters": entry})
        draft.guessed.append(f"drafters {drafter_id}: kind {kind!r} from the speculative method {method!r}")
        if app not in draft.apps:
            draft.apps.append(app)
        return drafter_id

    def mmproj_matches(self, model_id: str, repo: str, file: str) -> bool:
        return self.mmproj_quant(model_id, repo, file) is not None

    def mmproj_quant(self, model_id: str, repo: str, file: str) -> str | None:
        """The `quant` of the model's projector (its `mmproj` or one of its `mmproj_variants`) with this file."""
        data = self._model_data(model_id) or {}
        found = [data.get("mmproj"), *_dicts(data.get("mmproj_variants"))]
        return next((str(p.get("quant")) for p in found
                     if isinstance(p, dict) and p.get("repo") == repo and p.get("file") == file), None)

    def set_mmproj(self, model_id: str, repo: str, file: str, ref: str, app: str) -> str | None:
        """Draft the model's projector; returns a problem when the model already has a different one."""
        data = self._model_data(model_id) or {}
        mmproj = data.get("mmproj")
        if mmproj:
            assert isinstance(mmproj, dict), "a model's mmproj is a mapping (generator/schema/model.py `mmproj`)"
            return (f"model {model_id} already has the projector {mmproj['repo']}/{mmproj.get('file')}; "
                    f"the chart uses {repo}/{file}")
        draft = self._extend(model_id)
        entry: dict[str, Data] = {"quant": slug(gguf_quant(file) or "f16"), "format": "gguf", "repo": repo,
                                  "file": file, "sources": [_source(ref, "the projector the chart downloads")]}
        draft.data["mmproj"] = entry
        draft.additions.append({"mmproj": entry})
        if app not in draft.apps:
            draft.apps.append(app)
        return None

    # --- stacks ---------------------------------------------------------------------------------------

    # --- chat templates -------------------------------------------------------------------------------

    def add_chat_template(self, text: str, sha256: str, ref: str, app: str) -> str:
        """A draft chat template with these bytes (one per sha256 in a run); returns its id."""
        for draft in self.chat_templates.values():
            if draft.data["sha256"] == sha256:
                draft.apps.append(app)
                return draft.id
        template_id = free_id(slug(f"{app}-chat-template"), lambda t: t in self.cat.chat_templates
                              or t in self.chat_templates or self._on_disk("chat_templates", t))
        data: dict[str, Data] = {"id": template_id, "file": f"{template_id}.jinja", "sha256": sha256,
                "sources": [_source(ref, "the chat template of the imported chart")]}
        self.chat_templates[template_id] = ChatTemplateDraft(template_id, data, text, [app])
        return template_id

    def stacks_with_image(self, image: str) -> list[Stack]:
        # Docker Hub's implicit registry: `docker.io/lmsysorg/sglang:v0.5.14-cu130` (beclab/apps) is the stack's
        # `lmsysorg/sglang:v0.5.14-cu130`
        def bare(name: object) -> str:
            return str(name).removeprefix("docker.io/library/").removeprefix("docker.io/")
        found = [s for s in self.cat.stacks.values() if bare(s.image) == bare(image)]
        found += [Stack.model_construct(**{"fork": "upstream", "version": "", **tuples(d.data)})
                  for d in self.stacks.values() if bare(d.data.get("image")) == bare(image)]
        return found

    def is_draft_stack(self, stack_id: str) -> bool:
        return stack_id in self.stacks

    def add_stack(self, data: dict[str, Data], guessed: list[str], app: str) -> StackDraft:
        wanted = str(data["id"])
        # an earlier draft of this id (this run's, or one on disk) is never replaced: a distinct name instead
        stack_id = free_id(wanted, lambda t: t in self.cat.stacks or t in self.stacks or self._on_disk("stacks", t))
        data["id"] = stack_id
        if stack_id != wanted:
            guessed = [*guessed, self._why_distinct(wanted, data)]
        draft = StackDraft(stack_id, data, guessed)
        draft.apps.append(app)
        self.stacks[stack_id] = draft
        return draft


# --- reading drafts back (`catalog list`, `catalog explain DRAFT`) ---------------------------------------

DRAFT_KINDS = (("apps", "app"), ("models", "model"), ("stacks", "stack"), ("chat_templates", "chat template"))
_BLOCK_LINE = re.compile(r"^# \[draft\] (missing|to fix): (.*)$")


@dataclass(frozen=True)
class DraftFile:
    """One file under <catalog>/drafts/ and what keeps it out of the catalog (its `# [draft]` header lines)."""

    kind: str  # app, model, stack, chat template
    id: str
    path: str  # relative to the catalog: drafts/apps/<id>.yaml
    blocks: tuple[str, ...]  # `missing: ...` and `to fix: ...`, as the import wrote them
    title: str | None = None
    model: str | None = None
    stack: str | None = None
    version: str | None = None
    context: int | None = None

    def to_data(self) -> dict[str, str | int | list[str] | None]:
        return {"kind": self.kind, "id": self.id, "path": self.path, "blocked_by": list(self.blocks),
                "title": self.title, "model": self.model, "stack": self.stack, "version": self.version,
                "context": self.context}


def _text_field(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


MAX_DRAFT_BYTES = 2**20  # a catalog file's cap (docs/security.md "YAML limits")


def draft_text(path: Path, name: str) -> str:
    """A draft's text read as a catalog file is (it is one, from whoever committed it): a regular file of at most
    1 MiB, UTF-8, without an alias (the loader below would share it, and a walk of the data expand it);
    InputError otherwise."""
    from generator.yamlio import read_bytes, refuse_aliases

    raw = read_bytes(path, name, max_bytes=MAX_DRAFT_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError([Problem(name, None, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})")]) from exc
    refuse_aliases(text, name)
    return text


def read_drafts(root: Path) -> list[DraftFile]:
    """Every draft an import left under `root`/drafts/, in kind then name order (a hand-broken file is listed,
    its YAML error as what blocks it)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    loader = YAML(typ="safe")
    found: list[DraftFile] = []
    for folder, kind in DRAFT_KINDS:
        for path in sorted((root / "drafts" / folder).glob("*.yaml")):
            rel = f"drafts/{folder}/{path.name}"
            try:
                text = draft_text(path, rel)
            except InputError as exc:
                found.append(DraftFile(kind, path.stem, rel, (f"unreadable: {exc}",)))
                continue
            blocks = tuple(f"{m.group(1)}: {m.group(2)}" for m in map(_BLOCK_LINE.match, text.splitlines()) if m)
            try:
                data = loader.load(text)
            except YAMLError as exc:
                found.append(DraftFile(kind, path.stem, rel, (*blocks, f"not valid YAML: {str(exc)[:200]}")))
                continue
            data = data if isinstance(data, dict) else {}
            context = data.get("context_length")
            found.append(DraftFile(kind, path.stem, rel, blocks or ("nothing listed: move it out of drafts/ and "
                                                                    "run `catalog check`",),
                                   title=_text_field(data, "title") or _text_field(data, "name"),
                                   model=_text_field(data, "model"), stack=_text_field(data, "stack"),
                                   version=_text_field(data, "version"),
                                   context=context if isinstance(context, int) and not isinstance(context, bool)
                                   else None))
    return found


__all__ = ["ChatTemplateDraft", "DraftFile", "ModelDraft", "Pool", "StackDraft", "base_name", "gguf_quant",
           "missing_fields", "read_drafts", "repo_format", "slug"]
