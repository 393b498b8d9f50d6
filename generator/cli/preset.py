"""`catalog preset [APP] [--base B] [--device D] [--json]`: the env values a user sets on one of Olares' own engine
bases (llamacppllmbasev3, vllmllmbasev3, sglangllmbasev3) to serve an app of the catalog (generator/preset/)."""


import json
import sys
from typing import Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core import UsageError

AppArg = Annotated[str | None, typer.Argument(help="The app (default: every active app, each on its family's base).",
                                              show_default=False)]
BaseOpt = Annotated[str | None, typer.Option(
    "--base", help="The engine base: llamacppllmbasev3, vllmllmbasev3 or sglangllmbasev3 (default: the app's "
                   "engine family's).")]
DeviceOpt = Annotated[str | None, typer.Option("--device", help="A device the app targets (default: its own).")]


@app.command()
def preset(name: AppArg = None, base: BaseOpt = None, device: DeviceOpt = None, catalog: CatalogOpt = None,
           as_json: JsonOpt = False) -> None:
    """The env values to set on an Olares engine base for an app, each checked against the base's envs, or one line
    saying why the base cannot serve it.

    MODEL_SOURCE, MODEL_NAME, MODEL_SUPPORTS, ENGINE_ARGS (the context the fit sizes, KV type, slots, batch and the
    stack's flags the base's image takes) and the GPU memory. Exit 1 when a preset is refused."""
    from generator.core import safe_line
    from generator.preset import flag_table, load_base
    from generator.preset import Preset, base_for, build_preset

    cat = load_catalog(use_catalog(catalog, command="preset", writes=False, quiet=as_json))
    if name is not None and name not in cat.apps:
        raise UsageError(f"unknown app {name!r}")
    selected = cat.select([name]) if name else [r for r in cat.select() if r.app.status == "active"]
    presets: list[Preset] = []
    for r in selected:
        chosen = base or base_for(r)
        if chosen is None:
            presets.append(Preset(r.app.name, "-", device or r.device.id,
                                  reason=f"{r.app.name} runs {r.stack.id}: Olares has no engine base of its family"))
            continue
        b = load_base(cat.root, chosen)
        presets.append(build_preset(r, b, flag_table(cat.root, b.flag_table), device))
    if as_json:
        data = [p.to_data() for p in presets]
        sys.stdout.write(json.dumps(data[0] if name else data, indent=2) + "\n")
    else:
        for p in presets:
            head = f"{p.app} on {p.base} ({p.device})"
            if p.reason:
                sys.stdout.write(safe_line(f"{head}: no preset: {p.reason}") + "\n")
                continue
            sys.stdout.write(safe_line(head) + "\n")
            for key, value in p.env:
                sys.stdout.write(safe_line(f"  {key}={value}", 4000) + "\n")
            for d in p.dropped:
                sys.stdout.write(safe_line(f"  left out: {' '.join(d.tokens)}: {d.why}", 4000) + "\n")
            for note in p.notes:
                sys.stdout.write(safe_line(f"  note: {note}", 4000) + "\n")
            for problem in p.problems:
                sys.stdout.write(safe_line(f"  REFUSED by the base: {problem}", 4000) + "\n")
    if any(not p.ok for p in presets):
        raise typer.Exit(1)
