"""The model card (generator/chart/card.py): capabilities from the catalog's facts — the app's vision, the engine's
argv, the chat template it ships — and the window as the engine serves it.

Real parts: a copy of the market fixture's catalog with the embedded catalog's chat template copied in, the real
planner and renderer.
"""

from __future__ import annotations

import shutil

import yaml

from generator.catalog import load_catalog
from generator.chart.card import card_for, thinking_off
from generator.chart.plan import plan
from generator.chart.render import render

from support.catalogs import REPO
from support.checks import A3B, set_app

TEMPLATE_ID = "qwen36-developer-role"  # its text reads enable_thinking and writes <think>


def with_template(catalog, **changes):
    (catalog / "chat_templates").mkdir(exist_ok=True)
    for suffix in (".yaml", ".jinja"):
        shutil.copy(REPO / "catalog" / "chat_templates" / f"{TEMPLATE_ID}{suffix}", catalog / "chat_templates")
    (catalog / "market.yaml").write_text("form: shared\n", encoding="utf-8")
    set_app(catalog, A3B, chat_template=TEMPLATE_ID, **changes)
    return load_catalog(catalog).apps[A3B]


def supports_env(tree: dict[str, str]) -> str:
    envs = yaml.safe_load(tree["OlaresManifest.yaml"])["envs"]
    return next(e["default"] for e in envs if e["envName"] == "MODEL_SUPPORTS")


def test_thinking_comes_from_the_chat_template_the_app_ships(catalog_copy):
    r = with_template(catalog_copy)
    spec = plan(r)
    card = card_for(spec.resolved, spec.engine, spec.shared.context.default)
    assert "thinking" in card.supports and dict(card.why)["thinking"].startswith("the chat template")
    assert card.context_window == r.app.context_length == card.max_output
    assert "thinking" in supports_env(render(spec)).split(",")


def test_thinking_turned_off_in_the_argv_is_not_declared(catalog_copy):
    r = with_template(catalog_copy, extra_args=["--chat-template-kwargs", '{"enable_thinking": false}'])
    spec = plan(r)
    assert "thinking" not in card_for(spec.resolved, spec.engine, 1).supports
    assert "thinking" not in supports_env(render(spec))


def test_thinking_off_reads_the_engine_spellings():
    assert thinking_off(["--reasoning", "off"]) and thinking_off(["--reasoning-budget", "0"])
    assert thinking_off(["--chat-template-kwargs", '{"enable_thinking": false}'])
    assert not thinking_off(["--reasoning", "on", "--chat-template-kwargs", '{"enable_thinking": true}'])
