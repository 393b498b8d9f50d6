"""`catalog smoke APP --local`: the real smoke, against a real llama-server on this machine, no GPU needed.

The server is llama.cpp's `llama-server` as `.ci/build-llama-server.sh` builds it from the PyPI sdist (found by
generator/adapters/llama.py). It serves a tiny random-weight model (generator/smoke/tinygguf.py) shaped like the
app where the smoke looks: the file is named as the app's GGUF (the identity check compares `/props`
`model_path`), it is served under the app's alias, with the app's context length per slot. The measurement, the
identity check, the content check and the verdict are the ones every smoke runs (generator/smoke/run.py,
verdict.py). What a local run cannot be, and how it is honest about it:

- The model is a stand-in, so the speed is this machine's, not the app's: no baseline and no roofline are
  judged, and the result is never written to the ledger (it would otherwise count as the app's smoke in the
  prune gate and in the store page's history).
- The engine build is the sdist's (the build number set at build time, e.g. b11434), not the image's: an image
  tag that carries another build (`server-cuda13-b8740`) is a note, not a failure.
- Speculative decoding: the tiny model has no MTP head or the app's drafter, so a speculative app is served with
  a tiny draft model (`--spec-type draft-simple`): the speculation path (draft counters in the response
  timings, acceptance) is exercised and checked, and a note says the acceptance is not the app's. Without it the
  smoke would fail with "speculation is off", which says nothing about the app either.
- Only llama.cpp-family apps run here (upstream llama.cpp and its forks, whose server speaks the same API): vLLM
  and the other engines need the app's GPU; their smoke runs on the device (`--endpoint` or `--kube-context`).

The chart's own argv is not what runs here (it names the device's GPU, the fork's flags, a model this machine
does not have): `catalog check` proves it against the pinned image's flag table.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.adapters import LlamaServer
from generator.core import UsageError
from generator.smoke import tinygguf
from generator.smoke.identity import LLAMACPP_BUILD
from generator.smoke.run import Target

if TYPE_CHECKING:
    from generator.catalog import Resolved

DRAFT_TOKENS = 4  # --spec-draft-n-max of the stand-in drafter
THREADS = 2


@dataclass(frozen=True)
class LocalRun:
    url: str
    target: Target  # the app's target, the engine version it cannot match moved to a note
    build: str  # the local server's `b<build>-<commit>`
    notes: tuple[str, ...]


def runnable(resolved: Resolved) -> None:
    """UsageError, with what to do instead, for an app a local llama-server cannot stand in for."""
    from generator.engines import family_for

    if not family_for(resolved.stack).local_smoke:  # the family says (engines/interface.py `local_smoke`)
        engine = resolved.stack.engine
        raise UsageError(f"{resolved.app.name} runs on {engine} ({resolved.stack.image}): only llama.cpp-family apps "
                         "can be smoked locally (a CPU llama-server on a tiny model); smoke it where it runs: "
                         f"`catalog smoke {resolved.app.name} --endpoint URL` or `--kube-context CTX`")


def server_args(resolved: Resolved, folder: Path) -> tuple[list[str], list[str]]:
    """(llama-server args, notes): the tiny model named as the app's GGUF, its alias, its context; a tiny drafter
    for a speculative app."""
    app = resolved.app
    weight = resolved.model.weight(app.quantization)
    assert weight is not None, "the catalog resolver checks the app's quantization"
    name = Path(weight.file).name if weight.file else f"{app.name}.gguf"
    model = tinygguf.write(folder / name, dataclasses.replace(tinygguf.MAIN, context=app.context_length))
    args = ["-m", str(model), "--alias", app.model_alias, "-c", str(app.context_length), "-np", "1",
            "-t", str(THREADS), "--no-ui", "--metrics"]
    notes = [f"local run: a tiny random model named {name} stands in for {resolved.model.name} on a CPU "
             "llama-server; the speed is this machine's, not the app's (no baseline or roofline judged, "
             "nothing recorded)"]
    if app.speculative is not None:
        draft = tinygguf.draft(folder / "tiny-draft.gguf", context=app.context_length)
        args += ["-md", str(draft), "--spec-type", "draft-simple", "--spec-draft-n-max", str(DRAFT_TOKENS)]
        notes.append(f"local run: speculation ({app.speculative.method}) is stood in for by a tiny draft model "
                     "(--spec-type draft-simple): the draft path is checked, its acceptance is not the app's")
    return args, notes


def local_target(resolved: Resolved, build: str) -> tuple[Target, list[str]]:
    """The app's target with the engine version compared here: the local build is the sdist's, so an image that
    carries another build is a note, not a failure (and a match is still said)."""
    target = Target.of(resolved)
    expected = target.expected
    if expected is None or expected.engine_version is None:
        return target, []
    match = LLAMACPP_BUILD.search(build)
    got = f"b{match.group(1)}" if match else build
    if got == expected.engine_version:
        return target, []
    notes = [f"local run: llama-server {build} (built from the sdist) stands in for {expected.engine_version} of "
             f"{expected.image}; engine version not compared"]
    return dataclasses.replace(target, expected=dataclasses.replace(expected, engine_version=None)), notes


@contextlib.contextmanager
def local_server(resolved: Resolved, server: LlamaServer | None = None) -> Iterator[LocalRun]:
    """Write the tiny model(s), boot llama-server on them on 127.0.0.1, yield where; everything is removed and
    the server killed when the block ends."""
    runnable(resolved)
    server = server or LlamaServer.find()
    build = server.build()
    with tempfile.TemporaryDirectory(prefix="catalog-smoke-local-") as tmp:
        folder = Path(tmp)
        args, notes = server_args(resolved, folder)
        target, more = local_target(resolved, build)
        with server.running(args, folder / "llama-server.log") as url:
            yield LocalRun(url, target, build, tuple(notes + more))
