"""`catalog import` of an official Olares SGLang chart's launcher shape, and the round trip back.

The shape is that of beclab/apps@2dbab57539b8ab4e8d08b4eafb7a2e13484e7049 sglangqwen359bawq4bitv3/ (the
official SGLang LLM apps): the engine container runs `["/bin/sh", "/llm-init/wrappers/sglang.sh"]`, a script of
the ConfigMap llm-init-wrappers (templates/wrappers.yaml) mounted at /llm-init/wrappers, which waits for a
sentinel and then `exec python3 -m sglang.launch_server --model-path "$MODEL_NAME" ... ${ENGINE_ARGS:-} "$@"`;
ENGINE_ARGS comes from `.Values.olaresEnv.ENGINE_ARGS` (templates/sglang.yaml), whose default the manifest
declares (OlaresManifest.yaml `envs`: "--context-length 65536 --mem-fraction-static 0.85 ..."). The chart below
is written here, a few lines in that shape (nothing copied): the served name is a literal (the official chart
serves the repo id, which the catalog's served_name pattern refuses) and the GPU memory a literal gpumem (the
official chart's `llmbase.gpuMiB` of a manifest env: test_import_official_sglang.py imports the official charts
themselves); the CPU request reads a manifest env, as the official chart's SGLANG_CPU_REQUEST does. The catalog is a copy of the
embedded one: its SGLang stack sglang-0-5-14 and model gemma4-e4b are what the chart runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.chart.pipeline import render_app
from generator.importer import import_paths
from generator.yamlio.loader import load_untrusted

CATALOG = Path(__file__).resolve().parents[2] / "catalog"
NAME = "sglgemmawrapped"

MANIFEST = f"""olaresManifest.version: '0.12.0'
olaresManifest.type: app
apiVersion: 'v3'
metadata:
  name: {NAME}
  icon: https://example.org/icons/{NAME}.png
  description: "Gemma 4 E4B served with SGLang."
  appid: {NAME}
  title: Gemma 4 E4B Wrapped
  version: '1.0.0'
  categories:
    - AI
entrances:
  - name: {NAME}
    port: 30000
    host: {NAME}
    title: Gemma 4 E4B Wrapped
    icon: https://example.org/icons/{NAME}.png
    openMethod: window
    authLevel: internal
spec:
  versionName: '1.0.0'
  fullDescription: |
    Gemma 4 E4B served with SGLang.
  developer: labmaintainer
  submitter: labmaintainer
  locale:
    - en-US
  website: https://example.org/{NAME}
  requiredMemory: 8Gi
  limitedMemory: 32Gi
  requiredCpu: "4"
  limitedCpu: "16"
  requiredDisk: 20Gi
  limitedDisk: 30Gi
  requiredGPU: 20000Mi
  supportArch:
    - amd64
permission:
  appData: true
  appCommon: true
envs:
  - envName: MODEL_NAME
    required: true
    type: string
    editable: false
    default: "google/gemma-4-E4B-it"
  - envName: ENGINE_ARGS
    required: true
    type: string
    editable: true
    default: "{{args}}"
  - envName: SGLANG_CPU_REQUEST
    required: true
    type: string
    editable: false
    default: "4"
"""

DEPLOYMENT = f"""{{{{- $oe := .Values.olaresEnv | default dict -}}}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {NAME}
  namespace: '{{{{ .Release.Namespace }}}}'
spec:
  replicas: 1
  selector:
    matchLabels:
      io.kompose.service: sglang
  template:
    metadata:
      labels:
        io.kompose.service: sglang
    spec:
      volumes:
        - name: wrappers
          configMap:
            name: llm-init-wrappers
            defaultMode: 0555
      containers:
        - name: sglang
          image: docker.io/lmsysorg/sglang:v0.5.14-cu130
          command: ["/bin/sh", "/llm-init/wrappers/sglang.sh"]
          env:
            - name: MODEL_NAME
              value: "{{{{ $oe.MODEL_NAME | default "" }}}}"
            - name: SGLANG_PORT
              value: "30000"
            - name: ENGINE_ARGS
              value: "{{{{ $oe.ENGINE_ARGS | default "" }}}}"
          ports:
            - containerPort: 30000
          volumeMounts:
            - name: wrappers
              mountPath: /llm-init/wrappers
              readOnly: true
          resources:
            requests:
              cpu: "{{{{ $oe.SGLANG_CPU_REQUEST | default "200m" }}}}"
              memory: 8Gi
              nvidia.com/gpumem: 20000
            limits:
              cpu: "16"
              memory: 32Gi
              nvidia.com/gpumem: 20000
---
apiVersion: v1
kind: Service
metadata:
  name: {NAME}
  namespace: '{{{{ .Release.Namespace }}}}'
spec:
  selector:
    io.kompose.service: sglang
  ports:
    - port: 30000
      targetPort: 30000
"""

WRAPPERS = """apiVersion: v1
kind: ConfigMap
metadata:
  name: llm-init-wrappers
  namespace: {{ .Release.Namespace }}
data:
  sglang.sh: |
    #!/bin/sh
    set -eu
    SENTINEL=${SENTINEL:-/run/llm-init/model_download_finish}
    while [ ! -f "$SENTINEL" ]; do
        sleep 5
    done
    # shellcheck disable=SC2086  # intentional word-splitting of ENGINE_ARGS
    exec python3 -m sglang.launch_server \\
        --model-path "$MODEL_NAME" \\
        --served-model-name gemma-4-e4b \\
        --host 0.0.0.0 \\
        --port "${SGLANG_PORT:-30000}" \\
        ${ENGINE_ARGS:-} \\
        "$@"
"""


def _chart(root: Path, args: str) -> Path:
    folder = root / NAME
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nappVersion: '1.0.0'\ndescription: Gemma 4 E4B served "
                                       f"with SGLang.\nname: {NAME}\ntype: application\nversion: '1.0.0'\n")
    (folder / "OlaresManifest.yaml").write_text(MANIFEST.replace("{args}", args))
    (folder / "values.yaml").write_text("{}\n")
    (folder / "owners").write_text("owners:\n- 'labmaintainer'\n")
    (folder / "templates" / "sglang.yaml").write_text(DEPLOYMENT)
    (folder / "templates" / "wrappers.yaml").write_text(WRAPPERS)
    return folder


def test_the_wrapper_launcher_imports_and_round_trips(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(CATALOG, catalog)
    chart = _chart(tmp_path / "charts", "--context-length 16384 --mem-fraction-static 0.85 "
                                        "--chunked-prefill-size 4096")
    report = import_paths([chart], load_catalog(catalog))
    assert report.ok, report.problems
    (result,) = report.results
    assert result.engine == "sglang" and result.stack == "sglang-0-5-14", (result.status, result.missing)
    assert result.status == "ok", result.missing
    app = result.app
    assert app is not None
    assert (app["context_length"], app["gpu_memory_utilization"]) == (16384, 0.85)
    assert app["resources"]["cpu_request"] == "4"  # SGLANG_CPU_REQUEST's manifest default, not the template's 200m
    # the words of ENGINE_ARGS the catalog does not model are kept as extra args
    assert list(app["extra_args"]) == ["--chunked-prefill-size", "4096"]
    # render the imported app (the catalog's own chart: the argv in the Deployment, no wrapper) and import that
    cat = load_catalog(catalog)
    out = tmp_path / "rendered" / NAME
    for rel, text in render_app(cat.apps[NAME]).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    again = import_paths([out], cat, update=True, dry_run=True)
    assert again.ok, again.problems
    (back,) = again.results
    assert back.status == "ok" and back.app is not None, back.missing
    for key in ("model", "stack", "context_length", "gpu_memory_utilization", "gpu_memory_mib", "extra_args"):
        assert back.app.get(key) == app.get(key), key


@pytest.mark.parametrize("command", [["python", "-m", "sglang.launch_server"], ["sglang", "serve"]])
def test_other_sglang_launchers_import_with_a_drafted_stack(tmp_path, command):
    """`python -m sglang.launch_server` and `sglang serve` (python/sglang/cli/serve.py in sgl-project/sglang, the subcommand generator/engines/sglang.py LAUNCHERS names)
    in an image no stack has: an SGLang app with a drafted stack, the args read as the stack's."""
    catalog = tmp_path / "catalog"
    shutil.copytree(CATALOG, catalog)
    chart = _chart(tmp_path / "charts", "--context-length 8192 --mem-fraction-static 0.8")
    deployment = chart / "templates" / "sglang.yaml"
    argv = [*command, "--model-path", "google/gemma-4-E4B-it", "--served-model-name", "gemma-4-e4b",
            "--port", "30000", "--context-length", "8192", "--mem-fraction-static", "0.8"]
    deployment.write_text(deployment.read_text()
                          .replace("docker.io/lmsysorg/sglang:v0.5.14-cu130", "example.org/lab/sglang:0.5.14")
                          .replace('["/bin/sh", "/llm-init/wrappers/sglang.sh"]', json.dumps(argv)))
    before = set((catalog / "drafts" / "stacks").glob("*.yaml"))
    report = import_paths([chart], load_catalog(catalog))
    assert report.ok, report.problems
    (result,) = report.results
    assert result.engine == "sglang" and result.stack_draft, (result.status, result.missing)
    assert result.app is not None
    assert (result.app["context_length"], result.app["gpu_memory_utilization"]) == (8192, 0.8)
    (drafted,) = set((catalog / "drafts" / "stacks").glob("*.yaml")) - before
    stack = load_untrusted(drafted.read_text(), str(drafted))
    assert stack["engine"] == "sglang" and stack["command"] == command  # not llama.cpp's (the old fall-through)
