"""What every engine family's settings have and answer: `Value` (a setting and where it came from) and `Settings`,
the base of each family's typed settings (generator/engines/settings.py reads them from the argv).

The stages outside generator/engines/ ask a settings object these methods and properties, never its class: each has
a base default (llama.cpp's ggml KV cache, an engine that allocates what it needs) that a family overrides where its
engine differs. Its own module so that the family interface (engines/interface.py) can name the type without an
import loop through engines/family.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from generator.engines.argv import Flag
from generator.engines.base import EngineSpec
from generator.engines.genesis_env import PatchState
from generator.engines.kvbytes import ALL_TURBO, GGML_CONV_BYTES, TURBO_TYPES, ggml_slot_bytes
from generator.schema import Stack
from generator.schema import Family

EngineFamily = Family  # the family names: generator/schema/engines.py
T = TypeVar("T")


@dataclass(frozen=True)
class Value(Generic[T]):
    """A setting's effective value and the flag or field it came from (what `catalog explain` and rules cite)."""

    value: T
    source: Flag | None = None  # None: the app field / engine default named in `note`
    note: str = ""

    def where(self) -> str:
        return self.source.where() if self.source else self.note


@dataclass(frozen=True, kw_only=True)
class Settings:
    """What every engine family has: context, KV types, speculative decoding, vision, Genesis patches.

    One subclass per family adds its own typed settings; `engine` names the family.
    """

    FAMILY: ClassVar[EngineFamily]
    context: Value[int]  # tokens; 0 = the model's own length (llama.cpp `-c 0`)
    kv_k: Value[str]
    kv_v: Value[str]
    spec_method: str | None = None
    spec_tokens: int | None = None
    spec_source: str = ""
    vision: bool = False
    genesis: dict[str, PatchState] = field(default_factory=dict)  # patch id -> state (Genesis images only)

    @property
    def engine(self) -> EngineFamily:
        return self.FAMILY

    def genesis_on(self, patch_id: str) -> bool:
        state = self.genesis.get(patch_id)
        return bool(state and state.on)

    # ---- what the stages outside generator/engines/ ask of an engine's settings: a base default (llama.cpp's
    # ggml KV cache, an engine that allocates what it needs), overridden by the family whose engine differs. ----

    def kv_slot_bytes(self, head_dim: int) -> float:
        """Bytes the engine stores per token and KV head (K and V) at these KV types (the memory fit, the roofline
        and the speed model read it): llama.cpp's ggml table unless the family has its own."""
        return ggml_slot_bytes(str(self.kv_k.value), str(self.kv_v.value), head_dim)

    @property
    def kv_element_bytes(self) -> float:
        """Bytes of one cached K or V element (the mean of K and V)."""
        return self.kv_slot_bytes(1) / 2

    @property
    def conv_state_bytes(self) -> int:
        """Bytes of one value of a recurrent layer's conv state (llama.cpp: f32)."""
        return GGML_CONV_BYTES

    def kv_values(self) -> list[tuple[str, Value[str]]]:
        """Every KV cache type the engine is given, labelled (the draft model's too where it has its own)."""
        return [("K", self.kv_k), ("V", self.kv_v)]

    def kv_type_supported(self, dtype: str, stack: Stack) -> bool:
        """Whether the stack's image accepts the KV cache type `dtype`: a TurboQuant type only on the llama.cpp
        forks that have it (generator/engines/kvbytes.py TURBO_TYPES)."""
        return dtype not in ALL_TURBO or dtype in TURBO_TYPES.get(stack.fork, set())

    @property
    def turboquant_kv(self) -> bool:
        """The KV cache is vLLM's TurboQuant (rules/engine.py ENG002, ENG003, ENG005)."""
        return False

    @property
    def graphs_off(self) -> bool:
        """CUDA graphs are off (vLLM `--enforce-eager` or cudagraph_mode NONE)."""
        return False

    @property
    def flash_attn_off(self) -> bool:
        """Flash attention is turned off explicitly (llama.cpp `-fa off`)."""
        return False

    @property
    def flash_attn_source(self) -> Flag | None:
        """The flag that sets flash attention (None: not set, or the engine has none)."""
        return None

    @property
    def kv_ladder(self) -> bool:
        """The app may be offered another of llama.cpp's KV cache types per device (generator/fit/devices.py
        LLAMA_KV_LADDER): its engine is llama-server with -ctk/-ctv."""
        return False

    @property
    def utilization_budget(self) -> bool:
        """The engine reserves utilization x the total it reads, whatever it needs (vLLM without a pinned KV pool):
        the fit sizes the utilization for the cap (generator/fit/sizing.py)."""
        return False

    @property
    def budget_utilization(self) -> float | None:
        """The utilization the engine multiplies the total by (vLLM `--gpu-memory-utilization`); None: none."""
        return None

    @property
    def memory_fraction(self) -> bool:
        """The engine's static pool is a fraction of the memory it reads (SGLang `--mem-fraction-static`): the fit
        sizes that fraction for the cap and keeps it in the app's utilization field (generator/fit/sizing.py)."""
        return False

    @property
    def pool_from_device_total(self) -> bool:
        """The engine sizes its pool from the device's total, not the HAMi cap (vLLM): raising the cap is no fix for
        a pool that does not fit (rules/fit.py FIT001)."""
        return False

    @property
    def also_shrinks(self) -> str:
        """What else lowers the engine's memory, besides the context and the KV type ("": nothing the fix names)."""
        return ""

    def long_context_allowed(self, engine: EngineSpec) -> bool:
        """The engine is told to start past the model's maximum context (a warning, not an error: ENG010)."""
        return False

    @property
    def auto_tool_choice_needs_parser(self) -> bool:
        """`--enable-auto-tool-choice` without `--tool-call-parser` fails tool requests (vLLM; ENG011)."""
        return False

    def ubatch_clamp(self) -> tuple[Flag, int, int, str] | None:
        """An explicit micro-batch the engine clamps: (its flag, the value asked, the one used, what clamps it); None
        when none is asked or it is used as asked (rules/batch.py FIT004)."""
        return None

    def doubled_sequences(self, fork: str) -> bool:
        """The stack's fork doubles the server's sequences, splitting the KV cache further (rules/consistency.py)."""
        return False

    def slot_context(self, fork: str) -> int | None:
        """The context one request gets when the fork splits the KV cache over doubled sequences (each sequence
        gets context / sequences tokens without a unified KV cache); None when it does not split it."""
        return None


__all__ = ["EngineFamily", "Settings", "Value"]
