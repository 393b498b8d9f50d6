"""Genesis rules over the resolved env: exact registry names, requires/conflicts, the P65 / P5B crashes,
retired patches, and Genesis env on a stack that does not run Genesis (docs/domain.md)."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.engines import PatchState, is_genesis_name, suggestion, unknown_vars
from generator.rules import AppContext, rule
from generator.rules.locate import at_env, env_where, settings

SRC = "docs/domain.md; catalog/genesis/registry.yaml"
P65_PARTNERS = ("P22", "P38")  # docs/domain.md#crash-rules crash 3: P65 needs both


def _genesis(ctx: AppContext) -> bool:
    return ctx.resolved.genesis is not None and "genesis" in ctx.resolved.stack.features


def _states(ctx: AppContext) -> dict[str, PatchState]:
    return settings(ctx).genesis


def _blame(ctx: AppContext, rule_id: str, state: PatchState, message: str, fix: str) -> Finding:
    if state.var is not None:
        return at_env(ctx, rule_id, "error", state.var, message, fix)
    return ctx.finding(rule_id, "error", message, fix, "genesis_patches")


def _named(state: PatchState) -> str:
    if state.var is None:
        return f"{state.patch.id} ({state.why})"
    return f"`{state.var.name}={state.var.value}` ({env_where(state.var)}, {state.patch.id})"


@rule("GEN001", "error", "Genesis env names are exact registry names (or their aliases)",
      "Genesis ignores a name it does not know: the fix the app relies on is silently not applied", SRC)
def exact_names(ctx: AppContext) -> Iterable[Finding]:
    registry = ctx.resolved.genesis
    if registry is None or not _genesis(ctx):
        return
    for var in unknown_vars(registry, ctx.engine.env):
        hint = suggestion(registry, var.name)
        fix = f"use `{hint}`" if hint else "use a name from catalog/genesis/registry.yaml (or add the patch there)"
        yield at_env(ctx, "GEN001", "error", var, f"`{var.name}` ({env_where(var)}) is not a Genesis registry name: "
                     f"Genesis ({registry.version}) ignores it", fix)


@rule("GEN002", "error", "a Genesis patch's required patches are on",
      "A patch without its prerequisites crashes or does nothing (registry `requires`)", SRC)
def requires(ctx: AppContext) -> Iterable[Finding]:
    states = _states(ctx)
    for state in states.values():
        if not state.on or state.patch.id == "P65":  # P65's requirements have their own crash (GEN004)
            continue
        for need in state.patch.requires:
            other = states.get(need)
            if other is not None and not other.on:
                yield _blame(ctx, "GEN002", state, f"{_named(state)} requires {need}, which is off ({other.why})",
                             f"turn {need} on ({other.patch.env}=1) or drop {state.patch.id}")


@rule("GEN003", "error", "conflicting Genesis patches are not both on",
      "P65 (PIECEWISE downgrade) and P67/P67b/PN353B patch the same TurboQuant spec-verify path; the registry "
      "marks them mutually exclusive", "docs/domain.md")
def conflicts(ctx: AppContext) -> Iterable[Finding]:
    states = _states(ctx)
    seen: set[frozenset[str]] = set()
    for state in states.values():
        for other_id in state.patch.conflicts:
            other = states.get(other_id)
            pair = frozenset((state.patch.id, other_id))
            if state.on and other is not None and other.on and pair not in seen:
                seen.add(pair)
                yield _blame(ctx, "GEN003", state, f"{_named(state)} conflicts with {_named(other)}",
                             f"keep one: {state.patch.id} or {other_id}")


@rule("GEN004", "error", "P65 runs with P22 and P38 active",
      "P65 alone crashes the first inference: `AssertionError: Workspace is locked but allocation requires 0.76 MB` "
      "(turboquant_attn.py:862, _decode_attention); P22 + P38 pre-allocate those workspaces",
      "docs/domain.md#crash-rules crash 3; docs/domain.md")
def p65_partners(ctx: AppContext) -> Iterable[Finding]:
    states = _states(ctx)
    p65 = states.get("P65")
    if p65 is None or not p65.on:
        return
    for pid in P65_PARTNERS:
        other = states.get(pid)
        if other is not None and not other.on:
            target = other if other.var is not None else p65
            yield _blame(ctx, "GEN004", target, f"{_named(p65)} without {pid} ({_named(other)}): the first inference "
                         "crashes with `AssertionError: Workspace is locked but allocation requires ...`",
                         f"keep {pid} on (remove `{other.var.name}`)" if other.var else f"turn {pid} on")


def _p5b(ctx: AppContext) -> PatchState | None:
    state = _states(ctx).get("P5B")
    return state if state is not None and state.on else None


@rule("GEN005", "error", "P5B is off with P38 on a 24 GB cap",
      "P5B's padded KV pages plus P38's lazy continuation-prefill workspace overflow the 24300 MiB cap: CUDA OOM at "
      "the first inference (`512 MiB requested when only 646 MiB free`, Fast 2.5.5)",
      "docs/domain.md#crash-rules crash 5 and Fast 2.5.4 -> 2.5.5; docs/domain.md")
def p5b_with_p38(ctx: AppContext) -> Iterable[Finding]:
    p5b, p38 = _p5b(ctx), _states(ctx).get("P38")
    if p5b is None or p38 is None or not p38.on or ctx.gpu_memory_mib > 24576:
        return
    yield _blame(ctx, "GEN005", p5b, f"{_named(p5b)} together with P38 ({p38.why}) on a {ctx.app.gpu_memory_mib} MiB "
                 "cap: CUDA OOM at the first inference (P5B padded pages + P38 workspace exceed the cap)",
                 "remove P5B (the Fast app reverted it in 2.5.5)")


@rule("GEN006", "error", "P5B is not combined with turboquant_4bit_nc",
      "P5B + turboquant_4bit_nc (+ MTP) fails at engine init with a TorchDynamo shape mismatch (FakeTensor mul, "
      "196608 vs 48*s72): CrashLoopBackOff", "docs/domain.md#crash-rules crash 5; Fast upgradeDescription v2.2.1 "
      "(github.com/aamsellem/orales-one-market vllmqwen36turbo27bone/OlaresManifest.yaml@5e460bc7)")
def p5b_with_4bit_nc(ctx: AppContext) -> Iterable[Finding]:
    p5b, s = _p5b(ctx), settings(ctx)
    if p5b is not None and s.kv_k.value == "turboquant_4bit_nc":
        where = s.kv_k.where() or "from kv_cache_type"
        yield _blame(ctx, "GEN006", p5b, f"{_named(p5b)} with `--kv-cache-dtype turboquant_4bit_nc` ({where}): "
                     "TorchDynamo shape mismatch at engine init", "remove P5B or use turboquant_k8v4")


@rule("GEN007", "warning", "no retired or superseded Genesis patch is enabled",
      "Retired patches were made unnecessary upstream; on newer pins they are no-ops or patch code that moved",
      "docs/domain.md")
def retired(ctx: AppContext) -> Iterable[Finding]:
    for state in _states(ctx).values():
        if state.on and state.patch.superseded_by and state.var is not None:
            yield at_env(ctx, "GEN007", "warning", state.var, f"{_named(state)} is superseded by "
                         f"{state.patch.superseded_by}", f"drop {state.patch.id} unless the pinned vLLM predates it")


@rule("GEN008", "warning", "Genesis env only on a stack that runs Genesis",
      "An image without the Genesis patcher ignores GENESIS_*/SNDR_* variables: the fix is not applied",
      "docs/domain.md (a runtime patcher applied at boot by the Genesis image)")
def genesis_only_on_genesis(ctx: AppContext) -> Iterable[Finding]:
    if _genesis(ctx):
        return
    for var in ctx.engine.env:
        if is_genesis_name(var.name):
            yield at_env(ctx, "GEN008", "warning", var, f"`{var.name}={var.value}` ({env_where(var)}) has no effect: "
                         f"stack {ctx.resolved.stack.id} ({ctx.resolved.stack.image}) does not run Genesis",
                         "remove it, or move the app to the genesis-vllm stack")
