"""The app form (docs/forms.md): `form: single | shared` in catalog/market.yaml or an app, and the shared form's chart.

Real parts: copies of the market fixture's catalog, the real planner and renderer, the Helm engine rendering the
chart with the values Olares injects (olaresEnv as a user or Router sets it), the chart lint.
"""

from __future__ import annotations

import json

import pytest
import yaml

from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.chart.render import render
from generator.core.errors import InputError
from generator.lint import helm
from generator.lint.run import lint_chart
from generator.lint.values import olares_values

from support.catalogs import edit_yaml
from support.checks import A3B, E4B, set_app

HUGE = "10000000"


def set_form(catalog, form: str) -> None:
    path = catalog / "market.yaml"
    if path.exists():
        edit_yaml(path, form=form)
    else:
        path.write_text(f"form: {form}\n", encoding="utf-8")


def shared_catalog(catalog):
    set_form(catalog, "shared")
    return load_catalog(catalog)


def docs_with(name: str, tree: dict[str, str], **olares_env: str) -> list[helm.Doc]:
    with helm.chart_folder(name, tree) as folder:
        values = olares_values(name, yaml.safe_load(tree["OlaresManifest.yaml"]), yaml.safe_load(tree["values.yaml"]),
                               olares_env=olares_env)
        docs, errors = helm.documents(helm.render(folder, values, name=name, namespace=f"{name}-shared"))
    assert errors == []
    return docs


def engine_container(docs: list[helm.Doc]) -> dict:
    deployment = next(d for d in docs if d.kind == "Deployment")
    return deployment.body["spec"]["template"]["spec"]["containers"][0]


def flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_form_single_renders_what_no_form_renders(catalog_copy):
    before = {n: render(plan(r)) for n, r in load_catalog(catalog_copy).apps.items() if r.app.status != "removed"}
    set_form(catalog_copy, "single")
    after = {n: render(plan(r)) for n, r in load_catalog(catalog_copy).apps.items() if r.app.status != "removed"}
    assert after == before
    assert all("sharedEntrances" not in t["OlaresManifest.yaml"] for t in after.values())


@pytest.mark.parametrize("app", [A3B, E4B])
def test_shared_chart_caps_an_oversize_context_at_the_fits_maximum(catalog_copy, app):
    r = shared_catalog(catalog_copy).apps[app]
    spec = plan(r)
    bound = spec.shared.context
    assert bound.default == r.app.context_length and bound.maximum >= bound.default
    tree = render(spec)
    manifest = yaml.safe_load(tree["OlaresManifest.yaml"])
    assert manifest["options"]["shared"] is True and manifest["spec"]["onlyAdmin"] is True
    assert manifest["options"]["LLMGatewaySupported"] is True
    entrance = manifest["sharedEntrances"][0]
    assert entrance == {"name": app, "host": f"sharedentrances-{app}", "port": 0, "title": r.app.title,
                        "icon": r.app.icon, "invisible": True, "authLevel": "internal"}
    envs = {e["envName"]: e for e in manifest["envs"]}
    assert {"LLM_CONTEXT_WINDOW", "LLM_MAX_OUTPUT_TOKENS", "LLM_API_KEY"} <= set(envs)
    assert envs["LLM_API_KEY"]["type"] == "password"
    ctx_flag = "--ctx-size" if app == A3B else "--max-model-len"

    served = engine_container(docs_with(app, tree, LLM_CONTEXT_WINDOW=HUGE))["args"]
    assert flag(served, ctx_flag) == str(bound.maximum) != HUGE
    assert spec.shared.apply(int(HUGE)) == bound.maximum
    for empty in ("", "0", "abc", "-5"):
        assert flag(engine_container(docs_with(app, tree, LLM_CONTEXT_WINDOW=empty))["args"], ctx_flag) == \
            str(bound.default)
    smaller = bound.default // 2
    assert flag(engine_container(docs_with(app, tree, LLM_CONTEXT_WINDOW=str(smaller)))["args"], ctx_flag) == \
        str(smaller)

    # the shared entrance is a Service of the chart that reaches the engine's named port
    docs = docs_with(app, tree)
    service = next(d for d in docs if d.kind == "Service" and d.body["metadata"]["name"] == entrance["host"])
    assert service.body["spec"]["ports"][0]["targetPort"] == "http"
    ports = engine_container(docs)["ports"]
    assert any(p["name"] == "http" for p in ports)
    deployment = next(d for d in docs if d.kind == "Deployment")
    assert service.body["spec"]["selector"].items() <= deployment.body["spec"]["template"]["metadata"]["labels"].items()
    assert lint_chart(app, tree, form="shared") == []


def test_shared_chart_bounds_the_output_and_keeps_the_api_key_out_of_the_deployment(catalog_copy):
    r = shared_catalog(catalog_copy).apps[A3B]
    spec = plan(r)
    tree = render(spec)
    secret = "sk-do-not-print-7731"
    docs = docs_with(A3B, tree, LLM_CONTEXT_WINDOW="4096", LLM_MAX_OUTPUT_TOKENS="99999", LLM_API_KEY=secret)
    engine = engine_container(docs)
    args = engine["args"]
    assert flag(args, "--n-predict") == "4096"  # at most the context window
    assert flag(args, "--api-key") == "$(LLM_API_KEY)"
    env = {e["name"]: e for e in engine["env"]}
    assert env["LLM_API_KEY"]["valueFrom"]["secretKeyRef"]["key"] == "LLM_API_KEY"
    deployment = next(d for d in docs if d.kind == "Deployment")
    assert secret not in yaml.safe_dump(deployment.body)
    stored = next(d for d in docs if d.kind == "Secret")
    assert stored.body["stringData"]["LLM_API_KEY"] == secret
    unset = engine_container(docs_with(A3B, tree))["args"]
    assert "--api-key" not in unset and "--n-predict" not in unset
    assert flag(spec.engine.argv, "--parallel") is not None  # the slot count is explicit


def test_shared_form_needs_the_v3_profile(catalog_copy):
    r = shared_catalog(catalog_copy).apps[A3B]
    with pytest.raises(InputError) as err:
        plan(r, profile="olares-v2")
    assert "apiVersion v3" in str(err.value) and "form" in str(err.value)


def test_an_app_chooses_its_own_form(catalog_copy):
    set_app(catalog_copy, A3B, form="shared")
    cat = load_catalog(catalog_copy)
    assert cat.apps[A3B].form == "shared" and cat.apps[E4B].form == "single"
    assert "sharedEntrances" in render(plan(cat.apps[A3B]))["OlaresManifest.yaml"]
    assert "sharedEntrances" not in render(plan(cat.apps[E4B]))["OlaresManifest.yaml"]


def test_a_shared_chart_without_only_admin_is_refused(catalog_copy):
    tree = render(plan(shared_catalog(catalog_copy).apps[A3B]))
    broken = dict(tree, **{"OlaresManifest.yaml": tree["OlaresManifest.yaml"].replace("  onlyAdmin: true\n", "")})
    found = lint_chart(A3B, broken, form="shared")
    assert [f.rule for f in found if f.severity == "error"] == ["SHARED001"]
    assert "onlyAdmin" in found[0].message
    single = lint_chart(A3B, tree)  # the single form's store refuses a shared chart (the maintainer's market)
    assert {f.rule for f in single} == {"OLARES023"}


def test_a_measured_context_is_the_bound(catalog_copy):
    set_app(catalog_copy, A3B, measured=[{"field": "context_length", "value": "65536", "note": "the longest that ran",
                                          "source": "a bench note"}])
    bound = plan(shared_catalog(catalog_copy).apps[A3B]).shared.context
    assert bound.maximum == 65536 and bound.why.startswith("measured: the longest that ran")


def test_a_context_flag_the_shared_form_cannot_bound_is_a_file_line_error(catalog_copy):
    set_app(catalog_copy, E4B, extra_args=["--max-model-len=8192"])
    with pytest.raises(InputError) as err:
        plan(shared_catalog(catalog_copy).apps[E4B])
    assert f"{E4B}.yaml:" in str(err.value) and "--max-model-len N" in str(err.value)


def test_llamacpps_context_pool_is_the_window_times_the_slots(catalog_copy):
    set_app(catalog_copy, A3B, extra_args=["--parallel", "2"])
    r = shared_catalog(catalog_copy).apps[A3B]
    spec = plan(r)
    bound = spec.shared.context
    assert bound.slots == 2 and bound.default == r.app.context_length // 2
    tree = render(spec)
    served = engine_container(docs_with(A3B, tree, LLM_CONTEXT_WINDOW="1000"))["args"]
    assert flag(served, "--ctx-size") == "2000" and spec.shared.apply(1000) == 2000


def test_shared002_a_setting_flag_the_image_lacks_is_an_error(catalog_copy, capsys):
    from generator.cli import main

    table = catalog_copy / "flags" / "llamacpp-b8740.yaml"
    table.write_text("".join(line for line in table.read_text(encoding="utf-8").splitlines(keepends=True)
                             if "{name: --api-key," not in line), encoding="utf-8")
    set_form(catalog_copy, "shared")
    code = main(["check", A3B, "--catalog", str(catalog_copy), "--json", "--no-lint"])
    findings = json.loads(capsys.readouterr().out)["apps"][0]["findings"]
    assert code == 1 and [f["message"] for f in findings if f["rule"] == "SHARED002"] == [
        "the shared form passes --api-key when its setting is set, but llamacpp-b8740 does not list it"]
