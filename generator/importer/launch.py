"""The launcher: which container runs which engine family, and the catalog stack it runs (or a drafted
one); a chart with no engine the catalog imports.
"""

from __future__ import annotations

from typing import Any, cast

from generator.catalog import Catalog
from generator.core import CatalogError, InputError, Problem
from generator.engines import Family, family_of, stack_engine
from generator.flags import FlagTable, FlagTables
from generator.importer import programs
from generator.importer.drafts import Pool, StackDraft, slug
from generator.importer.source import ChartFiles
from generator.importer.workload import Launch, Origin, Pod, Token
from generator.schema import Stack
from generator.importer import objects
from generator.importer.context import _Ctx
from generator.importer.result import Imported, _unsupported


# --- the engine container -----------------------------------------------------------------------------

def _prefix_matches(argv: list[Token], command: tuple[str, ...]) -> bool:
    if not command or len(argv) < len(command):
        return False
    if programs.basename(argv[0].text) != programs.basename(command[0]):
        return False
    return [t.text for t in argv[1:len(command)]] == list(command[1:])


def _family_prefix(argv: list[Token]) -> tuple[str, int] | None:
    """(family, launcher length) of an argv that starts an engine's launcher (importer/programs.py `launched`)."""
    return programs.launched([t.text for t in argv])


def _engine_launch(pod: Pod, pool: Pool) -> tuple[Launch, str, int] | None:
    """(launch, family, program prefix length) of the one container that runs a supported engine."""
    found: list[tuple[Launch, str, int]] = []
    for launch in pod.launches:
        for stack in pool.stacks_with_image(launch.image):
            if _prefix_matches(launch.argv, tuple(stack.command)):
                family = family_of(stack)
                found.append((launch, family, len(stack.command)))
                break
        else:
            known = _family_prefix(launch.argv)
            if known:
                found.append((launch, known[0], known[1]))
    if len(found) > 1:
        names = ", ".join(f"{f[0].workload.label}/{f[0].name}" for f in found)
        raise InputError([Problem(str(found[1][0].argv[0].origin), None, None,
                                  f"two containers run an engine ({names}); a catalog app runs one")])
    return found[0] if found else None


def _choose_stack(pool: Pool, launch: Launch, family: str, prefix: int, port: int | None,
                  ctx: _Ctx) -> Stack | None:
    program = tuple(t.text for t in launch.argv[:prefix])
    best: tuple[int, Stack] | None = None
    for stack in pool.stacks_with_image(launch.image):
        engine_family = family_of(stack)
        if engine_family != family or (port is not None and stack.port != port):
            continue
        score = 0
        if tuple(stack.command) == program:
            score += 10
        elif stack.command and programs.basename(stack.command[0]) == programs.basename(program[0]):
            score += 5
        else:
            continue
        argv = [t.text for t in launch.argv[prefix:]]
        score += sum(1 for arg in stack.args if arg in argv)
        score += sum(1 for k, v in stack.env.items() if launch.env.get(k) and launch.env[k].value == v)
        if best is None or score > best[0]:
            best = (score, stack)
    if best is None:
        return None
    stack = best[1]
    if tuple(stack.command) != program:
        origin = launch.argv[0].origin
        if not launch.command_set:
            ctx.note(origin, f"the chart runs the image's entrypoint; stack {stack.id} states it as command "
                             f"{list(stack.command)}")
        else:
            ctx.unmapped(origin, f"the chart starts {' '.join(program)}; stack {stack.id} starts "
                                 f"{' '.join(stack.command)} (same program, another path)")
    return stack


def _table(cat: Catalog, stack: Stack | None) -> FlagTable | None:
    tables = FlagTables(cat.root)
    if stack is not None and stack.flag_table and tables.exists(stack.flag_table):
        try:
            return tables.get(stack.flag_table)
        except CatalogError:
            return None
    return None


def _no_engine(result: Imported, pod: Pod, files: ChartFiles) -> Imported:
    """No container runs an engine the catalog imports: a known unsupported engine is a result, else InputError."""
    for launch in pod.launches:
        script = launch.argv[0].text if launch.script is None and launch.argv else ""
        script = "\n".join(str(x) for x in [*objects.items(launch.container, "command"),
                                            *objects.items(launch.container, "args")]) or script
        found = programs.unsupported(launch.image, launch.program, script)
        if found:
            return _unsupported(result, found)
    what = "; ".join(f"{launch.name} runs {launch.program or '(the image entrypoint)'} ({launch.image})"
                     for launch in pod.launches) \
        or "no Deployment or StatefulSet with a container"
    origin = pod.launches[0].argv[0].origin if pod.launches and pod.launches[0].argv else Origin(files.label, None)
    raise InputError([Problem(str(origin), None, None,
                              f"unknown engine: {what}; the catalog imports vLLM (`vllm serve`), llama.cpp "
                              "(`llama-server`) and Lucebox (`dflash_server`) apps")])


def _draft_stack_model(draft_stack: StackDraft) -> Stack:
    """The drafted stack as a Stack (unvalidated: the draft is incomplete), for mapping the app's argv."""
    data = draft_stack.data
    command, spec_args, methods = data["command"], data.get("speculative_args", {}), data.get("spec_methods", [])
    assert isinstance(command, list) and isinstance(spec_args, dict) and isinstance(methods, list)
    fields: dict[str, Any] = {"fork": "upstream", "version": "", **data, "command": tuple(command), "args": (),
                              "env": {}, "speculative_args": {
                                  k: tuple(v) if isinstance(v, list) else () for k, v in spec_args.items()},
                              "spec_methods": tuple(methods)}
    return Stack.model_construct(**fields)


def _draft_stack(pool: Pool, launch: Launch, family: str, prefix: int, port: int | None, app: str) -> StackDraft:
    image = launch.image
    ref, tag = (image.rsplit(":", 1) if ":" in image.rsplit("/", 1)[-1] else (image, "latest"))
    repo = ref.rsplit("/", 1)[-1]
    guessed = [f"id and title from the image {image}"]
    engine, fork = stack_engine(cast(Family, family))
    data: dict[str, Any] = {"id": slug(f"{repo}-{tag}"), "title": f"{repo} {tag}"[:60], "engine": engine}
    upstream = image.startswith(programs.upstream_images())
    if fork is not None:
        data["fork"] = fork
    elif upstream:
        data["fork"] = "upstream"
        guessed.append("fork upstream from the image's publisher")
    data["image"] = image
    data["port"] = port or 8080
    if port is None:
        guessed.append("port 8080: the chart passes no --port")
    startup = objects.section(objects.section(launch.container, "startupProbe"), "httpGet")
    data["health_path"] = str(startup.get("path") or "/health")
    data["command"] = [t.text for t in launch.argv[:prefix]]
    data["sources"] = [{"ref": str(launch.argv[0].origin), "note": "image and command of the imported chart"}]
    return pool.add_stack(data, guessed, app)
