"""Property: any text the schema accepts in title, description, env values and extra args stays inert.

It renders to YAML that reads back to the same values, Helm renders the chart to the same strings,
the manifest holds no `{{`/`}}`, and rendering again gives the same bytes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.yamlio import yamlout
from generator.catalog import Resolved, load_catalog
from generator.chart.plan import k8s_literal, plan
from generator.chart.render import render
from generator.schema import App

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "catalog_small"
ENV_NAMES = ("TZ", "HF_HUB_OFFLINE", "LLAMA_ARG_THREADS")
TRICKY = st.sampled_from(["{{ .Values.x }}", "}}", "{{", ": ", "key: value", "'", '"', "\n", "$(HOME)", "$$", "#",
                          "- item", "yes", "0x1F", "1e3", "~", "null", "@", "`", "\\", "é", "中文", "\t", " ", "%"])
TEXT = st.text() | st.lists(TRICKY | st.text(max_size=5), min_size=1, max_size=6).map("".join)


def _within(max_size: int):
    return TEXT.filter(lambda s: 1 <= len(s) <= max_size)


INPUTS = st.fixed_dictionaries({
    "app": st.sampled_from(["gemmalab", "qwenlab"]),  # one vLLM and one llama.cpp app
    "title": _within(30),
    "description": _within(4000),
    "env": st.dictionaries(st.sampled_from(ENV_NAMES), TEXT, max_size=3),
    "extra_args": st.lists(TEXT, max_size=4),
})


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(FIXTURE)


def resolved(catalog, data: dict) -> Resolved:
    base = catalog.apps[data["app"]]
    fields = base.app.model_dump(mode="python", exclude_unset=True)
    fields.update(title=data["title"], description=data["description"], env=data["env"],
                  extra_args=tuple(data["extra_args"]))
    fields.pop("full_description", None)
    app = App.model_validate(fields)  # the generated text is within the schema
    return dataclasses.replace(base, app=app)


def check_read_back(tree: dict[str, str], data: dict) -> None:
    manifest = yamlout.load(tree["OlaresManifest.yaml"])
    assert manifest["metadata"]["title"] == data["title"]
    assert manifest["metadata"]["description"] == data["description"]
    assert manifest["spec"]["fullDescription"] == data["description"]
    assert manifest["entrances"][0]["title"] == data["title"]
    assert yamlout.load(tree["Chart.yaml"])["description"] == data["description"].splitlines()[0]
    engine = yamlout.load(tree["values.yaml"])["engine"]
    args = [k8s_literal(a) for a in data["extra_args"]]
    assert engine["args"][len(engine["args"]) - len(args):] == args
    env = {e["name"]: e["value"] for e in engine["env"]}
    assert all(env[name] == k8s_literal(value) for name, value in data["env"].items())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=INPUTS)
def test_catalog_text_round_trips_and_stays_inert(catalog, data):
    r = resolved(catalog, data)
    tree = render(plan(r))
    check_read_back(tree, data)
    assert "{{" not in tree["OlaresManifest.yaml"] and "}}" not in tree["OlaresManifest.yaml"]
    assert render(plan(r)) == tree


def helm_container(name: str, tree: dict[str, str]) -> dict:
    from generator.lint import helm
    from generator.lint.values import olares_values

    values = olares_values(name, yamlout.load(tree["OlaresManifest.yaml"]), yamlout.load(tree["values.yaml"]))
    with helm.chart_folder(name, tree) as folder:
        docs, errors = helm.documents(helm.render(folder, values, name=name, namespace=f"{name}-admin"))
    assert errors == []
    deployment = next(d for d in docs if d.kind == "Deployment")
    return deployment.body["spec"]["template"]["spec"]["containers"][0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=INPUTS)
def test_helm_renders_catalog_text_verbatim(catalog, data):
    from generator.lint.run import lint_chart

    name = data["app"]
    tree = render(plan(resolved(catalog, data)))
    container = helm_container(name, tree)
    args = [k8s_literal(a) for a in data["extra_args"]]
    assert container["args"][len(container["args"]) - len(args):] == args
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert all(env[k] == k8s_literal(v) for k, v in data["env"].items())
    # any schema-valid title stays inert; OLARES021 refuses the ones an entrance title may not hold (a rule, not a
    # rendering defect)
    assert [f for f in lint_chart(name, tree) if f.rule != "OLARES021"] == []
