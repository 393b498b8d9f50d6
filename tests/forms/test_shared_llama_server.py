"""The shared form's settings on a real llama-server: the flags a shared chart passes when a user sets a context of
10,000,000 tokens, an output length and an API key (read from the Deployment Helm renders, `$(LLM_API_KEY)` expanded from the Secret as the kubelet
does) start a real server that serves the fit's maximum as its context, refuses a request without the key and stops
an answer whose request names no max_tokens at the setting.

Real parts: the planner, the renderer, the Helm engine, llama-server ($LLAMA_SERVER) on a tiny GGUF, loopback HTTP.
"""

from __future__ import annotations

import re

import httpx
import pytest
import yaml

from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.chart.render import render
from generator.lint import helm
from generator.lint.values import olares_values

from support.checks import A3B
from support.smoke import llama_server, write_models

pytestmark = pytest.mark.needs_llama_server
KEY = "sk-shared-form-test-4417"


def settings_flags(catalog_copy) -> tuple[int, list[str]]:
    """(the context the engine gets for LLM_CONTEXT_WINDOW=10,000,000, the args a shared chart adds for
    LLM_MAX_OUTPUT_TOKENS=8 and LLM_API_KEY) as the container gets them."""
    (catalog_copy / "market.yaml").write_text("form: shared\n", encoding="utf-8")
    r = load_catalog(catalog_copy).apps[A3B]
    tree = render(plan(r))
    with helm.chart_folder(A3B, tree) as folder:
        values = olares_values(A3B, yaml.safe_load(tree["OlaresManifest.yaml"]), yaml.safe_load(tree["values.yaml"]),
                               olares_env={"LLM_CONTEXT_WINDOW": "10000000", "LLM_MAX_OUTPUT_TOKENS": "8",
                                           "LLM_API_KEY": KEY})
        docs, errors = helm.documents(helm.render(folder, values, name=A3B, namespace="x-shared"))
    assert errors == []
    secret = next(d for d in docs if d.kind == "Secret").body["stringData"]
    args = next(d for d in docs if d.kind == "Deployment").body["spec"]["template"]["spec"]["containers"][0]["args"]
    at = args.index("--n-predict")
    added = args[at:]
    assert added == ["--n-predict", "8", "--api-key", "$(LLM_API_KEY)"]
    context = int(args[args.index("--ctx-size") + 1])
    assert context == plan(r).shared.context.maximum < 10_000_000
    return context, [re.sub(r"\$\((\w+)\)", lambda m: secret[m.group(1)], a) for a in added]  # as the kubelet


def test_a_real_llama_server_takes_the_shared_forms_settings(catalog_copy, tmp_path):
    context, flags = settings_flags(catalog_copy)
    models = write_models(tmp_path, context=context)  # a tiny model whose own length is the chart's maximum
    with llama_server(models, aliases=["tiny"], context=context, log_dir=tmp_path, extra=flags) as server:
        body = {"model": "tiny", "messages": [{"role": "user", "content": "hello"}]}
        auth = {"Authorization": f"Bearer {KEY}"}
        with httpx.Client(timeout=60) as client:
            refused = client.post(f"{server.url}/v1/chat/completions", json=body)
            answered = client.post(f"{server.url}/v1/chat/completions", json=body, headers=auth)
            asked = client.post(f"{server.url}/v1/chat/completions", json={**body, "max_tokens": 32}, headers=auth)
            props = client.get(f"{server.url}/props", headers=auth).json()
    assert props["default_generation_settings"]["n_ctx"] == context  # the capped setting, served
    assert refused.status_code == 401
    assert answered.status_code == 200 and answered.json()["usage"]["completion_tokens"] == 8
    # llama-server's --n-predict is the default of a request that names none, not a ceiling: a request's own
    # max_tokens goes past it (measured on b11434); docs/forms.md says so
    assert asked.json()["usage"]["completion_tokens"] == 32
