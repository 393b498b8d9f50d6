"""Engine stacks: a pinned image of vLLM, llama.cpp or a fork, and what it supports."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from generator.schema.common import MAX_ITEMS, Args, Env, Id, ImageRef, Name, Port, Source, Sources, Strict
from generator.schema.device import CpuArch, CudaVersion
from generator.schema.engines import Declared, Engine, declared  # the one registry of engine names

# beellama: Anbeeld/beellama.cpp, a fork of buun with its own option set (--spec-dflash-cross-ctx, --spec-dm-*) and
# KV types (no turbo8/vbr): github.com/Anbeeld/beellama.cpp@0ef12a52c35eeff894ca4ef8019f2510f5e3ded8 common/arg.cpp
Fork = Literal["upstream", "genesis", "atomic", "lucebox", "buun", "beellama"]
Feature = Literal[
    "turboquant",  # TurboQuant KV cache types
    "turboquant_hybrid",  # TurboQuant on hybrid (GDN) models: vLLM #39931 or Genesis P4
    "mtp",  # multi-token-prediction speculative decoding
    "draft_model",  # separate draft model
    "dflash",  # DFlash block drafter
    "ngram",  # n-gram / prompt-lookup speculation
    "vision",  # multimodal projector
    "vision_with_mtp",  # vision together with MTP speculation
    "gemma4",  # Gemma 4 architecture
    "gemma4_mtp",  # Gemma 4 assistant drafter
    "genesis",  # Genesis runtime patch set
]
SpecMethod = Literal["mtp", "draft", "dflash", "ngram"]
PLACEHOLDERS = ("{tokens}", "{drafter}")


class CudaRequirement(Strict):
    """The CUDA the image's toolkit needs from the driver, read from the image's build recipe at that build (or, where
    the build is not public, the bound a measurement gives), with its source (docs/devices.md "The driver's CUDA")."""

    version: CudaVersion
    source: Source


class Stack(Strict):
    id: Id
    title: Name
    engine: Engine
    fork: Fork
    image: Annotated[ImageRef, StringConstraints(max_length=512)]
    image_recorded: bool = True  # False: no source records the exact image; `catalog check` warns
    version: Name  # engine version or build the image carries
    genesis_version: Name | None = None
    port: Port
    # an HTTP path: the probes' httpGet.path and what `catalog smoke` asks; printable ASCII, no space
    health_path: Annotated[str, StringConstraints(pattern=r"^/[!-~]{0,199}$")] = "/health"
    command: Args = ()  # overrides the image entrypoint (forks with their own binary)
    features: Annotated[tuple[Feature, ...], Field(max_length=MAX_ITEMS)] = ()
    spec_methods: Annotated[tuple[SpecMethod, ...], Field(max_length=MAX_ITEMS)] = ()
    missing_python_packages: Annotated[tuple[Name, ...], Field(max_length=MAX_ITEMS)] = ()  # what the image lacks
    args: Args = ()  # flags every app on this stack gets
    # How this image spells each speculative method; `{tokens}` and `{drafter}` are filled in per app.
    speculative_args: dict[SpecMethod, Args] = Field(default_factory=dict)
    env: Env = Field(default_factory=dict)
    flag_table: Id | None = None  # catalog/flags/<id>.yaml, used by `catalog check`
    # The speculative acceptance (accepted / drafted tokens) below which a measured run is a regression: a drafter that
    # broke, not noise (docs/fit.md "Roofline": half the lowest acceptance a validated release of the stack measured).
    acceptance_floor: Annotated[float, Field(ge=0, le=1)] | None = None
    # The CPU architectures the image is published for, as a source records them; amd64 unless one records more
    # (a device of another architecture cannot pull it: docs/devices.md "Excluded devices").
    platforms: Annotated[tuple[CpuArch, ...], Field(min_length=1, max_length=4)] = ("amd64",)
    # The CUDA architectures the image's kernels are built for (sm_120 ...), where a source records them; empty: not
    # recorded, any GPU. A GPU runs a cubin of its own major revision and a lower or equal minor (docs/devices.md).
    cuda_archs: Annotated[tuple[Annotated[str, StringConstraints(pattern=r"^sm_\d{2,3}[a-z]?$")], ...],
                          Field(max_length=16)] = ()
    cuda: CudaRequirement | None = None  # None: not recorded (CUDA002 warns), the driver check cannot run
    sources: Sources

    @model_validator(mode="after")
    def _placeholders(self) -> "Stack":
        for method, args in self.speculative_args.items():
            for arg in args:
                if ("{" in arg or "}" in arg) and arg not in PLACEHOLDERS:
                    raise ValueError(f"speculative_args.{method}: {arg!r}: "
                                     f"only {', '.join(PLACEHOLDERS)} may use braces")
        if self.acceptance_floor is not None and not self.spec_methods:
            raise ValueError("acceptance_floor needs spec_methods: a stack that does not draft accepts nothing")
        missing = set(self.spec_methods) - set(self.speculative_args)
        if missing:
            raise ValueError(f"spec_methods {sorted(missing)} have no speculative_args spelling")
        return self

    @property
    def family(self) -> Declared:
        """The engine family this stack runs, as the registry declares it (generator/schema/engines.py)."""
        return declared(self.engine, self.fork)

    @property
    def image_tag(self) -> str:
        ref = self.image.split("@", 1)[0]
        tail = ref.rsplit("/", 1)[-1]
        return tail.split(":", 1)[1] if ":" in tail else "latest"
