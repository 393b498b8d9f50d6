"""`catalog new`: read a model file's header, write the model with its recorded real shape and an app sized by the
fit (docs/new-model.md).

The facts come from the files themselves: the GGUF header (newapp/gguf.py, newapp/facts.py) for the geometry and
the tensors, the server's answer or the hub's file list for the size, config.json for the Hugging Face model type.
What no file says (the app's title, icon and market categories) is the owner's: without `--title`, `--icon` and
`--category` the app is written to drafts/apps/ (status draft, the missing facts on its first lines), to be moved
to apps/ once filled. The context is the largest the fit allows on the device. Everything is checked on a staged
copy of the catalog (loaded, resolved, fitted) before a file is written; the two files are then written
atomically, and the first is removed if the second cannot be.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from generator.adapters import DEFAULT_HEAD_CAP, HfApi, display
from generator.catalog import Catalog, load_catalog
from generator.core import InputError, UsageError, translate_os_error
from generator.core import atomic_write_text, writable
from generator.importer import base_name, gguf_quant, slug
from generator.newapp.facts import Facts, read_facts
from generator.newapp.gguf import Header, Short, parse, parse_or_none
from generator.schema import compact

APP_NAME = re.compile(r"^[a-z][a-z0-9]{0,29}$")  # Olares' app name rule (lowercase alphanumeric, <= 30)
RESOLVE = re.compile(r"^/(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)/resolve/(?P<rev>[^/]+)/"
                     r"(?P<file>.+)$")
OWNER_FACTS = ("title", "icon", "categories")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+()-]{0,99}$")
# llama.cpp's default --spec-draft-n-max after ggml-org/llama.cpp#23269 (the catalog's llamacppqwen36mtpone
# 1.0.9 note); a model's own MTP head drafts this many tokens unless --like names another app's
MTP_TOKENS = 3


@dataclass
class Request:
    app: str
    gguf: str | None = None
    hf: str | None = None
    mmproj: str | None = None
    draft: str | None = None
    stack: str | None = None
    device: str | None = None
    like: str | None = None
    repo: str | None = None  # where the chart downloads a local --gguf from (OWNER/REPO)
    model_id: str | None = None
    title: str | None = None
    icon: str | None = None
    categories: tuple[str, ...] = ()
    header_cap: int = DEFAULT_HEAD_CAP


@dataclass
class Source:
    """One GGUF: where it is read from, where the chart downloads it, its size and header."""

    where: str  # the URL (no credentials) or the path, for messages and `sources`
    repo: str
    revision: str
    file: str
    header: Header
    file_bytes: int
    model_type: str | None = None  # config.json's (its text_config's for a multimodal checkpoint)


@dataclass
class Written:
    model: Path
    app: Path
    draft: bool
    missing: tuple[str, ...]
    context: int
    facts: Facts
    source: str
    notes: list[str] = field(default_factory=list)


# ---- reading --------------------------------------------------------------------------------------------------

def _local_head(path: Path, cap: int) -> tuple[Header, int]:
    where = str(path)
    try:
        size = path.stat().st_size
        want = min(1 << 20, cap)
        with path.open("rb") as fh:
            while True:
                fh.seek(0)
                data = fh.read(want)
                try:
                    return parse(data, where), size
                except Short:
                    if len(data) < want:
                        raise InputError(f"{where}: the file ends ({len(data):,} bytes) before its GGUF header "
                                         "does") from None
                    if want >= cap:
                        raise InputError(f"{where}: no complete header in its first {cap:,} bytes "
                                         "(--header-cap raises the limit)") from None
                    want = min(2 * want, cap)
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from exc


def _remote_head(api: HfApi, url: str, cap: int) -> tuple[Header, int | None]:
    where = display(url)
    head = api.read_head(url, lambda data: parse_or_none(data, where) is not None, cap)
    return parse(head.data, where), head.total


def _split_resolve(url: str) -> tuple[str, str, str] | None:
    m = RESOLVE.match(urlsplit(url).path)
    if m is None:
        return None
    return m.group("repo"), unquote(m.group("rev")), unquote(m.group("file"))


def read_source(spec: str, api: HfApi, cap: int, *, repo: str | None = None,
                size: int | None = None, model_type: str | None = None) -> Source:
    """A GGUF named by URL or local path: its header and size, and where a chart downloads it from."""
    if spec.startswith(("http://", "https://")):
        header, total = _remote_head(api, spec, cap)
        where = display(spec)
        parts = _split_resolve(spec)
        if parts is None and repo is None:
            raise UsageError(f"{where}: not a Hugging Face file URL (…/OWNER/REPO/resolve/REVISION/FILE); say where "
                             "the chart downloads it from with --repo OWNER/REPO")
        r, rev, file = parts if parts is not None else (repo or "", "main", urlsplit(spec).path.rsplit("/", 1)[-1])
        file_bytes = size or total
        if file_bytes is None:
            raise InputError(f"{where}: the server did not say the file's size (no Content-Range or Content-Length); "
                             "use --hf OWNER/REPO:QUANT, whose file list has it")
        return Source(where, r, rev, file, header, file_bytes, model_type)
    path = Path(spec)
    if repo is None:
        raise UsageError(f"{spec}: a local file; say where the chart downloads it from with --repo OWNER/REPO")
    header, file_bytes = _local_head(path, cap)
    return Source(str(path), repo, "main", path.name, header, file_bytes, model_type)


def read_hf(spec: str, api: HfApi, cap: int) -> Source:
    """`OWNER/REPO[:QUANT]` -> the repository's GGUF of that quantization (the only one when it has one)."""
    repo, _, quant = spec.partition(":")
    if repo.count("/") != 1:
        raise UsageError(f"--hf {spec}: write OWNER/REPO or OWNER/REPO:QUANT")
    files = api.files(repo)
    ggufs = [f for f in files if f.path.lower().endswith(".gguf") and "mmproj" not in f.path.lower()
             and "/" not in f.path]
    if quant:
        chosen = [f for f in ggufs if (gguf_quant(f.path) or "") == quant.lower()]
    else:
        chosen = ggufs if len(ggufs) == 1 else []
    if len(chosen) != 1:
        known = ", ".join(sorted({gguf_quant(f.path) or f.path for f in ggufs})) or "none"
        what = f"no single GGUF of quantization {quant!r}" if quant else "more than one GGUF"
        raise UsageError(f"--hf {spec}: {what} in {repo} (its GGUFs: {known}); name one: --hf {repo}:QUANT")
    config = api.config(repo) or {}
    text = config.get("text_config")
    model_type = (text.get("model_type") if isinstance(text, dict) else None) or config.get("model_type")
    url = api.resolve_url(repo, "main", chosen[0].path)
    return read_source(url, api, cap, size=chosen[0].size,
                       model_type=model_type if isinstance(model_type, str) else None)


# ---- the model ------------------------------------------------------------------------------------------------

def _model_id(req: Request, src: Source) -> str:
    if req.model_id:
        return req.model_id
    kv = src.header.kv
    basename, label = kv.get("general.basename"), kv.get("general.size_label")
    if isinstance(basename, str) and basename:
        text = basename + (f"-{label}" if isinstance(label, str) and label and label not in basename else "")
        return slug(text)
    return slug(base_name(src.repo))


def _params_b(header: Header) -> float:
    n = 0
    for t in header.tensors:
        count = 1
        for d in t.ne:
            count *= d
        n += count
    return max(0.01, round(n / 1e9, 2))


def _weight(src: Source, quant: str, *, mtp: bool, record: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"quant": quant, "format": "gguf", "repo": src.repo, "file": src.file}
    if src.revision != "main":
        out["revision"] = src.revision
    out["size_gib"] = max(0.01, round(src.file_bytes / 2**30, 2))
    if mtp:
        out["mtp_weights"] = True
    if record:
        h = src.header
        out["header"] = {"url": src.where, "file_bytes": src.file_bytes, "data_offset": h.data_offset,
                         "tensor_bytes": h.tensor_bytes,
                         "tensors": list(compact((t.name, t.ne, t.type_name) for t in h.tensors))}
    out["sources"] = [{"ref": src.where, "note": f"GGUF header read by `catalog new`: {len(src.header.tensors)} "
                                                 f"tensors, {src.file_bytes:,} bytes"}]
    return out


def _model_data(req: Request, src: Source, facts: Facts, *, mmproj: Source | None,
               draft: Source | None) -> dict[str, Any]:
    mid = _model_id(req, src)
    quant = slug(gguf_quant(src.file) or "gguf")
    arch = dict(facts.architecture)
    model_type = src.model_type
    from generator.newapp.facts import ARCHS

    arch_out: dict[str, Any] = {"arch": arch["arch"], "hf_model_type": model_type or ARCHS[facts.arch]}
    for key in ("layers", "hidden_size", "vocab_size", "full_attention", "recurrent", "mtp_layers",
                "total_params_b", "active_params_b", "max_context"):
        if key in arch and not (key == "mtp_layers" and not arch[key]):
            arch_out[key] = arch[key]
    if mmproj is not None:
        arch_out["vision"] = True
    name = src.header.kv.get("general.name")
    if not (isinstance(name, str) and SAFE_NAME.match(name)):  # a stranger's file: only a plain name is copied
        name = None
    facts_out = [{"field": f, "value": v, "source": f"{src.where} {k}"} for f, v, k in facts.facts]
    if model_type:
        facts_out.append({"field": "architecture.hf_model_type", "value": model_type,
                          "source": f"{src.repo} config.json model_type"})
    data: dict[str, Any] = {
        "id": mid, "name": name if isinstance(name, str) and name else mid,
        "family": slug(mid.rsplit("-", 1)[0]) if "-" in mid else mid,
        "architecture": arch_out,
        "shape": {k: v for k, v in facts.shape.items() if v or k == "n_head"},
        "facts": facts_out,
        "sources": [{"ref": src.where, "note": "every geometry fact read from this file's GGUF header by "
                                               "`catalog new` (facts: each with its header key)"}],
        "weights": [_weight(src, quant, mtp=bool(arch.get("mtp_layers")), record=True)],
    }
    if draft is not None:
        kind = "mtp-assistant" if "nextn_predict_layers" in " ".join(draft.header.kv) or "mtp" in draft.file.lower() \
            else "draft-model"
        data["drafters"] = [{"id": slug(Path(draft.file).stem), "kind": kind,
                             "weights": [_weight(draft, slug(gguf_quant(draft.file) or "gguf"), mtp=False,
                                                 record=False)],
                             "params_b": _params_b(draft.header),
                             "sources": [{"ref": draft.where, "note": f"GGUF header ({draft.header.arch})"}]}]
    if mmproj is not None:
        data["mmproj"] = _weight(mmproj, slug(gguf_quant(mmproj.file) or "f16"), mtp=False, record=False)
    return data


# ---- the app --------------------------------------------------------------------------------------------------

LIKE_FIELDS = ("stack", "device", "kv_cache_type", "kv_cache_type_v", "resources", "env", "extra_args", "owners",
               "speculative", "chat_template", "slot_save")


def _owners(cat: Catalog) -> list[str]:
    counts = Counter(o for r in cat.apps.values() for o in r.app.owners)
    if not counts:
        raise UsageError("no app in the catalog names an owner to copy; pass --like APP")
    return [counts.most_common(1)[0][0]]


def _like(req: Request, cat: Catalog) -> Any:
    if not req.like:
        return None
    if req.like not in cat.apps:
        raise UsageError(f"--like {req.like}: no such app (`catalog list` shows them)")
    return cat.apps[req.like].app


def _stack_device(req: Request, cat: Catalog, like: Any) -> tuple[str, str]:
    stack = req.stack or (like.stack if like else None)
    if stack is None:
        llama = sorted(s.id for s in cat.stacks.values() if "llama" in s.engine)
        raise UsageError(f"name the stack that serves it: --stack ID or --like APP (llama.cpp stacks: "
                         f"{', '.join(llama) or 'none'})")
    if stack not in cat.stacks:
        raise UsageError(f"--stack {stack}: no such stack in catalog/stacks ({', '.join(sorted(cat.stacks))})")
    device = req.device or (like.device if like else None)
    if device is None and len(cat.devices) == 1:
        device = next(iter(cat.devices))
    if device is None or device not in cat.devices:
        raise UsageError(f"--device {device}: name one of {', '.join(sorted(cat.devices))}")
    return stack, device


def _like_settings(req: Request, like: Any, mtp: bool, data: dict[str, Any], notes: list[str]) -> None:
    """`--like`: the other app's settings, never its version, history, notes or measurements."""
    dumped = like.model_dump(mode="json", exclude_defaults=True)
    for key in ("kv_cache_type", "kv_cache_type_v", "chat_template", "slot_save", "resources", "env", "extra_args"):
        if key in dumped:
            data[key] = dumped[key]
    spec = dumped.get("speculative")
    if not spec:
        return
    if (spec.get("method") != "mtp" or mtp) and not spec.get("drafter"):
        data["speculative"] = spec
    else:
        notes.append(f"--like {req.like}: its speculative decoding ({spec.get('method')}) needs what this model "
                     "lacks; left out")


def _app_data(req: Request, cat: Catalog, model: dict[str, Any], context: int) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    like = _like(req, cat)
    stack, device = _stack_device(req, cat, like)
    st = cat.stacks[stack]
    arch = model["architecture"]
    quant = model["weights"][0]["quant"]
    data: dict[str, Any] = {
        "name": req.app, "title": req.title,
        "description": f"{model['name']} ({quant} GGUF) on {st.title}, {context:,}-token context"[:4000],
        "icon": req.icon, "owners": list(like.owners) if like else _owners(cat),
        "categories": list(req.categories) or None, "model": model["id"], "quantization": quant, "stack": stack,
        "device": device, "served_name": model["id"], "context_length": context}
    data = {k: v for k, v in data.items() if v is not None}
    if like is not None:
        _like_settings(req, like, bool(arch.get("mtp_layers")), data, notes)
    own_mtp = "mtp" in st.spec_methods and "{drafter}" not in " ".join(st.speculative_args.get("mtp", ()))
    if "speculative" not in data and arch.get("mtp_layers") and own_mtp:
        data["speculative"] = {"method": "mtp", "tokens": MTP_TOKENS}
        notes.append(f"MTP drafting on: the file carries {arch['mtp_layers']} NextN layer(s) and stack {stack} "
                     "offers mtp")
    if arch.get("vision") and "vision" in st.features:
        data["vision"] = True
    data["version"] = "1.0.0"
    data["status"] = "active"
    return data, notes


# ---- staging and writing --------------------------------------------------------------------------------------

def _dump(data: dict[str, Any], comments: list[str]) -> str:
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
    return "".join(f"# {c}\n" for c in comments) + body


def _staged(root: Path, files: dict[str, str]) -> tuple[Catalog, Path]:
    tmp = Path(tempfile.mkdtemp(prefix="catalog-new-"))
    stage = tmp / "catalog"
    shutil.copytree(root, stage, ignore=shutil.ignore_patterns("drafts", ".*"))
    for rel, text in files.items():
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        (stage / rel).write_text(text, encoding="utf-8")
    try:
        return load_catalog(stage), tmp
    except InputError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        from generator.catalog import display_path

        text = str(exc).replace(str(stage), str(root)).replace(display_path(stage), display_path(root))
        raise InputError(text) from None


def _fit_context(cat: Catalog, app: str) -> int:
    from generator.fit import largest_fitting

    r = cat.apps[app]
    return largest_fitting(r)


def _read(req: Request, api: HfApi) -> tuple[Source, Facts, Source | None, Source | None]:
    src = read_hf(req.hf, api, req.header_cap) if req.hf else \
        read_source(req.gguf or "", api, req.header_cap, repo=req.repo)
    facts = read_facts(src.header, src.where, src.file_bytes)
    mmproj = read_source(req.mmproj, api, req.header_cap, repo=req.repo or src.repo) if req.mmproj else None
    if mmproj is not None and mmproj.header.arch != "clip":
        raise InputError(f"{mmproj.where}: --mmproj is a GGUF of architecture {mmproj.header.arch!r}, not a "
                         "projector ('clip')")
    draft = read_source(req.draft, api, req.header_cap, repo=req.repo or src.repo) if req.draft else None
    return src, facts, mmproj, draft


def _refuse_existing(req: Request, cat: Catalog, root: Path) -> None:
    if not APP_NAME.match(req.app):
        raise UsageError(f"app name {req.app!r}: lowercase letters and digits, starting with a letter, at most 30 "
                         "(Olares' app name rule)")
    if (req.gguf is None) == (req.hf is None):
        raise UsageError("give the model file: --gguf URL_OR_PATH or --hf OWNER/REPO[:QUANT] (one of them)")
    for existing in (root / "apps" / f"{req.app}.yaml", root / "drafts" / "apps" / f"{req.app}.yaml"):
        if req.app in cat.apps or existing.exists():
            raise UsageError(f"app {req.app} exists already ({existing if existing.exists() else 'catalog/apps'}); "
                             "`catalog new` never overwrites: choose another name")


def _trial(app: dict[str, Any], req: Request, cat: Catalog) -> dict[str, Any]:
    """The app as staged: the owner's facts filled with placeholders, to fit and check what the files say."""
    trial = dict(app)
    trial.setdefault("title", req.app[:30])
    trial.setdefault("icon", "https://example.invalid/icon.png")
    if cat.market.categories:
        trial.setdefault("categories", ["LLM Chat"])
    return _order(trial)


def new_app(req: Request, root: Path, api: HfApi) -> Written:
    """Read, stage, fit, check, then write; nothing is written unless everything passed."""
    cat = load_catalog(root)
    _refuse_existing(req, cat, root)
    src, facts, mmproj, draft = _read(req, api)
    model = _model_data(req, src, facts, mmproj=mmproj, draft=draft)
    mid = model["id"]
    model_path = root / "models" / f"{mid}.yaml"
    if mid in cat.models or model_path.exists():
        raise UsageError(f"model {mid} exists already (catalog/models/{mid}.yaml); name the new one with "
                         "--model-id ID")
    model_text = _dump(model, [f"{model['name']}: written by `catalog new` from {src.where}",
                               "every geometry fact is read from the file's header (`facts`: the key of each)"])
    missing = tuple(f for f, given in zip(OWNER_FACTS, (req.title, req.icon, req.categories), strict=True)
                    if not given)
    app, _ = _app_data(req, cat, model, model["architecture"]["max_context"])
    files = {f"models/{mid}.yaml": model_text, f"apps/{req.app}.yaml": _dump(_trial(app, req, cat), [])}
    staged, tmp = _staged(root, files)
    try:
        context = _fit_context(staged, req.app)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if context == 0:
        raise InputError(f"{src.where}: {mid} ({model['weights'][0]['size_gib']} GiB) does not fit on "
                         f"{app['device']} at any context; choose smaller weights")
    app, notes = _app_data(req, cat, model, context)
    _, tmp = _staged(root, {**files, f"apps/{req.app}.yaml": _dump(_trial(app, req, cat), [])})
    shutil.rmtree(tmp, ignore_errors=True)
    comments = [f"{req.app}: written by `catalog new` from {src.where}; context {context:,} = the largest the fit "
                f"allows on {app['device']}"]
    if missing:
        comments.insert(0, f"[draft] missing: {', '.join(missing)} (no model file says them): fill them in, then "
                           "move this file to apps/")
    app_path = root / ("drafts/apps" if missing else "apps") / f"{req.app}.yaml"
    _write_both(model_path, model_text, app_path, _dump(_order(app), comments))
    return Written(model_path, app_path, bool(missing), missing, context, facts, src.where, notes)


def _write_both(model_path: Path, model_text: str, app_path: Path, app_text: str) -> None:
    for path in (model_path, app_path):
        if writable(path) is not None:
            raise UsageError(f"{path} exists already; `catalog new` never overwrites")
    atomic_write_text(model_path, model_text)
    try:
        atomic_write_text(app_path, app_text)
    except BaseException:
        model_path.unlink(missing_ok=True)
        raise


ORDER = ("name", "title", "description", "icon", "owners", "categories", "model", "quantization", "stack", "device",
         "served_name", "context_length", "kv_cache_type", "kv_cache_type_v", "speculative", "vision",
         "chat_template", "slot_save", "resources", "env", "extra_args", "version", "status")


def _order(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in ORDER if k in data} | {k: v for k, v in data.items() if k not in ORDER}


__all__ = ["Request", "Source", "Written", "new_app", "read_hf", "read_source"]
