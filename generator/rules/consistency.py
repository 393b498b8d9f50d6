"""Consistency rules: what the market shows (title, description, versions, GPU size) agrees with what runs."""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule
from generator.rules.hami import hami_bytes, requested_gpu_mib
from generator.rules.locate import fit, settings

CONTEXT = re.compile(r"\b(\d{1,4})\s?[Kk]\b")
VISION_WORDS = re.compile(r"\b(vision|image|images|multimodal|multi-modal|VL)\b", re.IGNORECASE)
NO_VISION = re.compile(r"\b(text[- ]only|no vision|without vision|vision (?:is )?(?:not|disabled))\b", re.IGNORECASE)
MTP_WORDS = re.compile(r"\b(MTP|multi-token prediction)\b", re.IGNORECASE)


def _text(ctx: AppContext) -> dict[str, str]:
    return {"title": ctx.app.title, "description": ctx.app.description}


def context_matches(k: int, tokens: int) -> bool:
    """`128K` names 128 x 1024 or 128 x 1000 tokens (within one K)."""
    return abs(tokens - k * 1024) <= 1024 or abs(tokens - k * 1000) <= 1000


@rule("CON001", "error", "Chart appVersion is the app's version",
      "Olares shows versionName, which corresponds to appVersion, as the version of the application the chart contains "
      "(the maintainer's charts write the app's version in both); a different value hides which release users run",
      "beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e docs/developer/develop/package/manifest.md (Spec "
      "versionName); generator/chart/plan.py")
def app_version(ctx: AppContext) -> Iterable[Finding]:
    version = ctx.app.version
    if ctx.chart.chart.app_version != version:
        yield ctx.finding("CON001", "error", f"Chart appVersion {ctx.chart.chart.app_version!r} is not the app's "
                          f"version {version!r}", "render again (appVersion comes from the app's version)", "version")


@rule("CON002", "error", "manifest spec.versionName equals the Chart appVersion",
      "Olares shows versionName as the app's software version; two different values confuse users and reviewers",
      "docs/domain.md#hami (OlaresManifest spec.versionName)")
def version_name(ctx: AppContext) -> Iterable[Finding]:
    name, app_ver = ctx.chart.manifest.spec.version_name, ctx.chart.chart.app_version
    if name != app_ver:
        yield ctx.finding("CON002", "error", f"spec.versionName {name!r} differs from Chart appVersion {app_ver!r}",
                          "render again (both come from the app's version)", "version")


# buun and BeeLlama double the server's sequences when speculative decoding is on (the settings' `doubled_sequences`,
# generator/engines/settings.py DOUBLED_SEQUENCES, with the sources). Without --kv-unified each sequence gets
# context / n_seq_max tokens: the maintainer's buun app says "96K" for --ctx-size 196608 ("n_seq_max=2 (DFlash
# dual-buffer) divides ctx-size 196608 / 2 = 98304 per slot", orales-one-market@6a34b5bb
# llamacppqwen36dflashone/OlaresManifest.yaml:26).


def slot_context(ctx: AppContext) -> int | None:
    """The context one request gets when the fork splits the KV cache over doubled sequences, else None."""
    return settings(ctx).slot_context(ctx.resolved.stack.fork)


@rule("CON003", "error", "a context size in the title or description matches context_length",
      "Users pick the app by the context the market card promises",
      "docs/domain.md#crash-rules (apps table: context per app); buun/BeeLlama server-context.cpp (per-slot context)")
def context_claims(ctx: AppContext) -> Iterable[Finding]:
    tokens = settings(ctx).context.value
    per_slot = slot_context(ctx)
    for field, text in _text(ctx).items():
        for match in CONTEXT.finditer(text):
            k = int(match.group(1))
            if not context_matches(k, tokens) and not (per_slot and context_matches(k, per_slot)):
                yield ctx.finding("CON003", "error", f"{field} says {match.group(0)!r} but the engine gets a "
                                  f"{tokens:,}-token context", f"say {round(tokens / 1024)}K in the {field} or change "
                                  "context_length", field)


def _vision_claim(text: str) -> bool | None:
    if NO_VISION.search(text):
        return False
    return True if VISION_WORDS.search(text) else None


@rule("CON004", "error", "a vision or MTP claim in the title or description matches the engine args",
      "The 26B-A4B app ships without vision (atomic fork: mmproj not wired with MTP); the card must say so",
      "docs/domain.md#crash-rules crash 6 and apps table")
def feature_claims(ctx: AppContext) -> Iterable[Finding]:
    s = settings(ctx)
    for field, text in _text(ctx).items():
        claim = _vision_claim(text)
        if claim is not None and claim != s.vision:
            said = "vision" if claim else "no vision"
            runs = "loads a vision projector" if s.vision else "runs text-only"
            yield ctx.finding("CON004", "error", f"{field} promises {said} but the engine {runs}",
                              f"{'remove the vision claim' if claim else 'remove text-only'} from the {field} or "
                              f"{'enable' if claim else 'disable'} vision", field)
        if MTP_WORDS.search(text) and s.spec_method != "mtp":
            yield ctx.finding("CON004", "error", f"{field} mentions MTP but the engine runs "
                              f"{s.spec_method or 'no speculative decoding'}", f"remove MTP from the {field} or set "
                              "speculative.method: mtp", field)


@rule("CON005", "error", "requested GPU memory == gpumem == HAMi limit == the cap the fit used",
      "The scheduler, libvgpu and the memory fit must talk about the same number of MiB",
      "docs/domain.md (one GPU memory figure); docs/domain.md#hami")
def one_gpu_figure(ctx: AppContext) -> Iterable[Finding]:
    figures = dict(requested_gpu_mib(ctx))
    limit = next((e for e in ctx.engine.env if e.name == "CUDA_DEVICE_MEMORY_LIMIT_0"), None)
    in_container: dict[str, float | None] = {}
    if limit is not None:
        in_container[f"env CUDA_DEVICE_MEMORY_LIMIT_0 ({limit.value})"] = hami_bytes(limit.value) / 1024**2
    in_container["memory fit cap"] = float(fit(ctx).cap_mib)
    gpu = ctx.chart.gpu
    if gpu is not None and gpu.hami_cap.mib != gpu.scheduler.mib:
        # a measured belt raises only the in-container cap (docs/devices.md "Three numbers", HAMI005): the scheduler's
        # figures agree with each other, the in-container ones with each other
        groups = [figures, in_container]
    else:
        groups = [{**figures, **in_container}]
    for group in groups:
        yield from _one_figure(ctx, group)


def _one_figure(ctx: AppContext, figures: dict[str, float | None]) -> Iterable[Finding]:
    distinct = {round(v) for v in figures.values() if v is not None}
    if len(distinct) > 1:
        shown = "; ".join(f"{k} = {v:,.0f} MiB" for k, v in figures.items() if v is not None)
        yield ctx.finding("CON005", "error", f"the chart states different GPU memory figures: {shown}",
                          "state the GPU memory once, in gpu_memory_mib", "gpu_memory_mib")
