"""`catalog import` of the official Olares SGLang charts, and the round trip back (issue 26).

The charts are beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd sglangqwen359bawq4bitv3/ and sglangllmbasev3/,
copied unmodified into fixtures/beclab-apps/ under their Apache-2.0 licence (fixtures/beclab-apps/README.md). Both
are rendered by the real Helm engine, as Olares renders them: the engine container runs the ConfigMap script
`sglang.sh` (`exec python3 -m sglang.launch_server --model-path "$MODEL_NAME" --served-model-name "$MODEL_NAME"
... --enable-metrics ${ENGINE_ARGS:-}`), and its `nvidia.com/gpumem` is the `llmbase.gpuMiB` helper
(templates/_helpers.tpl) of the manifest env SGLANG_REQUIRED_GPU_MEMORY (`23Gi` -> 23552).

The round trip: import the Qwen chart into a copy of the embedded catalog, render the imported app (the catalog's
own chart), and compare what the SGLang server is started with in both charts, each read from its Helm render
with the manifest envs at their defaults (what Olares installs): the engine args, the env and the GPU memory are
equal, or each difference is one of those named below with its reason.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from ruamel.yaml import YAML

from generator.catalog import load_catalog
from generator.chart.pipeline import render_app
from generator.importer import import_paths
from generator.importer.helmview import installed_env, render_chart
from generator.importer.source import read_chart
from generator.importer.workload import read_pod
from generator.importer.podenv import Lines

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "beclab-apps"
CATALOG = Path(__file__).resolve().parents[2] / "catalog"
QWEN = "sglangqwen359bawq4bitv3"
BASE = "sglangllmbasev3"
REPO = "cyankiwi/Qwen3.5-9B-AWQ-4bit"
GPUMEM = "nvidia.com/gpumem"
ENGINE_ARGS = ("--context-length 65536 --mem-fraction-static 0.85 --chunked-prefill-size 4096 --reasoning-parser qwen3 "
               "--tool-call-parser qwen3_coder")  # the manifest env's default

# The model the catalog lacks, completed here the way a person completes drafts/models/qwen3.5-9b.yaml, in this
# test's copy of the catalog only (the shipped catalog keeps no Qwen3.5-9B: the import leaves it a draft that
# says what it lacks). The geometry is the Qwen3.5-9B model card's (32 layers, hidden 4096, 8 x (3 Gated DeltaNet
# + 1 gated attention), attention 16 Q / 4 KV heads of 256, DeltaNet 16 QK / 32 V heads of 128, vocab 248320,
# 262144 tokens), as copied at the pages cited below. size_gib is a placeholder of this test, not a fact: no
# source read states the AWQ repo's size; it only feeds the fit's KV-pool estimate (--max-running-requests).
MODEL = {
    "id": "qwen3.5-9b", "name": "Qwen3.5-9B", "family": "qwen3.5",
    "architecture": {
        "arch": "qwen35", "hf_model_type": "qwen3_5", "layers": 32, "hidden_size": 4096, "vocab_size": 248320,
        "full_attention": {"layers": 8, "kv_heads": 4, "head_dim": 256},
        "recurrent": {"layers": 24, "k_heads": 16, "v_heads": 32, "head_dim": 128, "conv_kernel": 4},
        "total_params_b": 9.0, "active_params_b": 9.0, "max_context": 262144, "vision": True,
    },
    "sources": [{"ref": "https://2048ai.net/69aa85b754b52172bc5f69c3.html",
                 "note": "the Qwen3.5-9B model card's Model Overview (layers, layout, heads, context)"},
                {"ref": "https://paiml.github.io/aprender/examples/qwen3.5-hybrid-attention.html",
                 "note": "Qwen3.5-9B: head_dim 256, 16 heads, 4 KV heads, vocab 248320"}],
    "weights": [{"quant": "awq-4bit", "format": "int4", "repo": REPO, "size_gib": 7.0,
                 "sources": [{"ref": f"tests/importer/fixtures/beclab-apps/{QWEN}/OlaresManifest.yaml",
                              "note": "the repo the chart serves; size_gib is this test's placeholder"}]}],
}

# Each difference between the original and the re-rendered engine, with its reason.
ARG_DIFFERENCES = {
    # the catalog's served_name takes no `/` (generator/schema/app.py): the app's name is served instead
    "--served-model-name": (REPO, QWEN),
    # generator/engines/sglang.py sizes the KV pool for the app's GPU memory and passes the concurrency it holds;
    # the chart leaves SGLang to choose (3 with this test's placeholder weight size)
    "--max-running-requests": (None, "3"),
}
ENV_DIFFERENCES = {
    # read by the launcher script only: their values are the argv (--model-path, --served-model-name, ENGINE_ARGS)
    "MODEL_NAME": REPO, "ENGINE_ARGS": ENGINE_ARGS,
    # the chart's Hugging Face cache on its hf-cache hostPath (not rendered): the catalog's is HF_HOME=/models
    "HF_HOME": "/cache/hf", "HF_HUB_CACHE": "/cache/hf/hub", "TRANSFORMERS_CACHE": "/cache/hf/hub",
}
ADDED_ENV = {
    # HAMi's per-container limit, equal to the gpumem the chart requests (generator/engines: every GPU chart)
    "CUDA_DEVICE_MEMORY_LIMIT_0": "23552m",
    "HF_HOME": "/models",  # the catalog's model cache, on its models volume
    # the Hugging Face endpoint and token the catalog declares (the chart's llm-init container downloads instead)
    "HF_ENDPOINT": None, "HF_TOKEN": None,
}


def _catalog(tmp_path: Path) -> Path:
    catalog = tmp_path / "catalog"
    shutil.copytree(CATALOG, catalog)
    return catalog


def _engine(folder: Path) -> tuple[dict[str, str | None], dict[str, str | None], dict[str, object]]:
    """(flags, env, GPU resources) the SGLang server of the chart at `folder` starts with: rendered by Helm with
    the envs Olares injects at install, the argv read through the launcher script, `${ENGINE_ARGS:-}` split."""
    rendered = render_chart(read_chart(folder, str(folder)))
    env_values = installed_env(rendered.manifest, rendered.declared_env)
    (launch,) = [x for x in read_pod(rendered, Lines(rendered)).launches
                 if "sglang.launch_server" in " ".join(t.text for t in x.argv)]
    words: list[str] = []
    for token in launch.argv[3:]:  # after `python3 -m sglang.launch_server`
        name = token.text[len("<olaresEnv:"):-1] if token.text.startswith("<olaresEnv:") else None
        words += shlex.split(env_values[name]) if name else [token.text]
    flags: dict[str, str | None] = {}
    for i, word in enumerate(words):
        if word.startswith("--"):
            following = words[i + 1] if i + 1 < len(words) else None
            flags[word] = None if following is None or following.startswith("--") else following
    env = {k: (e.value if e.value is None or "<olaresEnv:" not in e.value else env_values[e.olares[0]])
           for k, e in launch.env.items()}
    resources = launch.container.get("resources") or {}
    gpu = {part: (resources.get(part) or {}).get(GPUMEM) for part in ("requests", "limits")}
    return flags, env, gpu


def test_the_official_qwen_chart_imports_with_its_helper_computed_gpu_memory(tmp_path):
    """Against the shipped catalog (which has no Qwen3.5-9B): the GPU memory is the helper's 23552 MiB, the served
    repo id identifies the model, and the draft's one reason says what the drafted model lacks."""
    report = import_paths([FIXTURES / QWEN], load_catalog(_catalog(tmp_path)), dry_run=True)
    assert report.ok, report.problems
    (result,) = report.results
    assert result.status == "draft" and result.engine == "sglang" and result.stack == "sglang-0-5-14"
    assert result.missing == ["model qwen3.5-9b: a new model — complete drafts/models/qwen3.5-9b.yaml; it lacks "
                              "family, architecture, weights.0.size_gib, sources"]
    app = result.app
    assert app is not None
    assert app["gpu_memory_mib"] == 23552  # `llmbase.gpuMiB` of "23Gi"; the placeholder render made it 0
    assert (app["model"], app["quantization"]) == ("qwen3.5-9b", "awq-4bit")
    assert "served_name" not in app
    assert any(f"--served-model-name {REPO} is the model's Hugging Face repo id" in u for u in result.unmapped)
    assert any(f"{GPUMEM}: 23552 with the manifest envs' defaults" in n for n in result.notes)


def test_the_official_qwen_chart_round_trips(tmp_path):
    catalog = _catalog(tmp_path)
    (catalog / "models" / "qwen3.5-9b.yaml").write_text(_yaml(MODEL))
    report = import_paths([FIXTURES / QWEN], load_catalog(catalog))
    assert report.ok, report.problems
    (result,) = report.results
    assert result.status == "ok", result.missing
    cat = load_catalog(catalog)
    out = tmp_path / "rendered" / QWEN
    for rel, text in render_app(cat.apps[QWEN]).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)

    flags, env, gpu = _engine(FIXTURES / QWEN)
    flags_back, env_back, gpu_back = _engine(out)
    # the engine args: context length, mem-fraction-static, model path, and the rest, as the server gets them
    assert (flags["--context-length"], flags["--mem-fraction-static"], flags["--model-path"]) == \
        ("65536", "0.85", REPO)
    differing = {k: (flags.get(k), flags_back.get(k)) for k in set(flags) | set(flags_back)
                 if flags.get(k) != flags_back.get(k)}
    assert differing == ARG_DIFFERENCES
    # the env: equal but for the named ones
    assert {k: v for k, v in env.items() if env_back.get(k) != v} == ENV_DIFFERENCES
    added = {k: v for k, v in env_back.items() if k not in env or env[k] != v}
    assert {k: (v if ADDED_ENV[k] is not None else None) for k, v in added.items()} == ADDED_ENV
    # the GPU memory: the helper's value, requested and limited alike, in both
    assert gpu == gpu_back == {"requests": 23552, "limits": 23552}

    # and the re-rendered chart imports back to the same app
    again = import_paths([out], cat, update=True, dry_run=True)
    assert again.ok, again.problems
    (back,) = again.results
    assert back.status == "ok" and back.app is not None and result.app is not None, back.missing
    for key in ("model", "quantization", "stack", "context_length", "gpu_memory_utilization", "gpu_memory_mib",
                "env", "extra_args"):
        assert back.app.get(key) == result.app.get(key), key


def test_the_official_base_chart_is_a_draft_that_says_what_is_set_at_install(tmp_path):
    """sglangllmbasev3 is a template (`options.templateOnly`): the model, its GPU memory and the engine args are
    manifest envs the user sets at install. The draft says so, rather than `0 MiB` or a placeholder served name."""
    report = import_paths([FIXTURES / BASE], load_catalog(_catalog(tmp_path)), dry_run=True)
    assert report.ok, report.problems
    (result,) = report.results
    assert result.status == "draft" and result.engine == "sglang"
    assert result.app is not None and "gpu_memory_mib" not in result.app and "served_name" not in result.app
    missing = "\n".join(result.missing)
    assert "model: the engine serves manifest env MODEL_NAME, which has no default" in missing
    assert f"gpu_memory_mib: the chart computes {GPUMEM} from manifest env SGLANG_REQUIRED_GPU_MEMORY, which has " \
           "no default" in missing
    assert "context_length (the chart passes no --context-length)" in missing
    assert "greater than 0" not in missing and "served_name" not in missing


def test_a_local_model_path_is_found_by_the_repo_id_it_is_served_as(tmp_path):
    """The same chart loading a folder it does not download, served as the repo id: the served name finds the
    catalog's weight (a known one only: a served name is no download to draft from), and the path is unmapped."""
    catalog = _catalog(tmp_path)
    (catalog / "models" / "qwen3.5-9b.yaml").write_text(_yaml(MODEL))
    chart = tmp_path / QWEN
    shutil.copytree(FIXTURES / QWEN, chart)
    wrappers = chart / "templates" / "wrappers.yaml"
    wrappers.write_text(wrappers.read_text().replace('--model-path "$MODEL_NAME"', "--model-path /srv/qwen"))
    report = import_paths([chart], load_catalog(catalog), dry_run=True)
    assert report.ok, report.problems
    (result,) = report.results
    assert result.status == "ok" and result.app is not None, result.missing
    assert (result.app["model"], result.app["quantization"]) == ("qwen3.5-9b", "awq-4bit")
    assert any(f"the engine loads /srv/qwen; the model is found by the repo id it is served as, {REPO}" in u
               for u in result.unmapped)
    # with no such weight in the catalog, the served name drafts nothing: the path is what is missing
    report = import_paths([chart], load_catalog(_catalog(tmp_path / "shipped")), dry_run=True)
    (result,) = report.results
    assert result.status == "draft" and not result.model_draft
    assert any(m.startswith("model: /srv/qwen") for m in result.missing), result.missing


def test_a_template_that_refuses_the_probe_still_imports(tmp_path):
    """The probe of an env with no default (helmview PROBE) is only a question: a chart whose template `fail`s on
    it imports as before (the answer is just not known)."""
    chart = tmp_path / BASE
    shutil.copytree(FIXTURES / BASE, chart)
    template = chart / "templates" / "sglang.yaml"
    template.write_text(template.read_text() + '{{- if eq (.Values.olaresEnv.SGLANG_REQUIRED_GPU_MEMORY | default "")'
                        ' "1" }}{{ fail "SGLANG_REQUIRED_GPU_MEMORY 1 is too small" }}{{- end }}\n')
    report = import_paths([chart], load_catalog(_catalog(tmp_path)), dry_run=True)
    assert report.ok, report.problems
    (result,) = report.results
    assert result.status == "draft" and result.problems == []


def _yaml(data: dict) -> str:
    import io

    buffer = io.StringIO()
    YAML().dump(data, buffer)
    return buffer.getvalue()
