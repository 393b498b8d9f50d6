"""Which server a container runs: a supported engine family, a known server the catalog does not model, or
something unknown.

Supported: each registered family with a `Launcher` (generator/engines/readback.py; its module says its program
and launcher shapes): vLLM (`vllm serve`), llama.cpp and its forks (`llama-server`), Lucebox (`dflash_server`),
SGLang (`python -m sglang.launch_server`, `sglang serve`). A catalog stack with the chart's image and command is
recognised first, whatever its program is called (the Genesis image runs `/entrypoint.sh serve`,
catalog/stacks/genesis-vllm.yaml).

Known but not modelled ("unsupported": reported and left out, not an error), each signature from the
maintainer's market at github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9:
text-to-speech on vLLM-Omni (vllmvoxtraltts4bone), speech recognition with Voxtral on vLLM
(vllmvoxtral3bone, vllmvoxtralrt4bone), TabbyAPI + ExLlamaV3 (exl3qwen35a3bone), and Python application
servers such as the Qwen3-TTS demo (qwen3ttstone), OmniVoice (omnivoiceone) and ACE-Step music
(acestepxlone). Anything else is an unknown engine: an input error.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from generator.engines import FAMILIES, Family
from generator.engines.family import family
from generator.engines import Launcher

SHELLS = ("sh", "bash", "dash", "ash", "zsh")
PYTHON = re.compile(r"^(python[0-9.]*|uvicorn|gunicorn|fastapi)$")


@dataclass(frozen=True)
class Unsupported:
    kind: str  # TTS, ASR, music, ExLlamaV3, Python server
    server: str  # what runs, in words
    why: str  # the signature that matched


@dataclass(frozen=True)
class _Signature:
    kind: str
    server: str
    image: str | None = None
    program: str | None = None
    script: str | None = None
    model: str | None = None


SIGNATURES = (
    _Signature("TTS", "vLLM-Omni", program=r"^vllm-omni$"),
    _Signature("ExLlamaV3", "TabbyAPI + ExLlamaV3", image=r"(?i)tabbyapi|exllama"),
    _Signature("TTS", "Qwen3-TTS demo server", image=r"(?i)qwen3-tts"),
    _Signature("TTS", "OmniVoice (FastAPI)", script=r"(?i)\bomnivoice\b"),
    _Signature("music", "ACE-Step", image=r"(?i)acestep", script=r"(?i)\bacestep\b"),
    _Signature("ASR", "Voxtral speech model on vLLM", model=r"(?i)voxtral"),
    _Signature("ASR", "Whisper speech model on vLLM", model=r"(?i)whisper"),
)


def basename(program: str) -> str:
    return posixpath.basename(program.strip("\"'"))


def launchers() -> list[tuple[Family, Launcher]]:
    """The registered families import recognises, in the registry's order."""
    return [(name, launcher) for name in FAMILIES if (launcher := family(name).launcher) is not None]


def family_of(program: str) -> Family | None:
    """The family whose server program `program` is (its `Launcher.program`), else None."""
    return next((name for name, launcher in launchers() if launcher.runs(program)), None)


def launched(argv: list[str]) -> tuple[Family, int] | None:
    """(family, how many words launch it) of an argv that starts one of the families' launchers: a launcher shape
    first (`python3 -m sglang.launch_server`), then a program (with its subcommand: `vllm serve`); else None."""
    if not argv:
        return None
    for name, launcher in launchers():
        if (shape := launcher.shape(argv)) is not None:
            return name, len(shape)
    for name, launcher in launchers():
        if launcher.runs(argv[0]):
            words = launcher.program_words(argv)
            return (name, words) if words is not None else None
    return None


def entrypoint_of(image: str) -> str | None:
    """The server program an image runs as its entrypoint (a family's `Launcher.entrypoint`: ghcr.io/ggml-org/
    llama.cpp:server* runs /app/llama-server), for a container with no command; None: not known."""
    for _, launcher in launchers():
        if launcher.entrypoint is not None and launcher.entrypoint[0].match(image):
            return launcher.entrypoint[1]
    return None


def upstream_images() -> tuple[str, ...]:
    """The image prefixes of the engines' own publishers (every family's `Launcher.upstream_images`)."""
    return tuple(prefix for _, launcher in launchers() for prefix in launcher.upstream_images)


def is_shell(program: str) -> bool:
    return basename(program) in SHELLS


def launches(word: str, after_exec: bool) -> bool:
    """Whether a script line whose first word is `word` starts the app's server."""
    return after_exec or family_of(word) is not None or basename(word) == "vllm-omni"


def unsupported(image: str, program: str, script: str, model: str | None = None) -> Unsupported | None:
    """The known non-chat server (or engine the catalog does not model) that matches, if any."""
    for sig in SIGNATURES:
        hits = []
        if sig.image and re.search(sig.image, image):
            hits.append(f"image {image}")
        if sig.program and re.search(sig.program, basename(program)):
            hits.append(f"program {basename(program)}")
        if sig.script and re.search(sig.script, script):
            hits.append("its launcher script")
        if sig.model and model and re.search(sig.model, model):
            hits.append(f"model {model}")
        if hits:
            return Unsupported(sig.kind, sig.server, ", ".join(hits))
    for name, launcher in launchers():  # each engine module's own launcher shapes
        if launcher.recognise is not None and (why := launcher.recognise(image, program, script)):
            label = family(name).server.label
            return Unsupported(label, f"{label} (generator/engines/{name}.py) with an image and launcher no catalog "
                               "stack has", why)
    if PYTHON.match(basename(program)):
        return Unsupported("Python server", f"a Python application ({basename(program)})",
                           f"program {basename(program)}; the catalog models vLLM and llama.cpp-family engines")
    return None


__all__ = [
    "Family",
    "Unsupported",
    "basename",
    "entrypoint_of",
    "family_of",
    "is_shell",
    "launched",
    "launchers",
    "launches",
    "unsupported",
    "upstream_images",
]
