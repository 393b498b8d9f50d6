"""The model card: what Olares Router and Model Console read about an app's model, derived from the catalog once.

The card of Olares' engine bases is llm-init's (`GET /api/model-spec`;
github.com/beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd llamacppllmbasev3/templates/llm-init.yaml): it is
fed `MODEL_NAME`, `MODEL_SUPPORTS` (a comma list of `vision`, `tools`, `thinking`, or `none`, expanded there into the
`supports_*` keys) and `ENGINE_ARGS`, the engine's own flags, whose context flag is the window the engine serves
(llama.cpp `-c` over `-np` slots, vLLM `--max-model-len`, SGLang `--context-length`).
A chart of this project runs no llm-init: it passes the same facts the same way — MODEL_NAME / MODEL_SUPPORTS as
manifest envs (generator/chart/parts.py ModelCard) and the window as the engine's own context flag — and
`catalog preset` writes them as the env values of an official base.

Capabilities, each from a fact the catalog holds (never typed twice):
- vision: the app serves images (`vision: true`);
- tools: the engine's argv enables tool calls (engines' `supports`: vLLM `--enable-auto-tool-choice` + a
  `--tool-call-parser`, llama.cpp `--jinja`);
- thinking: vLLM runs a `--reasoning-parser`, or the chat template the app ships reads `enable_thinking` or emits
  `<think>` (the Qwen3 and DeepSeek templates' switch and tag) and the argv does not turn it off (llama.cpp
  `--reasoning off` / `--reasoning-budget 0`, `--chat-template-kwargs` with `"enable_thinking": false`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from generator.catalog import Resolved
from generator.chart.parts import MODEL_SUPPORTS
from generator.engines import EngineSpec
from generator.engines import family_for

THINKING_MARKS = ("enable_thinking", "<think>")


@dataclass(frozen=True)
class Card:
    name: str  # MODEL_NAME: the name the server answers to
    supports: tuple[str, ...]  # a subset of MODEL_SUPPORTS, in its order
    context_window: int  # tokens per request as the engine serves them (the context flag / the slots)
    max_output: int  # the largest output a request may ask for: the window (the engines' default)
    why: tuple[tuple[str, str], ...]  # capability -> the fact it comes from

    @property
    def supports_env(self) -> str:
        return ",".join(self.supports) or "none"


def _kwargs_off(argv: list[str]) -> bool:
    for i, token in enumerate(argv[:-1]):
        if token == "--chat-template-kwargs":
            try:
                value = json.loads(argv[i + 1])
            except ValueError:
                continue
            if isinstance(value, dict) and value.get("enable_thinking") is False:
                return True
    return False


def thinking_off(argv: list[str]) -> bool:
    pairs = set(zip(argv, argv[1:], strict=False))
    return (("--reasoning", "off") in pairs or ("--reasoning-budget", "0") in pairs) or _kwargs_off(argv)


def capabilities(r: Resolved, spec: EngineSpec) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    argv = spec.argv
    from_argv = family_for(r.stack).supports(argv)  # the family's reading of its argv, handed no app
    why: dict[str, str] = {}
    if r.app.vision:
        why["vision"] = "the app serves images (vision: true)"
    if "tools" in from_argv:
        why["tools"] = "the engine's argv enables tool calls"
    if "thinking" in from_argv:
        why["thinking"] = "the engine runs a reasoning parser"
    template = r.chat_template.text if r.chat_template is not None else ""
    if "thinking" not in why and any(mark in template for mark in THINKING_MARKS) and not thinking_off(argv):
        why["thinking"] = f"the chat template {r.app.chat_template} switches thinking (enable_thinking / <think>)"
    supports = tuple(s for s in MODEL_SUPPORTS if s in why)
    return supports, tuple((s, why[s]) for s in supports)


def card_for(r: Resolved, spec: EngineSpec, window: int) -> Card:
    """The card of `r` (planned: sized) served by `spec` with a context `window` per request."""
    supports, why = capabilities(r, spec)
    return Card(r.app.model_alias, supports, window, window, why)


__all__ = ["Card", "capabilities", "card_for", "thinking_off"]
