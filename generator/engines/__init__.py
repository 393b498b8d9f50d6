"""One module per engine family (the registry: generator/schema/engines.py; each module's `FAMILY`:
generator/engines/interface.py); the argv builder of a sized app, by its family.
A family's module is imported when an app of that family is first built (`engines/family.py` `family`)."""

from __future__ import annotations

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)

from generator.engines.base import EngineSpec, Sized
from generator.engines.family import family_for


def engine_for(r: Sized) -> EngineSpec:
    """The app's argv and env, built by its family (`r` sized: generator/fit/sizing.py `sized`)."""
    return family_for(r.stack).build(r)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["ALL_TURBO", "AnySettings", "Arg", "Argv", "BadFigure", "BootReader", "CHAT_TEMPLATE_DIR",
           "CHAT_TEMPLATE_FILE", "ENGINES", "EngineSpec", "EnvVar", "FAMILIES", "Family", "Flag", "GGML_BYTES",
           "GGML_DEFAULT", "GgufSettings", "Knobs", "Launcher", "MAX_DIGITS", "Mapped", "Origin", "Parsed",
           "PatchState", "Provenance", "Reading", "Row", "SLOT_DIR", "Said", "Server", "Settings", "SglangSettings",
           "Sized", "Spelling", "Syntax", "TQ_NORM_BYTES", "TURBOQUANT_BITS", "TURBO_TYPES", "Token", "VLLM_BYTES",
           "Value", "VllmSettings", "allocates_what_it_needs", "cal", "cap_of", "decided", "engine_for",
           "family_for", "family_of", "ggml_slot_bytes", "is_flag", "is_genesis_name", "llamacpp", "normalize",
           "noted", "origin_label", "parser_of", "patch_states", "server_of", "settings_for", "sglang",
           "stack_engine", "suggestion", "unknown_vars", "vllm_slot_bytes"]

if TYPE_CHECKING:
    from .kvbytes import ALL_TURBO as ALL_TURBO
    from .settings import AnySettings as AnySettings
    from .base import Arg as Arg
    from .argv import Argv as Argv
    from .bootlog import BadFigure as BadFigure
    from .bootlog import BootReader as BootReader
    from .base import CHAT_TEMPLATE_DIR as CHAT_TEMPLATE_DIR
    from .base import CHAT_TEMPLATE_FILE as CHAT_TEMPLATE_FILE
    from .family import ENGINES as ENGINES
    from .base import EnvVar as EnvVar
    from .family import FAMILIES as FAMILIES
    from .family import Family as Family
    from .argv import Flag as Flag
    from .kvbytes import GGML_BYTES as GGML_BYTES
    from .kvbytes import GGML_DEFAULT as GGML_DEFAULT
    from .settings import GgufSettings as GgufSettings
    from .interface import Knobs as Knobs
    from .readback import Launcher as Launcher
    from .bootlog import MAX_DIGITS as MAX_DIGITS
    from .readback import Mapped as Mapped
    from .readback import Origin as Origin
    from .bootlog import Parsed as Parsed
    from .genesis_env import PatchState as PatchState
    from .bootlog import Provenance as Provenance
    from .bootlog import Reading as Reading
    from .bootlog import Row as Row
    from .base import SLOT_DIR as SLOT_DIR
    from .interface import Said as Said
    from .interface import Server as Server
    from .values import Settings as Settings
    from .settings import SglangSettings as SglangSettings
    from .readback import Spelling as Spelling
    from .readback import Syntax as Syntax
    from .kvbytes import TQ_NORM_BYTES as TQ_NORM_BYTES
    from .kvbytes import TURBOQUANT_BITS as TURBOQUANT_BITS
    from .kvbytes import TURBO_TYPES as TURBO_TYPES
    from .readback import Token as Token
    from .kvbytes import VLLM_BYTES as VLLM_BYTES
    from .values import Value as Value
    from .settings import VllmSettings as VllmSettings
    from .family import allocates_what_it_needs as allocates_what_it_needs
    from .bootlog import cal as cal
    from .base import cap_of as cap_of
    from .settings import decided as decided
    from .family import family_of as family_of
    from .kvbytes import ggml_slot_bytes as ggml_slot_bytes
    from .readback import is_flag as is_flag
    from .genesis_env import is_genesis_name as is_genesis_name
    from . import llamacpp as llamacpp
    from .argv import normalize as normalize
    from .bootlog import noted as noted
    from .argv import origin_label as origin_label
    from .family import parser_of as parser_of
    from .genesis_env import patch_states as patch_states
    from .family import server_of as server_of
    from .settings import settings_for as settings_for
    from . import sglang as sglang
    from .family import stack_engine as stack_engine
    from .genesis_env import suggestion as suggestion
    from .genesis_env import unknown_vars as unknown_vars
    from .kvbytes import vllm_slot_bytes as vllm_slot_bytes

_FACE: dict[str, str] = {"ALL_TURBO": "kvbytes", "AnySettings": "settings", "Arg": "base", "Argv": "argv",
                         "BadFigure": "bootlog", "BootReader": "bootlog", "CHAT_TEMPLATE_DIR": "base",
                         "CHAT_TEMPLATE_FILE": "base", "ENGINES": "family", "EnvVar": "base", "FAMILIES": "family",
                         "Family": "family", "Flag": "argv", "GGML_BYTES": "kvbytes", "GGML_DEFAULT": "kvbytes",
                         "GgufSettings": "settings", "Knobs": "interface", "Launcher": "readback",
                         "MAX_DIGITS": "bootlog", "Mapped": "readback", "Origin": "readback", "Parsed": "bootlog",
                         "PatchState": "genesis_env", "Provenance": "bootlog", "Reading": "bootlog",
                         "Row": "bootlog", "SLOT_DIR": "base", "Said": "interface", "Server": "interface",
                         "Settings": "values", "SglangSettings": "settings", "Spelling": "readback",
                         "Syntax": "readback", "TQ_NORM_BYTES": "kvbytes", "TURBOQUANT_BITS": "kvbytes",
                         "TURBO_TYPES": "kvbytes", "Token": "readback", "VLLM_BYTES": "kvbytes", "Value": "values",
                         "VllmSettings": "settings", "allocates_what_it_needs": "family", "cal": "bootlog",
                         "cap_of": "base", "decided": "settings", "family_of": "family",
                         "ggml_slot_bytes": "kvbytes", "is_flag": "readback", "is_genesis_name": "genesis_env",
                         "llamacpp": "llamacpp", "normalize": "argv", "noted": "bootlog", "origin_label": "argv",
                         "parser_of": "family", "patch_states": "genesis_env", "server_of": "family",
                         "settings_for": "settings", "sglang": "sglang", "stack_engine": "family",
                         "suggestion": "genesis_env", "unknown_vars": "genesis_env", "vllm_slot_bytes": "kvbytes"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
