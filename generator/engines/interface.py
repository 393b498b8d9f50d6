"""The one interface of an engine family: what the code outside `generator/engines/` may ask of an engine.

Each family module (`generator/engines/<family>.py`, named in the registry `generator/schema/engines.py`) holds one
`FAMILY = EngineFamily(...)`; `generator/engines/family.py` loads it by the family's name. Nothing outside the
engine modules compares a value with an engine name: it asks the stack's family for one of these.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.engines.readback import Syntax
from generator.schema.engines import Declared

if TYPE_CHECKING:
    from generator.catalog import Resolved
    from generator.engines.base import EngineSpec
    from generator.engines.bootlog import Parsed, Provenance, Row
    from generator.engines.readback import Mapped, Spelling, Token
    from generator.schema import Stack

MAX_COUNT = 10**9
SEMVER = re.compile(r"^v?(\d+\.\d+\.\d+)(?=$|[-+.a-z])")  # `v0.19.1-cu130`, `0.19.1+cu130`

Text = Callable[[object], "str | None"]  # a value the server sent, fit to keep (generator/smoke/identity.py `_text`)
Answer = dict[str, object]  # a JSON object a server answered, as json.loads returns it
Get = Callable[[str], "Answer | None"]  # GET the engine's own endpoint (None: not said)


def count(value: object) -> int | None:
    """A positive count a server reported; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_COUNT else None


def semver(text: str) -> str | None:
    """`0.19.1` from a tag or version that starts with it (vllm/vllm-openai's `v0.19.1-cu130`, SGLang's `0.5.14`)."""
    match = SEMVER.match(text)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Said:
    """The answers every server is asked (each None where it did not answer): llama.cpp `/props` (with its
    `default_generation_settings`), the `/v1/models` card of the served name, `/version`."""

    props: Answer | None
    card: Answer | None
    version: Answer | None

    @property
    def generation(self) -> Answer:
        settings = self.props.get("default_generation_settings") if self.props else None
        return settings if isinstance(settings, dict) else {}


@dataclass(frozen=True)
class Server:
    """What a running server of this engine answers about itself (`generator/smoke/identity.py` asks it).

    label: the engine's name as people write it; owned_by: its `/v1/models` cards' `owned_by`;
    sniff: answers only this engine gives, where no card names it (tried in `sniff_order`; None: none);
    read: (engine version, model path, context) from the answers, `get` asking the engine's own endpoints;
    default: read when the server names no engine at all;
    version: the engine's version in an upstream image tag or in what the server reports, spelt one way (so the two
    compare);
    metrics: it exposes the Prometheus counters `generator/smoke/metrics.py` reads (scraped around each run).
    """

    label: str
    owned_by: str | None
    read: Callable[[Said, Get, Text], tuple[str | None, str | None, int | None]]
    version: Callable[[str], str | None]
    sniff: Callable[[Said], bool] | None = None
    sniff_order: int = 0
    default: bool = False
    metrics: bool = False


@dataclass(frozen=True)
class Parser:
    """How the engine's command-line parser treats what the flag table cannot say (generator/flags/check.py):
    abbreviations: a unique prefix of a long flag is accepted as that flag (argparse with `allow_abbrev`);
    strict_ints: an integer flag refuses anything but digits (llama.cpp's `std::stoi` callers)."""

    abbreviations: bool = False
    strict_ints: bool = False


@dataclass(frozen=True)
class Launcher:
    """How `catalog import` (generator/importer/) recognises a container that runs this engine and reads its argv.

    read: the argv after the launcher back into catalog fields (helpers in engines/readback.py);
    context_flag: the flag the context length is passed with (import says it is missing);
    program: the program's base name that runs the server (`.match`ed: llama.cpp's builds name it `llama-server*`);
    subcommand: the word after `program` that serves (`vllm serve`; None: the program itself serves);
    shapes: whole launcher prefixes that run it whatever the program is called (`python3 -m sglang.launch_server`),
    tried before any `program`;
    recognise: why a container is this engine's server where no catalog stack has its image and launcher (import
    reports it as unsupported; None: only `program` and `shapes` say so);
    syntax: the argv's spelling where the catalog has no flag table; chat_template_flag: the flag that points the
    server at a chat template file (None: import does not read one back);
    own_speculative: the argv spells speculative decoding itself (vLLM's `--speculative-config`), not in the stack's
    `speculative_args`; kv_env: env variables that hold the KV cache types (Lucebox's dflash_server);
    upstream_images: image prefixes of the engine's own publisher (a drafted stack's fork is `upstream`);
    entrypoint: (image pattern, program) of images whose entrypoint runs the server, for a chart that sets no
    command.
    """

    read: Callable[[list[Token], Spelling, Stack | None], Mapped]
    context_flag: str
    program: re.Pattern[str] | None = None
    subcommand: str | None = None
    shapes: tuple[tuple[str, ...], ...] = ()
    recognise: Callable[[str, str, str], str | None] | None = None
    syntax: Syntax = Syntax()
    chat_template_flag: str | None = None
    own_speculative: bool = False
    kv_env: tuple[str, ...] = ()
    upstream_images: tuple[str, ...] = ()
    entrypoint: tuple[re.Pattern[str], str] | None = None

    def shape(self, argv: list[str]) -> tuple[str, ...] | None:
        """The launcher shape `argv` starts with, or None."""
        words = tuple(argv)
        return next((s for s in self.shapes if words[: len(s)] == s), None)

    def program_words(self, argv: list[str]) -> int | None:
        """How many words of `argv` (which starts with this engine's program) launch it: the program, and its
        subcommand where it has one; None when the subcommand is not there (`vllm` with no `serve`)."""
        if self.subcommand is None:
            return 1
        return 2 if len(argv) > 1 and argv[1] == self.subcommand else None

    def runs(self, program: str) -> bool:
        """Whether `program` (a path or name) is this engine's server program."""
        return self.program is not None and self.program.match(posixpath.basename(program.strip("\"'"))) is not None


@dataclass(frozen=True)
class BootReader:
    """The lines of the engine's boot log that `catalog calibrate` (generator/fit/calibrate.py) reads.

    read: one line of the log into the `Parsed` so far (engines/bootlog.py: its figures, the model and engine it
    names; a line of no interest to this engine leaves it as it was); rows: the readings of a log of this engine as
    calibration rows; needs: what such a log must hold, in words (said when it holds none of it).
    """

    read: Callable[[Parsed, str, int], None]
    rows: Callable[[Parsed, Provenance], list[Row]]
    needs: str


@dataclass(frozen=True)
class EngineFamily:
    """One engine family: the registry's declaration and everything the code asks of the engine.

    build: the container's argv and env (`generator/engines/base.py build`); supports: what that argv lets the
    Router card declare (tools, thinking); settings: the typed settings read back from the argv; fit: the memory
    model in `generator/fit/` that places its parts (`fit/sizing.py` FITS: "vllm", "llamacpp" or "sglang");
    server: what its running server says (smoke); parser: its argv parser's traits (flag check);
    llama_server: the container runs llama-server itself (not a fork's own server): `catalog calibrate --gpu-mib`
    turns its boot log's buffers into GPU rows, and the real-shape probe (generator/fit/probe.py) boots it;
    allocates: the server allocates what its model needs rather than a share of the device (rules/hami.py);
    launcher: how `catalog import` recognises and reads its container (None: import does not);
    boot: the boot-log lines `catalog calibrate` reads (None: it reads none of this engine's).
    """

    declared: Declared
    build: Callable[[Resolved], EngineSpec]
    supports: Callable[[list[str]], frozenset[str]]
    settings: Callable[[Resolved, EngineSpec], object]  # a Settings of engines/settings.py AnySettings
    fit: str
    server: Server
    parser: Parser = Parser()
    llama_server: bool = False
    allocates: bool = False
    launcher: Launcher | None = None
    boot: BootReader | None = None

    @property
    def name(self) -> str:
        return self.declared.family


__all__ = ["MAX_COUNT", "SEMVER", "Answer", "BootReader", "EngineFamily", "Get", "Launcher", "Parser", "Said", "Server",
           "Text", "count", "semver"]
