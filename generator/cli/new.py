"""`catalog new APP --gguf URL_OR_PATH | --hf OWNER/REPO[:QUANT]`: a new model and its app from the model's own files.

Reads only the GGUF header (HTTP Range requests, a total deadline, a byte cap), writes catalog/models/<id>.yaml with
every geometry fact and its header key, the file's size and its tensors (the fit's real shape), and
catalog/apps/APP.yaml at version 1.0.0 with the context the fit allows on the device; without --title, --icon and
--category the app is a draft (drafts/apps/APP.yaml) naming what to fill. docs/new-model.md: new -> fill title and
icon -> render -> check -> smoke -> bump -> publish.
"""

from pathlib import Path
from typing import Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, use_catalog


@app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="The new app's name (lowercase letters and digits, at most 30).",
                                        show_default=False)],
    gguf: Annotated[str | None, typer.Option("--gguf", help="The model's GGUF: an http(s) URL (Hugging Face: "
                                             "…/OWNER/REPO/resolve/REVISION/FILE.gguf) or a local path.")] = None,
    hf: Annotated[str | None, typer.Option("--hf", help="A Hugging Face repository and the quantization to take: "
                                           "OWNER/REPO[:QUANT] (HF_ENDPOINT, HF_TOKEN honoured; the token is never "
                                           "shown or written).")] = None,
    mmproj: Annotated[str | None, typer.Option("--mmproj", help="The vision projector's GGUF URL.")] = None,
    draft: Annotated[str | None, typer.Option("--draft", help="A draft model's GGUF URL (an MTP or draft model), "
                                              "recorded as the model's drafter.")] = None,
    stack: Annotated[str | None, typer.Option("--stack", help="The stack (catalog/stacks) that serves it.")] = None,
    device: Annotated[str | None, typer.Option("--device", help="The device it runs on (catalog/devices).")] = None,
    like: Annotated[str | None, typer.Option("--like", help="Take another app's stack, device and settings (KV "
                                             "types, drafting, resources, env, args, owners); never its version, "
                                             "history or notes.")] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="OWNER/REPO the chart downloads a local or non-Hugging "
                                             "Face --gguf from.")] = None,
    model_id: Annotated[str | None, typer.Option("--model-id", help="The model's id (default: from the header's "
                                                 "general.basename and size label).")] = None,
    title: Annotated[str | None, typer.Option("--title", help="The app's title (no file says it).")] = None,
    icon: Annotated[str | None, typer.Option("--icon", help="The app's icon URL (no file says it).")] = None,
    category: Annotated[list[str] | None, typer.Option("--category", help="A market category (repeatable; no file "
                                                       "says it).")] = None,
    header_cap: Annotated[int, typer.Option("--header-cap", help="Read at most this many bytes of a header.")]
    = 64 * 1024 * 1024,
    timeout: Annotated[float, typer.Option("--timeout", help="Total deadline of each network call, seconds.")] = 60.0,
    catalog: CatalogOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A new model and app from the model's own files (GGUF header, Hugging Face file list and config.json), sized by
    the fit; a draft until its title, icon and categories are given.

    docs/new-model.md has the whole path.

    \b
    The whole path:
      1. catalog new APP --hf OWNER/REPO:QUANT --like APP --title T --icon URL --category C
      2. fill title/icon (a draft: edit drafts/apps/APP.yaml, move it to apps/)
      3. catalog render APP && catalog check APP
      4. catalog smoke APP --local, then --endpoint URL or --kube-context CTX
      5. catalog bump APP
      6. catalog publish APP --to git:PATH|oci://HOST/PATH|dir:PATH|market:DIR
    """
    import json
    import sys

    from generator.adapters import HfApi
    from generator.core.redact import redact
    from generator.core import safe_line
    from generator.newapp import Request, new_app

    def say(text: str) -> None:  # a URL or a name from a stranger's file: credentials masked, controls escaped
        print(safe_line(redact(text)))

    root = use_catalog(catalog, command="new", writes=True, quiet=as_json)
    req = Request(app=name, gguf=gguf, hf=hf, mmproj=mmproj, draft=draft, stack=stack, device=device, like=like,
                  repo=repo, model_id=model_id, title=title, icon=icon, categories=tuple(category or ()),
                  header_cap=header_cap)
    done = new_app(req, Path(root), HfApi.from_env(timeout_s=timeout))
    f = done.facts
    if as_json:
        sys.stdout.write(redact(json.dumps({
            "app": name, "model": str(done.model), "app_file": str(done.app), "draft": done.draft,
            "missing": list(done.missing), "context": done.context, "architecture": f.arch,
            "kv_bytes_per_token_f16": f.kv_bytes_per_token_f16, "source": done.source, "notes": done.notes})) + "\n")
        return
    say(f"read {done.source}: {f.arch}, {f.architecture['layers']} layers, KV {f.kv_bytes_per_token_f16:,} bytes "
        "per token at f16")
    say(f"wrote {done.model}")
    say(f"wrote {done.app} (context {done.context:,}: the largest the fit allows)")
    for note in done.notes:
        say(f"note: {note}")
    if done.draft:
        say(f"draft: fill {', '.join(done.missing)} in {done.app}, then move it to apps/ and run "
            f"`catalog render {name}` and `catalog check {name}` (docs/new-model.md)")
    else:
        say(f"next: `catalog render {name}`, `catalog check {name}`, `catalog smoke`, `catalog bump` "
            "(docs/new-model.md)")
