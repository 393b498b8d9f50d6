"""The engine's argv, read back by the family's `Launcher` (importer/argv.py) -> the app's model (or a
drafted one), served name, speculative draft, projector, vision, and what stays `extra_args`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from generator.core import Data
from generator.core import literal_secret, secret_name
from generator.importer.argv import Mapped, is_flag
from generator.importer.drafts import Pool
from generator.importer.helmview import marked_envs
from generator.importer.workload import Fetch, Origin, Token
from generator.importer.context import _Ctx, _declared, _launcher
from generator.importer.envmap import HF_REPO

CHART_MODELS = "/models"  # generator/engines/base.py MODELS_DIR: where the rendered chart's files are


# --- downloads --------------------------------------------------------------------------------------------

def _fetch_for(path: str, fetches: list[Fetch]) -> Fetch | None:
    for fetch in fetches:
        if fetch.dest and PurePosixPath(fetch.dest) == PurePosixPath(path):
            return fetch
    name = PurePosixPath(path).name
    for fetch in fetches:
        if fetch.dest is None and PurePosixPath(fetch.file).name == name:
            return fetch
    for fetch in fetches:
        if fetch.dest and PurePosixPath(fetch.dest).name == name:
            return fetch
    return None


def _apply_argv(ctx: _Ctx, mapped: Mapped, app: dict[str, Data], pool: Pool, family: str,
                fetches: list[Fetch]) -> None:
    name = str(app.get("name") or ctx.result.label)
    fields = dict(mapped.fields)
    _argv_fields(ctx, mapped, fields, app, name, family)
    model_id, quant = _argv_model(ctx, mapped, pool, fetches, name)
    if model_id is not None:
        app["model"], app["quantization"] = model_id, quant
        ctx.result.model = model_id
    spec = fields.get("speculative")
    if spec is not None:
        app["speculative"] = _argv_speculative(ctx, mapped, pool, fetches, name, model_id, spec)
    if _declared(family).gguf and mapped.mmproj_path is not None:
        _argv_mmproj(ctx, mapped, pool, fetches, name, model_id, app)
    elif _declared(family).audio:
        _argv_vllm_vision(ctx, mapped, pool, model_id, app)
    # what stays: extra_args (never a literal secret)
    mapped.extra = _without_secrets(ctx, mapped.extra)
    extra = [t.text for t in mapped.extra]
    if extra:
        app["extra_args"] = list[Data](extra)
        _report_kept(ctx, mapped.extra)
    _model_files_in_extra(ctx, mapped, fetches)


def _argv_fields(ctx: _Ctx, mapped: Mapped, fields: dict[str, Any], app: dict[str, Data], name: str,
                 family: str) -> None:
    """The served name and the fields the argv sets directly; a missing context length is said."""
    served = fields.pop("served_name", None)
    if served is not None and _served_repo(ctx, mapped, served, name):
        served = None
    if served is not None and served != name:
        app["served_name"] = served
    for key in ("context_length", "kv_cache_type", "kv_cache_type_v", "gpu_memory_utilization"):
        if key in fields:
            app[key] = fields[key]
    if "context_length" not in app:
        flag = _launcher(family).context_flag
        ctx.result.missing.append(f"context_length (the chart passes no {flag})")


def _served_repo(ctx: _Ctx, mapped: Mapped, served: str, name: str) -> bool:
    """A served name the catalog's `served_name` cannot hold, said: one that is the model's Hugging Face repo id
    (the official SGLang charts pass `--served-model-name "$MODEL_NAME"`, the `--model-path` repo: beclab/apps
    sglangqwen359bawq4bitv3/templates/wrappers.yaml), one of a manifest env with no default, or another name with a
    `/`. The model is identified by that repo (`_argv_model`); a re-render serves the app's name."""
    origin = mapped.origins.get("served_name", "served_name")
    envs = marked_envs(served)
    if envs:
        ctx.unmapped(origin, f"--served-model-name is manifest env {', '.join(envs)}, which has no default (the user "
                             f"names the model at install); a re-render serves {name!r}")
        return True
    if "/" not in served:
        return False
    repo = mapped.model_repo[0] if mapped.model_repo is not None else None
    what = "the model's Hugging Face repo id (the model and weight are found by it)" if served == repo else \
        "a Hugging Face repo id" if HF_REPO.fullmatch(served) else "a name with a `/`"
    ctx.unmapped(origin, f"--served-model-name {served} is {what}; the catalog's served_name takes no `/` "
                         f"(generator/schema/app.py): a re-render serves {name!r}")
    return True


def _served_weight(ctx: _Ctx, mapped: Mapped, pool: Pool, path: str, origin: Origin,
                   name: str) -> tuple[str, str] | None:
    """(model id, quantization) of a weight the catalog (or a draft) has under the repo id the engine serves its
    model as (`--served-model-name org/repo`), when the engine loads a path the chart does not download; else None.
    A served name is a name, not a download: only a weight already known is taken, never a new draft."""
    served = mapped.fields.get("served_name")
    if not isinstance(served, str) or not HF_REPO.fullmatch(served) or pool.find_weight(served, None, None) is None:
        return None
    model_id, quant = _weight(ctx, pool, served, None, None, str(origin), name)
    ctx.unmapped(origin, f"the engine loads {path}; the model is found by the repo id it is served as, {served} "
                         f"(model {model_id}, weight {quant}): a re-render downloads that repo")
    return model_id, quant


def _argv_model(ctx: _Ctx, mapped: Mapped, pool: Pool, fetches: list[Fetch],
                name: str) -> tuple[str | None, str | None]:
    """(model id, quantization) of the weights the engine serves: a Hugging Face repo, a file the chart
    downloads, or `-hf`; (None, None) with what is missing said."""
    model_id = quant = None
    if mapped.model_repo is not None:
        repo, origin = mapped.model_repo
        if envs := marked_envs(repo):
            ctx.result.missing.append(f"model: the engine serves manifest env {', '.join(envs)}, which has no default "
                                      "(the user names the model at install); a catalog app serves one model: "
                                      f"set {envs[0]}'s default to a Hugging Face repo id")
            ctx.unmapped(origin, f"the engine serves {repo}, set at install")
        elif not HF_REPO.fullmatch(repo):
            found = _served_weight(ctx, mapped, pool, repo, origin, name)
            if found is not None:
                return found
            ctx.result.missing.append(f"model: {repo} is not a Hugging Face repo id (a local path?)")
            ctx.unmapped(origin, f"the engine serves {repo}, not a Hugging Face repo")
        else:
            model_id, quant = _weight(ctx, pool, repo, None, mapped.model_revision, str(origin), name)
    elif mapped.model_path is not None:
        path, origin = mapped.model_path
        fetch = _fetch_for(path, fetches)
        if fetch is None and (found := _served_weight(ctx, mapped, pool, path, origin, name)) is not None:
            return found
        if fetch is None:
            ctx.result.missing.append(f"model: {path} is not downloaded by the chart (no curl/wget or fetch container "
                                      "names it), so its Hugging Face repo is unknown")
            ctx.unmapped(origin, f"model file {path} comes from outside the chart")
        else:
            model_id, quant = _weight(ctx, pool, fetch.repo, fetch.file, fetch.revision, str(fetch.origin), name)
            if fetch.by != "init container model-fetch":
                ctx.note(fetch.origin, f"{fetch.file} is downloaded by the {fetch.by}; the catalog's init container "
                                       f"fetches it to /models/{fetch.repo}/{fetch.file}")
    elif mapped.hf_repo is not None:
        text, origin = mapped.hf_repo
        repo, _, tag = text.partition(":")
        if mapped.hf_file:
            model_id, quant = _weight(ctx, pool, repo, mapped.hf_file, None, str(origin), name)
            ctx.note(origin, "the engine downloads the model itself (-hf); the catalog's init container fetches it")
        else:
            ctx.result.missing.append(f"model: -hf {text} names no file (the engine picks one by the tag {tag!r}); "
                                      "add the GGUF file to a model of the catalog")
            ctx.unmapped(origin, f"-hf {text}")
    else:
        ctx.result.missing.append("model: the engine's argv names no model")
    return model_id, quant


def _argv_speculative(ctx: _Ctx, mapped: Mapped, pool: Pool, fetches: list[Fetch], name: str,
                      model_id: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    """The speculative field, with its drafter (found in the model, or drafted) when the argv names one."""
    drafter = None
    if mapped.drafter_repo is not None and model_id is not None:
        drafter = pool.find_drafter(model_id, mapped.drafter_repo, None) or pool.add_drafter(
            model_id, spec["method"], mapped.drafter_repo, None, str(mapped.origins.get("speculative", "")), name)
    elif mapped.drafter_path is not None and model_id is not None:
        path, origin = mapped.drafter_path
        fetch = _fetch_for(path, fetches)
        if fetch is None:
            ctx.result.missing.append(f"speculative.drafter: {path} is not downloaded by the chart")
        else:
            drafter = pool.find_drafter(model_id, fetch.repo, fetch.file) or pool.add_drafter(
                model_id, spec["method"], fetch.repo, fetch.file, str(fetch.origin), name)
    if drafter:
        spec = {**spec, "drafter": drafter}
        known = pool.cat.models.get(model_id or "")
        if known is None or known.drafter(drafter) is None:
            ctx.result.model_draft = True
            ctx.result.missing.append(f"model {model_id}: drafter {drafter} is a draft "
                                      f"(drafts/models/{model_id}.yaml)")
    return spec


def _argv_mmproj(ctx: _Ctx, mapped: Mapped, pool: Pool, fetches: list[Fetch], name: str, model_id: str | None,
                 app: dict[str, Data]) -> None:
    """llama.cpp's `--mmproj`: the model's projector (found or drafted), else kept in extra_args."""
    assert mapped.mmproj_path is not None, "_apply_argv calls it for a --mmproj only"
    path, origin = mapped.mmproj_path
    fetch = _fetch_for(path, fetches)
    if fetch is None or model_id is None:
        ctx.result.missing.append(f"vision projector {path}: not downloaded by the chart")
        ctx.kept(origin, f"extra_args --mmproj {path}")
        mapped.extra += [Token("--mmproj", origin), Token(path, origin)]
    else:
        if not pool.mmproj_matches(model_id, fetch.repo, fetch.file):
            problem = pool.set_mmproj(model_id, fetch.repo, fetch.file, str(fetch.origin), name)
            if problem:
                ctx.result.missing.append(f"vision: {problem}")
        known = pool.cat.models.get(model_id)
        variant = None if known is None else next(
            (p for p in known.projectors() if (p.repo, p.file) == (fetch.repo, fetch.file)), None)
        if variant is not None and variant is not known.mmproj:  # type: ignore[union-attr]
            app["mmproj"] = variant.quant  # one of the model's other projectors
        if variant is None:
            ctx.result.model_draft = True
            ctx.result.missing.append(f"model {model_id}: the vision projector is a draft "
                                      f"(drafts/models/{model_id}.yaml)")
        app["vision"] = True


def _argv_vllm_vision(ctx: _Ctx, mapped: Mapped, pool: Pool, model_id: str | None, app: dict[str, Data]) -> None:
    """vLLM (the family whose builder writes `audio`, generator/schema/engines.py): vision from the audio image's
    flags or the model's architecture, or the olares-v3 Router card's MODEL_SUPPORTS (generator/chart/plan.py writes
    `vision` from the app's own flag); audio needs an audio encoder."""
    card = _card_vision(ctx.r.manifest)
    if card is not None:  # the card says it outright; the heuristics below only guess
        if card:
            app["vision"] = True
        model = pool.cat.models.get(model_id or "")
        if ctx.audio_image is not None and model is not None and not model.architecture.audio:
            ctx.result.missing.append(f"audio: model {model_id} has no audio encoder (architecture.audio)")
        return
    if ctx.audio_image is not None:
        if ctx.audio_image:
            app["vision"] = True
        model = pool.cat.models.get(model_id or "")
        if model is not None and not model.architecture.audio:
            ctx.result.missing.append(f"audio: model {model_id} has no audio encoder (architecture.audio)")
    elif model_id is not None:
        model = pool.cat.models.get(model_id)
        arch_vision = bool(model and model.architecture.vision)
        text = " ".join(t.text for t in mapped.extra)
        if arch_vision and "--language-model-only" not in text and not re.search(r'"image"\s*:\s*0', text):
            app["vision"] = True


def _card_vision(manifest: Any) -> bool | None:
    """Whether the manifest's MODEL_SUPPORTS lists vision; None without one."""
    envs = manifest.get("envs") if isinstance(manifest, dict) else None
    for env in envs if isinstance(envs, list) else ():
        if isinstance(env, dict) and env.get("envName") == "MODEL_SUPPORTS":
            return "vision" in str(env.get("default", "")).split(",")
    return None


def _without_secrets(ctx: _Ctx, tokens: list[Token]) -> list[Token]:
    """The tokens without secret flags and their values (each one recorded as not imported)."""
    kept: list[Token] = []
    skip = False
    for index, token in enumerate(tokens):
        head = token.text.split("=", 1)[0]
        if skip:
            skip = False
            continue
        if is_flag(head) and secret_name(head):
            ctx.unmapped(token.origin, f"{head}: a literal secret is not imported (set it in the cluster)")
            nxt = tokens[index + 1].text if index + 1 < len(tokens) else None
            skip = "=" not in token.text and nxt is not None and not is_flag(nxt)
            continue
        secret = literal_secret(token.text)
        if secret:  # a URL with `?token=hf_...`: the value goes, and the flag it belongs to
            flag = kept.pop().text if kept and is_flag(kept[-1].text) and not is_flag(token.text) else None
            ctx.unmapped(token.origin, f"{flag or 'an argument'}: {secret} is not imported (set it in the cluster)")
            continue
        kept.append(token)
    return kept


def _model_files_in_extra(ctx: _Ctx, mapped: Mapped, fetches: list[Fetch]) -> None:
    """A kept argument that reads a file under the models folder the rendered chart does not provide."""
    for index, token in enumerate(mapped.extra):
        if token.text.startswith(CHART_MODELS + "/") and "." in PurePosixPath(token.text).name:  # a file
            flag = mapped.extra[index - 1].text if index and is_flag(mapped.extra[index - 1].text) else "an argument"
            fetch = _fetch_for(token.text, fetches)
            source = (f"the chart's {fetch.by} downloads it from {fetch.repo}" if fetch
                      else "a script or init container of the chart writes it")
            ctx.result.missing.append(f"extra_args: {flag} {token.text} ({token.origin}) reads a file under "
                                      f"{CHART_MODELS} that the rendered chart does not provide ({source}); map it "
                                      "(a drafter or projector of the model, a stack's speculative_args) or drop it")


def _report_kept(ctx: _Ctx, tokens: list[Token]) -> None:
    group: list[Token] = []
    for token in tokens + [Token("--", Origin("", None))]:
        if is_flag(token.text) or token.text == "--":
            if group:
                text = " ".join(t.text if len(t.text) <= 60 else t.text[:57] + "..." for t in group)
                ctx.kept(group[0].origin, f"extra_args {text}")
            group = [token]
        else:
            group.append(token)


def _weight(ctx: _Ctx, pool: Pool, repo: str, file: str | None, revision: str | None, ref: str,
            app: str) -> tuple[str, str]:
    found = pool.find_weight(repo, file, revision)
    if found:
        model_id, quant, in_catalog = found
        if not in_catalog:
            ctx.result.model_draft = True
            ctx.result.missing.append(f"model {model_id}: weight {quant} is a draft (drafts/models/{model_id}.yaml)"
                                      + _draft_lacks(pool, model_id))
        return model_id, quant
    model_id, quant, how = pool.add_weight(repo, file, revision, ref, app)
    ctx.result.model_draft = True
    what = "a new model" if how == "new model" else f"weight {quant} {how}"
    ctx.result.missing.append(f"model {model_id}: {what} — complete drafts/models/{model_id}.yaml"
                              + _draft_lacks(pool, model_id))
    return model_id, quant


def _draft_lacks(pool: Pool, model_id: str) -> str:
    """What a drafted model lacks, said in the app's reason: facts no chart states (the architecture of the
    model's config.json, the weight's size, their sources)."""
    lacks = pool.models[model_id].missing()[0] if model_id in pool.models else []
    return f"; it lacks {', '.join(lacks)}" if lacks else ""


__all__ = ["CHART_MODELS"]
