"""The one interface of an engine family: what the code outside `generator/engines/` may ask of an engine.

Each family module (`generator/engines/<family>.py`, named in the registry `generator/schema/engines.py`) holds one
`FAMILY = EngineFamily(...)`; `generator/engines/family.py` loads it by the family's name. Nothing outside the
engine modules compares a value with an engine name: it asks the stack's family for one of these. The parts only
`catalog import` and `catalog calibrate` ask for are declared beside their helpers, and a family builds them on first
use: `Launcher` in engines/readback.py, `BootReader` in engines/bootlog.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from generator.schema import Declared

if TYPE_CHECKING:
    from generator.catalog import Resolved
    from generator.engines.base import EngineSpec, Sized
    from generator.engines.bootlog import BootReader
    from generator.engines.readback import Launcher
    from generator.engines.values import Settings

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
class Knobs:
    """How one engine family takes the shared form's settings (generator/chart/shared.py; flags of its pinned flag
    tables, catalog/flags/)."""

    context_flags: tuple[str, ...]  # the flag (and aliases) whose value is the context
    per_slot_pool: bool  # the context flag is the pool of all slots (llama.cpp -c = slots x window)
    slot_flags: tuple[str, ...]  # the slot-count flag and its aliases ("" : the engine serves one sequence)
    slot_setting: str  # the Settings field the fit read the slots from
    output_flag: str | None  # the flag that takes the output setting (vLLM: a limit; llama.cpp: a default)
    output_format: str  # printf format of its value (%d = the tokens)
    api_key_flag: str | None


@dataclass(frozen=True)
class EngineFamily:
    """One engine family: the registry's declaration and everything the code asks of the engine.

    build: the container's argv and env of a sized app (`generator/engines/base.py build`), built once per accelerator
    mode by the chart plan; supports: what that argv lets the Router card declare (tools, thinking); decide: the
    app's typed settings decided from its fields, its stack's args and its extra_args without building an argv (the
    sizing, the plan, the rules and explain read these), a subclass of engines/values.py `Settings` whose methods are
    the engine's behaviour the other stages ask (KV bytes, the utilization budget, the rules' hooks); settings: the
    same settings read back from an argv (a chart someone else wrote; tests/engines/test_resolve_once.py holds that
    the two agree on every fixture app); fit: the memory model that places its parts: the name of its module
    `generator/fit/<fit>.py`, whose `build(r, settings, ledger)` `fit/sizing.py memory_model` loads by that name;
    server: what its running server says (smoke); knobs: the flags that take the shared form's context, slots,
    output and API key (generator/chart/shared.py); olares_base: Olares' own engine base that runs it (catalog/bases/,
    generator/preset/build.py; None: none); parser: its argv parser's traits (flag check);
    llama_server: the container runs llama-server itself (not a fork's own server): `catalog calibrate --gpu-mib`
    turns its boot log's buffers into GPU rows, and the real-shape probe (generator/fit/probe.py) boots it;
    allocates: the server allocates what its model needs rather than a share of the device (rules/hami.py);
    local_smoke: a CPU llama-server on a tiny model can stand in for its server (`catalog smoke --local`: the GGUF
    families, whose servers speak llama-server's HTTP);
    launcher_of: how `catalog import` recognises and reads its container (engines/readback.py `Launcher`; None: import
    does not); boot_of: the boot-log lines `catalog calibrate` reads (engines/bootlog.py `BootReader`; None: it reads
    none of this engine's). Each is built on first use and kept (`launcher`, `boot`: the same object on every read), so
    that a render or a check never loads the argv reader or the boot-log reader.
    """

    declared: Declared
    build: Callable[[Sized], EngineSpec]
    supports: Callable[[list[str]], frozenset[str]]
    settings: Callable[[Resolved, EngineSpec], Settings]  # a subclass of engines/values.py Settings
    decide: Callable[[Sized], Settings]  # the same settings decided from the app alone, no argv built
    fit: str
    server: Server
    knobs: Knobs
    parser: Parser = Parser()
    olares_base: str | None = None
    llama_server: bool = False
    allocates: bool = False
    local_smoke: bool = False
    launcher_of: Callable[[], Launcher] | None = None
    boot_of: Callable[[], BootReader] | None = None

    @cached_property  # a frozen dataclass keeps it: cached_property writes the instance's __dict__ itself
    def launcher(self) -> Launcher | None:
        return self.launcher_of() if self.launcher_of is not None else None

    @cached_property
    def boot(self) -> BootReader | None:
        return self.boot_of() if self.boot_of is not None else None

    @property
    def name(self) -> str:
        return self.declared.family


__all__ = ["MAX_COUNT", "SEMVER", "Answer", "EngineFamily", "Get", "Knobs", "Parser", "Said", "Server", "Text", "count",
           "semver"]
