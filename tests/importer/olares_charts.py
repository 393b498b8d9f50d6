"""Small Olares application charts written by the tests, in the shapes of a hand-written market.

The shapes follow github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 (its
`gemma4e2bone/`, `vllmgemma4e4bone/` and `llamacppqwen36mtpone/` folders): OlaresManifest 0.10.0 with
apiVersion v2 and flat resource fields, a ConfigMap read with envFrom, `$(VAR)` references in args, an
init container that downloads the GGUF with wget, a liveness probe, an emptyDir /cache. Nothing is copied
from that repository: each chart is a few lines written here, with values of the test catalog
(tests/fixtures/catalog_small).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

ADMIN = "{{- if and .Values.admin .Values.bfl.username (eq .Values.admin .Values.bfl.username) }}"

CHART = """apiVersion: v2
appVersion: '{version}'
description: {description}
name: {name}
type: application
version: '{version}'
"""

MANIFEST_V2 = """olaresManifest.version: '0.10.0'
olaresManifest.type: app
apiVersion: 'v2'
metadata:
  name: {name}
  icon: https://example.org/icons/{name}.png
  description: "{description}"
  appid: {name}
  title: {title}
  version: '{version}'
  categories:
    - AI
entrances:
  - name: {name}
    port: {port}
    host: {name}
    title: {title}
    icon: https://example.org/icons/{name}.png
    openMethod: window
    authLevel: internal
spec:
  versionName: '{version}'
  fullDescription: |
    {description}
    Second line of the long description.
  developer: labmaintainer
  submitter: labmaintainer
  locale:
    - en-US
  website: https://example.org/{name}
{resources}
  supportArch:
    - amd64
permission:
  appData: true
options:
  apiTimeout: 0
  dependencies:
    - name: olares
      version: '>=1.12.3-0'
      type: system
envs:
  - envName: OLARES_USER_HUGGINGFACE_TOKEN
    required: false
    applyOnChange: true
    valueFrom:
      envName: OLARES_USER_HUGGINGFACE_TOKEN
"""

RESOURCES = """  limitedCpu: 16
  requiredCpu: 4
  requiredDisk: 30Gi
  limitedDisk: 50Gi
  limitedMemory: 40Gi
  requiredMemory: 24Gi
  requiredGpu: 1Gi
  limitedGpu: 23000Mi"""

# the admin/user split of a shared app: the admin's install sizes the server, a user's the client
RESOURCES_BRANCHED = f"""  {ADMIN}
  limitedCpu: 16
  requiredCpu: 4
  requiredDisk: 30Gi
  limitedDisk: 50Gi
  limitedMemory: 40Gi
  requiredMemory: 24Gi
  requiredGpu: 1Gi
  limitedGpu: 23000Mi
  {{{{- else }}}}
  requiredMemory: 64Mi
  limitedMemory: 800Mi
  requiredDisk: 50Mi
  limitedDisk: 200Mi
  requiredCpu: 10m
  limitedCpu: 800m
  {{{{- end }}}}"""

LLAMACPP_DEPLOYMENT = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-env
  namespace: "{{{{ .Release.Namespace }}}}"
data:
  MODEL_URL: "https://huggingface.co/unsloth/Qwen3.6-35B-A3B-GGUF/resolve/main/Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"
  MODEL_FILE: "Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"
  MODEL_ALIAS: "{alias}"
  CONTEXT_SIZE: "{context}"
  THREADS: "16"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: "{{{{ .Release.Namespace }}}}"
  annotations:
    applications.app.bytetrade.io/gpu-inject: "true"
spec:
  replicas: 1
  selector:
    matchLabels:
      io.kompose.service: {name}
  strategy:
    type: Recreate
  template:
    metadata:
      labels:
        io.kompose.service: {name}
    spec:
      initContainers:
        - name: model-downloader
          image: "docker.io/alpine:3.20"
          command:
            - sh
            - '-c'
            - |
              MODEL_PATH="/models/${{MODEL_FILE}}"
              if [ -f "$MODEL_PATH" ]; then
                echo "already there: $MODEL_PATH"
              else
                wget -O "$MODEL_PATH.tmp" "$MODEL_URL" && mv "$MODEL_PATH.tmp" "$MODEL_PATH"
              fi
          envFrom:
            - configMapRef:
                name: {name}-env
          volumeMounts:
            - mountPath: "/models"
              name: models
      containers:
        - name: llamacpp-server
          image: "ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740"
          command: ["/app/llama-server"]
          args:
            - "--host"
            - "0.0.0.0"
            - "--port"
            - "8080"
            - "--model"
            - "/models/$(MODEL_FILE)"
            - "--alias"
            - "$(MODEL_ALIAS)"
            - "--ctx-size"
            - "{ctx_arg}"
            - "--n-gpu-layers"
            - "99"
            - "--threads"
            - "$(THREADS)"
            - "-ctk"
            - "q8_0"
            - "-ctv"
            - "q8_0"
            - "--parallel"
            - "1"
            - "--jinja"
            - "--mlock"
{extra_args}          env:
            - name: GGML_CUDA_GRAPH_OPT
              value: "1"
            - name: HF_TOKEN
              value: "{{{{ .Values.olaresEnv.OLARES_USER_HUGGINGFACE_TOKEN }}}}"
            - name: CUDA_DEVICE_MEMORY_LIMIT_0
              value: "23000m"
          envFrom:
            - configMapRef:
                name: {name}-env
          ports:
            - containerPort: 8080
          livenessProbe:
            httpGet:
              path: /health
              port: 8080
            initialDelaySeconds: 30
            periodSeconds: 30
          startupProbe:
            httpGet:
              path: /health
              port: 8080
            periodSeconds: 10
            failureThreshold: 60
          resources:
            limits:
              cpu: "16"
              memory: 40Gi
            requests:
              cpu: "4"
              memory: 24Gi
          volumeMounts:
            - mountPath: "/models"
              name: models
            - mountPath: "/cache"
              name: cache
      volumes:
        - name: models
          hostPath:
            path: "{{{{ .Values.userspace.appData }}}}/models"
            type: DirectoryOrCreate
        - name: cache
          emptyDir: {{}}
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: "{{{{ .Release.Namespace }}}}"
spec:
  ports:
    - name: "llamacpp"
      port: 8080
      targetPort: 8080
  selector:
    io.kompose.service: {name}
"""

VLLM_DEPLOYMENT = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-env
  namespace: "{{{{ .Release.Namespace }}}}"
data:
  MODEL_NAME: "google/gemma-4-E4B-it"
  MODEL_ALIAS: "{alias}"
  MAX_MODEL_LEN: "{context}"
  GPU_MEMORY_UTILIZATION: "0.85"
  SPEC_CONFIG: '{{"method":"mtp","model":"google/gemma-4-E4B-it-assistant","num_speculative_tokens":3}}'
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: "{{{{ .Release.Namespace }}}}"
  annotations:
    applications.app.bytetrade.io/gpu-inject: "true"
spec:
  replicas: 1
  strategy:
    type: Recreate
  selector:
    matchLabels:
      io.kompose.service: {name}
  template:
    metadata:
      labels:
        io.kompose.service: {name}
    spec:
      containers:
        - name: vllm-server
          image: "{image}"
          command:
            - "sh"
            - "-c"
            - |
              pip install --quiet soundfile && \\
              exec {program} serve "$@"
            - "--"
          args:
            - "$(MODEL_NAME)"
            - "--served-model-name"
            - "$(MODEL_ALIAS)"
            - "--host"
            - "0.0.0.0"
            - "--port"
            - "8000"
            - "--max-model-len"
            - "$(MAX_MODEL_LEN)"
            - "--gpu-memory-utilization"
            - "$(GPU_MEMORY_UTILIZATION)"
            - "--speculative-config"
            - "$(SPEC_CONFIG)"
            - "--trust-remote-code"
            - "--enable-prefix-caching"
            - "--dtype"
            - "auto"
{extra_args}          envFrom:
            - configMapRef:
                name: {name}-env
          env:
            - name: HF_HOME
              value: "/models/huggingface"
          ports:
            - containerPort: 8000
          startupProbe:
            httpGet:
              path: /health
              port: 8000
            periodSeconds: 15
            failureThreshold: 60
          resources:
            limits:
              cpu: "8"
              memory: 24Gi
            requests:
              cpu: "2"
              memory: 8Gi
          volumeMounts:
            - mountPath: "/models"
              name: models
      volumes:
        - name: models
          hostPath:
            path: "{{{{ .Values.userspace.appData }}}}/models"
            type: DirectoryOrCreate
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: "{{{{ .Release.Namespace }}}}"
spec:
  ports:
    - name: "vllm"
      port: 8000
      targetPort: 8000
  selector:
    io.kompose.service: {name}
"""


def _args(extra: list[str]) -> str:
    return "".join(f'            - "{a}"\n' for a in extra)


def llamacpp_chart(root: Path, name: str = "marketqwen", *, context: int = 65536, version: str = "1.0.3",
                   branched: bool = False, ctx_arg: str = "$(CONTEXT_SIZE)", extra_args: list[str] | None = None,
                   templates: dict[str, str] | None = None) -> Path:
    """A llama.cpp chart like the maintainer's (v2 manifest, ConfigMap + $(VAR) args, wget init container)."""
    folder = root / name
    (folder / "templates").mkdir(parents=True)
    description = "Qwen3.6 35B-A3B via llama.cpp, imported from a market chart"
    (folder / "Chart.yaml").write_text(CHART.format(name=name, version=version, description=description))
    (folder / "OlaresManifest.yaml").write_text(MANIFEST_V2.format(
        name=name, title="Qwen36 A3B Market", version=version, description=description, port=8080,
        resources=RESOURCES_BRANCHED if branched else RESOURCES))
    (folder / "values.yaml").write_text("{}\n")
    (folder / "owners").write_text("owners:\n- 'labmaintainer'\n")
    (folder / "templates" / "deployment.yaml").write_text(LLAMACPP_DEPLOYMENT.format(
        name=name, alias="qwen3.6-35b-a3b", context=context, ctx_arg=ctx_arg, extra_args=_args(extra_args or [])))
    for rel, text in (templates or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def vllm_chart(root: Path, name: str = "marketgemma", *, context: int = 32000, version: str = "1.0.12",
               image: str = "vllm/vllm-openai:nightly-1acd67a795ebccdf9b9db7697ae9082058301657",
               program: str = "vllm", extra_args: list[str] | None = None) -> Path:
    """A vLLM chart like the maintainer's Gemma 4 E4B one (`sh -c 'pip install ... && exec vllm serve "$@"'`)."""
    folder = root / name
    (folder / "templates").mkdir(parents=True)
    description = "Gemma 4 E4B with MTP via vLLM, imported from a market chart"
    (folder / "Chart.yaml").write_text(CHART.format(name=name, version=version, description=description))
    (folder / "OlaresManifest.yaml").write_text(MANIFEST_V2.format(
        name=name, title="Gemma 4 E4B Market", version=version, description=description, port=8000,
        resources=RESOURCES))
    (folder / "values.yaml").write_text("{}\n")
    (folder / "owners").write_text("owners:\n- 'labmaintainer'\n")
    (folder / "templates" / "deployment.yaml").write_text(VLLM_DEPLOYMENT.format(
        name=name, alias="gemma-4-e4b-mtp", context=context, image=image, program=program,
        extra_args=_args(extra_args or [])))
    return folder


def package(folder: Path, dest: Path, *, extra_members: dict[str, bytes] | None = None,
            symlink: tuple[str, str] | None = None) -> Path:
    """`helm package`'s layout (every member under `<name>/`), plus hostile members when asked."""
    with tarfile.open(dest, "w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.add(path, arcname=f"{folder.name}/{path.relative_to(folder).as_posix()}")
        for member, data in (extra_members or {}).items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink[0])
            info.type = tarfile.SYMTYPE
            info.linkname = symlink[1]
            archive.addfile(info)
    return dest


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
