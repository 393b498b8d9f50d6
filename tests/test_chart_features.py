"""Fidelity details of the maintainer's charts as catalog features: a chat-template file shipped with the chart and
passed to the server, audio input with the packages it needs, `--slot-save-path` on an emptyDir, and the icon
check (MKT001).

Real parts: copies of the market fixture, the real planner and renderer, the Helm engine rendering the chart as
Olares does (the ConfigMap's text read back from the rendered document), the chart lint, the CLI.
"""

from __future__ import annotations

import hashlib
import shutil

import pytest
import yaml

from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.chart.render import render
from generator.core.errors import InputError
from generator.lint import helm
from generator.lint.run import lint_chart
from generator.lint.values import olares_values

from support.catalogs import REPO
from support.checks import A3B, E2B, E4B, check, findings, one, set_app

TEMPLATE_ID = "qwen36-developer-role"
SOURCE = REPO / "catalog" / "chat_templates"  # the embedded catalog's template files (data, copied, not read live)


@pytest.fixture
def with_template(catalog_copy):
    (catalog_copy / "chat_templates").mkdir()
    for suffix in (".yaml", ".jinja"):
        shutil.copy(SOURCE / f"{TEMPLATE_ID}{suffix}", catalog_copy / "chat_templates" / f"{TEMPLATE_ID}{suffix}")
    return catalog_copy


def rendered_docs(name: str, tree: dict[str, str]) -> list[helm.Doc]:
    with helm.chart_folder(name, tree) as folder:
        values = olares_values(name, yaml.safe_load(tree["OlaresManifest.yaml"]), yaml.safe_load(tree["values.yaml"]))
        docs, errors = helm.documents(helm.render(folder, values, name=name, namespace=f"{name}-admin"))
    assert errors == []
    return docs


def container(docs: list[helm.Doc]) -> dict:
    deployment = next(d for d in docs if d.kind == "Deployment")
    return deployment.body["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("profile", ["olares-v2", "olares-v3"])
def test_chat_template_is_shipped_mounted_and_passed_to_llama_server(with_template, profile):
    set_app(with_template, A3B, chat_template=TEMPLATE_ID)
    r = load_catalog(with_template).apps[A3B]
    tree = render(plan(r, profile=profile))
    text = (SOURCE / f"{TEMPLATE_ID}.jinja").read_text(encoding="utf-8")
    assert tree["chat_template.jinja"] == text and "developer" in text
    docs = rendered_docs(A3B, tree)
    config = next(d for d in docs if d.kind == "ConfigMap")
    assert config.body["data"]["chat_template.jinja"] == text  # byte for byte through Helm's .Files.Get | quote
    engine = container(docs)
    path = engine["args"][engine["args"].index("--chat-template-file") + 1]
    mount = next(m for m in engine["volumeMounts"] if m["name"] == "chat-template")
    assert path == f"{mount['mountPath']}/chat_template.jinja" and mount["readOnly"] is True
    deployment = next(d for d in docs if d.kind == "Deployment")
    volume = next(v for v in deployment.body["spec"]["template"]["spec"]["volumes"] if v["name"] == "chat-template")
    assert volume["configMap"]["name"] == config.body["metadata"]["name"] == f"{A3B}-chat-template"
    assert lint_chart(A3B, tree) == []


def test_vllm_gets_the_template_with_its_own_flag(with_template):
    set_app(with_template, E4B, chat_template=TEMPLATE_ID)
    argv = plan(load_catalog(with_template).apps[E4B]).engine.argv
    assert argv[argv.index("--chat-template") + 1] == "/etc/catalog/chat-template/chat_template.jinja"


def test_an_app_without_a_template_has_no_configmap_file(catalog_copy):
    tree = render(plan(load_catalog(catalog_copy).apps[A3B]))
    assert "templates/chat-template.yaml" not in tree and "chat_template.jinja" not in tree


def test_a_template_file_that_changed_is_refused_with_its_line(with_template):
    path = with_template / "chat_templates" / f"{TEMPLATE_ID}.jinja"
    path.write_text(path.read_text(encoding="utf-8") + "{# edited #}\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_catalog(with_template)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"{TEMPLATE_ID}.yaml:4: sha256" in str(err.value) and digest in str(err.value)


def test_an_unknown_template_is_refused_with_its_line(with_template):
    set_app(with_template, A3B, chat_template="no-such-template")
    with pytest.raises(InputError, match=rf"{A3B}.yaml:\d+: chat_template: unknown chat template 'no-such-template'"):
        load_catalog(with_template)


def test_audio_input_and_its_packages(catalog_copy):
    """The maintainer's E4B: `--limit-mm-per-prompt '{"image": 1, "audio": 1}'` and `pip install --quiet ... &&
    exec vllm serve "$@"` before the server (the image lacks the audio packages)."""
    packages = ["soundfile", "soxr", "audioread", "lazy_loader", "msgpack", "decorator", "pooch", "av", "resampy",
                "scipy"]
    set_app(catalog_copy, E4B, audio=True, python_packages=packages, extra_args=["--dtype", "auto"])
    model = catalog_copy / "models" / "gemma4-e4b.yaml"
    model.write_text(model.read_text(encoding="utf-8").replace("  vision: true\n", "  vision: true\n  audio: true\n"),
                     encoding="utf-8")
    spec = plan(load_catalog(catalog_copy).apps[E4B])
    argv = spec.engine.argv
    assert argv[argv.index("--limit-mm-per-prompt") + 1] == '{"image": 1, "audio": 1}'
    assert spec.engine.command == ("sh", "-c", f"pip install --quiet {' '.join(packages)} && exec vllm serve \"$@\"",
                                   "--")
    tree = render(spec)
    engine = container(rendered_docs(E4B, tree))
    assert engine["command"][2].endswith('exec vllm serve "$$@"')  # Kubernetes turns `$$` into `$`: "$@"
    assert engine["args"][0] == "google/gemma-4-E4B-it"  # "$@" hands the args to vllm serve
    assert lint_chart(E4B, tree) == []


def test_audio_needs_a_model_with_an_audio_encoder_and_vllm(catalog_copy):
    set_app(catalog_copy, E4B, audio=True)
    with pytest.raises(InputError, match=r"audio: model 'gemma4-e4b' has no audio encoder"):
        load_catalog(catalog_copy)
    set_app(catalog_copy, E4B, audio=None)
    set_app(catalog_copy, E2B, audio=True)
    with pytest.raises(InputError, match=r"audio input is a vLLM option"):
        load_catalog(catalog_copy)


def test_slot_save_path_on_an_emptydir(catalog_copy):
    set_app(catalog_copy, E2B, slot_save=True)
    tree = render(plan(load_catalog(catalog_copy).apps[E2B]))
    docs = rendered_docs(E2B, tree)
    engine = container(docs)
    assert engine["args"][engine["args"].index("--slot-save-path") + 1] == "/cache"
    assert {"name": "cache", "mountPath": "/cache"} in engine["volumeMounts"]
    deployment = next(d for d in docs if d.kind == "Deployment")
    assert {"name": "cache", "emptyDir": {}} in deployment.body["spec"]["template"]["spec"]["volumes"]
    assert lint_chart(E2B, tree) == []


def test_slot_save_on_vllm_is_refused(catalog_copy):
    set_app(catalog_copy, E4B, slot_save=True)
    with pytest.raises(InputError, match=r"slot_save: --slot-save-path is a llama-server option"):
        load_catalog(catalog_copy)


def test_icon_check_when_the_market_lists_its_icons(catalog_copy, capsys):
    code, data = check(capsys, catalog_copy, E2B)
    assert findings(data, "MKT001") == []  # no market.yaml: nothing to check against
    (catalog_copy / "market.yaml").write_text(
        "icons:\n  base_url: https://orales-one-market.aamsellem.workers.dev/icons/\n"
        "  served: [gemma426ba4bone, vllmgemma4e4bone]\n  source: test\n", encoding="utf-8")
    code, data = check(capsys, catalog_copy, E2B, E4B)
    f = one(data, "MKT001")
    assert f["app"] == E2B and f["severity"] == "warning" and code == 0
    assert "icons/gemma4e2bone.png is not among the icons the market serves" in f["message"]
    assert f["file"].endswith(f"{E2B}.yaml") and f["line"] == 5
    assert "icons.base_url" in f["fix"]  # an icon of one's own: the advice names the market's icon base (issue 42)
    set_app(catalog_copy, E2B, icon="https://orales-one-market.aamsellem.workers.dev/icons/gemma426ba4bone.png")
    code, data = check(capsys, catalog_copy, E2B)
    assert findings(data, "MKT001") == []


BF16_PROJECTOR = """mmproj_variants:
  - quant: bf16
    format: gguf
    repo: unsloth/Qwen3.6-35B-A3B-MTP-GGUF
    file: mmproj-BF16.gguf
    size_gib: 0.8
    sources:
      - ref: github.com/aamsellem/olares-one-market@59296d35fa0e86b4ee099332ac4937eb9e0f0f1c llamacppqwen36a3bdflashone/templates/deployment.yaml:10
"""


def _add_projector(catalog, text: str = BF16_PROJECTOR) -> None:
    model = catalog / "models" / "qwen36-35b-a3b.yaml"
    model.write_text(model.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_an_app_loads_the_projector_it_names(catalog_copy):
    """The maintainer's 35B-A3B DFlash app loads the MTP repo's mmproj-BF16.gguf, another file than the model's F16
    projector: the app names it (`mmproj: bf16`), the chart fetches and passes that file, the fit counts its size."""
    _add_projector(catalog_copy)
    set_app(catalog_copy, A3B, vision=True)
    default = plan(load_catalog(catalog_copy).apps[A3B])
    assert default.engine.argv[default.engine.argv.index("--mmproj") + 1].endswith("/mmproj-F16.gguf")
    set_app(catalog_copy, A3B, vision=True, mmproj="bf16")
    r = load_catalog(catalog_copy).apps[A3B]
    assert r.mmproj is not None and r.mmproj.file == "mmproj-BF16.gguf"
    spec = plan(r)
    argv = spec.engine.argv
    assert argv[argv.index("--mmproj") + 1] == "/models/unsloth/Qwen3.6-35B-A3B-MTP-GGUF/mmproj-BF16.gguf"
    tree = render(spec)
    fetched = [f["file"] for f in yaml.safe_load(tree["values.yaml"])["modelFetch"]["files"]]
    assert "mmproj-BF16.gguf" in fetched and "mmproj-F16.gguf" not in fetched
    assert lint_chart(A3B, tree) == []


def test_an_unknown_or_ambiguous_projector_is_refused(catalog_copy):
    _add_projector(catalog_copy)
    set_app(catalog_copy, A3B, vision=True, mmproj="q8_0")
    with pytest.raises(InputError, match=rf"{A3B}.yaml:\d+: mmproj: model 'qwen36-35b-a3b' has no projector 'q8_0'; "
                                         "known: f16, bf16"):
        load_catalog(catalog_copy)
    set_app(catalog_copy, A3B, mmproj=None)
    _add_projector(catalog_copy, BF16_PROJECTOR.replace("mmproj_variants:\n", "").replace("quant: bf16", "quant: f16"))
    with pytest.raises(InputError, match=r"projector quants must differ"):
        load_catalog(catalog_copy)
