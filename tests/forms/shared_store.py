"""Small shared-app charts written by the tests, in the layout of the second public store.

The layout follows github.com/coynntis/olares-one-market@cb991c8fe7ae29766d41269cad880f6c452fab7e (its
`llamacppqwen36a3bone/` folder): OlaresManifest 0.12.0 / apiVersion v3 with `options.shared`, `spec.onlyAdmin`,
`sharedEntrances` (host `sharedentrances-<app>`, port 0) and a client entrance (`<app>cli`, port 8080); the market's
own categories in `metadata.categories`; `requiredGPUMemory: 1Gi` / `limitedGPUMemory: 24Gi` with no HAMi limit in
the pod (`nvidia.com/gpu: "1"`, a `CUDA_DEVICE_MEMORY_LIMIT_0` belt of 30000m); `templates/server.yaml` (a ConfigMap,
the GPU Deployment whose bash launcher reads `LLM_CONTEXT_WINDOW` / `LLM_MAX_OUTPUT_TOKENS` / `LLM_API_KEY` from env
filled by `.Values.olaresEnv`, a Service and the `sharedentrances-<app>` Service); `templates/clientproxy.yaml` (an
nginx client proxying to the Service); empty `<app>/<app>/` and `<app>/<app>srv/` subchart folders. Nothing is copied
from that repository: each chart is a few lines written here, with the values of the test catalog
(tests/fixtures/catalog_small).
"""

from __future__ import annotations

from pathlib import Path

CHART = """apiVersion: v2
appVersion: "{version}"
description: {description}
name: {name}
type: application
version: {version}
"""

MANIFEST = """---
olaresManifest.version: 0.12.0
olaresManifest.type: app
apiVersion: v3
workloadReplicas:
  {name}: 1
  {name}cli: 1
metadata:
  name: {name}
  icon: https://example.org/icons/{name}.png
  description: {description}
  title: {title}
  version: {version}
  categories:
{categories}
sharedEntrances:
  - name: {name}
    host: sharedentrances-{name}
    port: 0
    title: {title} API
    icon: https://example.org/icons/{name}.png
    invisible: true
    authLevel: internal
entrances:
  - name: {name}cli
    port: 8080
    host: {name}cli
    title: {entrance_title}
    icon: https://example.org/icons/{name}.png
    openMethod: window
    authLevel: internal
spec:
  versionName: {version}
  fullDescription: |
    {description}
  developer: storeowner
  submitter: storeowner
  locale:
    - en-US
  supportArch:
    - amd64
{arm}  onlyAdmin: true
  accelerator:
    - mode: nvidia
      requiredCpu: '1'
      limitedCpu: '9'
      requiredMemory: 3Gi
      limitedMemory: 25Gi
      requiredDisk: 30Gi
      limitedDisk: 50Gi
      requiredGPUMemory: 1Gi
      limitedGPUMemory: {limited_gpu}
{gb10}permission:
  appData: true
  appCommon: true
envs:
  - envName: HF_TOKEN
    required: false
    applyOnChange: true
    valueFrom:
      envName: OLARES_USER_HUGGINGFACE_TOKEN
  - envName: LLM_CONTEXT_WINDOW
    required: false
    editable: true
    applyOnChange: true
  - envName: LLM_MAX_OUTPUT_TOKENS
    required: false
    editable: true
    applyOnChange: true
  - envName: LLM_API_KEY
    required: false
    editable: true
    applyOnChange: true
{more_envs}options:
  shared: true
  apiTimeout: 0
  dependencies:
    - name: olares
      version: '>=1.12.6-0'
      type: system
  LLMGatewaySupported: true
"""

GB10 = """    - mode: nvidia-gb10
      requiredCpu: '1'
      limitedCpu: '9'
      requiredMemory: 3Gi
      limitedMemory: 100Gi
      requiredDisk: 30Gi
      limitedDisk: 50Gi
"""

VALUES = """admin: ''
bfl:
  username: ''
userspace:
  appData: ''
  appCache: ''
  appCommon: ''
olaresEnv:
  HF_TOKEN: ''
workloads:
  {name}:
    replicaCount: 1
  {name}cli:
    replicaCount: 1
"""

BASH = """          command: ["/bin/bash", "-c"]
          args:
            - |
              set -e
              SHARED_DIR=/shared-models/llms
              mkdir -p "$SHARED_DIR"
{fetch}              EXTRA_LLM_ARGS=()
              if [ -n "${{LLM_MAX_OUTPUT_TOKENS:-}}" ]; then EXTRA_LLM_ARGS+=(--n-predict "$LLM_MAX_OUTPUT_TOKENS"); fi
              if [ -n "${{LLM_API_KEY:-}}" ]; then EXTRA_LLM_ARGS+=(--api-key "$LLM_API_KEY"); fi
{build}{pre}{launch}"""

FETCH = """              if [ ! -f "$SHARED_DIR/$TARGET_FILE" ]; then
                curl -fL -o "$SHARED_DIR/$TARGET_FILE" "https://huggingface.co/$TARGET_MODEL/resolve/main/$TARGET_FILE"
              fi
"""

# that store's newer launchers download through a function of their own (e.g. its
# `llamacppgrug27bone/templates/server.yaml`: `download URL DEST LABEL MIN_BYTES EXACT_BYTES`, resuming a `.part`)
FETCH_HELPER = """              log() { echo "[app] $*" >&2; }
              download() {
                local url dest label
                url="$1"; dest="$2"; label="$3"
                if [ -f "$dest" ] || { [ -e "$dest.part" ] && [ ! -s "$dest.part" ]; }; then
                  log "$label OK: $dest"
                  return 0
                fi
                curl -fL -C - --retry 20 "$url" -o "$dest.part"
                mv -f "$dest.part" "$dest"
              }
              download \\
                "https://huggingface.co/${TARGET_MODEL}/resolve/main/${TARGET_FILE}" \\
                "$SHARED_DIR/$TARGET_FILE" "model" "16800000000"
"""

LAUNCH = """              exec /app/llama-server \\
                --model "$SHARED_DIR/$TARGET_FILE" \\
                --alias "$MODEL_ALIAS" \\
                --host 0.0.0.0 --port {port} \\
                --ctx-size "${{LLM_CONTEXT_WINDOW:-${{CONTEXT_SIZE:-{context}}}}}" \\
{extra}                --n-gpu-layers 99 --parallel 1 --jinja \\
                "${{EXTRA_LLM_ARGS[@]}}"
"""

# the launcher shape of that store's newer apps (e.g. its `llamacppagentsa1one/templates/server.yaml`): the server is
# run without `exec`, its log teed to a file, the settings' array first on the last line
LAUNCH_TEE = """              LOGFILE="/shared-models/llms/logs/server.log"
{own}              /app/llama-server \\
                --model "$SHARED_DIR/$TARGET_FILE" \\
                --alias "$MODEL_ALIAS" \\
                --host 0.0.0.0 --port {port} \\
                --ctx-size "${{LLM_CONTEXT_WINDOW:-${{CONTEXT_SIZE:-{context}}}}}" \\
{own_use}                --n-gpu-layers 99 --parallel 1 --jinja \\
                "${{EXTRA_LLM_ARGS[@]}}" 2>&1 | tee -a "$LOGFILE"
              exit "${{PIPESTATUS[0]}}"
"""
# an array of the launcher's own flags, set outside the settings (that store's `REASONING_ARGS=(--reasoning on)`)
OWN_ARRAY = "              REASONING_ARGS=(--reasoning on)\n"
OWN_ARRAY_USE = '                "${REASONING_ARGS[@]}" \\\n'

# the other launcher shape of that store (e.g. its `gemma4e2bone/templates/server.yaml`): the settings read in the
# template, the engine's args written directly with Helm conditionals
HELM_ARGS = """          command: ["/app/llama-server"]
          args:
            - "--model"
            - "/shared-models/llms/$(TARGET_FILE)"
            - "--alias"
            - "$(MODEL_ALIAS)"
            - "--host"
            - "0.0.0.0"
            - "--port"
            - "{port}"
            - "--ctx-size"
{{{{- if $llmCtx }}}}
            - {{{{ $llmCtx | quote }}}}
{{{{- else }}}}
            - "$(CONTEXT_SIZE)"
{{{{- end }}}}
            - "--n-gpu-layers"
            - "99"
            - "--parallel"
            - "1"
            - "--jinja"
{{{{- if $llmMaxOut }}}}
            - "--n-predict"
            - {{{{ $llmMaxOut | quote }}}}
{{{{- end }}}}
{{{{- if $llmApiKey }}}}
            - "--api-key"
            - {{{{ $llmApiKey | quote }}}}
{{{{- end }}}}
"""

HELM_INIT = """      initContainers:
        - name: model-downloader
          image: "docker.io/beclab/aboveos-busybox:1.37.0"
          command:
            - sh
            - -c
            - |
              mkdir -p /shared-models/llms
              if [ ! -f "/shared-models/llms/$TARGET_FILE" ]; then
                wget -O "/shared-models/llms/$TARGET_FILE.tmp" "$MODEL_URL"
                mv "/shared-models/llms/$TARGET_FILE.tmp" "/shared-models/llms/$TARGET_FILE"
              fi
          envFrom:
            - configMapRef:
                name: {name}-env
          volumeMounts:
            - mountPath: "/shared-models"
              name: shared-models
"""

HELM_HEAD = """{{- $llmCtx := .Values.olaresEnv.LLM_CONTEXT_WINDOW | default "" }}
{{- $llmMaxOut := .Values.olaresEnv.LLM_MAX_OUTPUT_TOKENS | default "" }}
{{- $llmApiKey := .Values.olaresEnv.LLM_API_KEY | default "" }}
"""

BUILD = """              git clone --depth 1 https://github.com/ggml-org/llama.cpp /opt/llama.cpp
              cmake -S /opt/llama.cpp -B /opt/llama.cpp/build -DGGML_CUDA=ON
              cmake --build /opt/llama.cpp/build --target llama-server -j 16
"""

# that store's clone of a fork whose URL is set in a variable first (e.g. its `llamacppbonsai8bone/`)
BUILD_VAR = """              REPO_URL="https://github.com/PrismML-Eng/llama.cpp"
              git clone "$REPO_URL" /opt/llama.cpp
              cmake -S /opt/llama.cpp -B /opt/llama.cpp/build -DGGML_CUDA=ON
              cmake --build /opt/llama.cpp/build --target llama-server -j 16
"""

# that store's reasoning setting (e.g. its `llamacppqwen36a3bone/`): an editable manifest env with no default, read
# into the launcher's env, lowercased and matched in a `case` that fills an array of flags
REASONING = """              REASONING_ARGS=()
              REASONING_MODE="$(echo "${LLM_REASONING:-on}" | tr '[:upper:]' '[:lower:]')"
              case "$REASONING_MODE" in
                off|0|false|no) REASONING_ARGS=(--reasoning off) ;;
                auto) REASONING_ARGS=(--reasoning auto) ;;
                *) REASONING_ARGS=(--reasoning on) ;;
              esac
"""
REASONING_ENV = """  - envName: LLM_REASONING
    required: false
    editable: true
    applyOnChange: true
"""
REASONING_POD = """            - name: LLM_REASONING
              value: {{ .Values.olaresEnv.LLM_REASONING | default "" | quote }}
"""

# a launcher that serves with a Python program the catalog does not model (e.g. its `dflashqwen3627bone/`)
LAUNCH_PY = """              exec python3 scripts/server.py --port {port} --max-ctx "${{LLM_CONTEXT_WINDOW:-{context}}}"
"""

SERVER = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-env
  namespace: "{{{{ .Release.Namespace }}}}"
data:
  TARGET_MODEL: "unsloth/Qwen3.6-35B-A3B-GGUF"
  TARGET_FILE: "Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"
  MODEL_URL: "https://huggingface.co/unsloth/Qwen3.6-35B-A3B-GGUF/resolve/main/Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"
  MODEL_ALIAS: "qwen3.6-35b-a3b"
  CONTEXT_SIZE: "{context}"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    io.kompose.service: {name}
  name: {name}
  namespace: "{{{{ .Release.Namespace }}}}"
  annotations:
    applications.app.bytetrade.io/gpu-inject: "true"
spec:
  replicas: {{{{ .Values.workloads.{name}.replicaCount }}}}
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
{init}      containers:
        - name: llamacpp-server
          image: "{image}"
{container}          envFrom:
            - configMapRef:
                name: {name}-env
          env:
{hami_env}{more_env}            - name: LLM_CONTEXT_WINDOW
              value: {{{{ .Values.olaresEnv.LLM_CONTEXT_WINDOW | default "" | quote }}}}
            - name: LLM_MAX_OUTPUT_TOKENS
              value: {{{{ .Values.olaresEnv.LLM_MAX_OUTPUT_TOKENS | default "" | quote }}}}
            - name: LLM_API_KEY
              value: {{{{ .Values.olaresEnv.LLM_API_KEY | default "" | quote }}}}
          ports:
            - containerPort: {port}
          startupProbe:
            httpGet:
              path: /health
              port: {port}
            periodSeconds: 30
            failureThreshold: 720
          resources:
            limits:
              cpu: "8"
              memory: 24Gi
              nvidia.com/gpu: "1"
            requests:
              cpu: 500m
              memory: 2Gi
              nvidia.com/gpu: "1"
          volumeMounts:
            - mountPath: "/shared-models"
              name: shared-models
      volumes:
        - name: shared-models
          hostPath:
            path: "{{{{ .Values.userspace.appCommon }}}}/llms"
            type: DirectoryOrCreate
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: "{{{{ .Release.Namespace }}}}"
spec:
  ports:
    - name: "llamacpp"
      port: {port}
      targetPort: {port}
  selector:
    io.kompose.service: {name}
---
apiVersion: v1
kind: Service
metadata:
  name: sharedentrances-{name}
  namespace: "{{{{ .Release.Namespace }}}}"
spec:
  ports:
    - name: "{name}"
      port: 80
      targetPort: {port}
  selector:
    io.kompose.service: {name}
"""

CLIENT = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: nginx-config
  namespace: {{{{ .Release.Namespace }}}}
data:
  nginx.conf: |
    server {{
      listen 8080;
      location / {{
        proxy_pass http://{name}:{port};
      }}
    }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    io.kompose.service: {name}cli
  name: {name}cli
  namespace: '{{{{ .Release.Namespace }}}}'
spec:
  replicas: {{{{ .Values.workloads.{name}cli.replicaCount }}}}
  selector:
    matchLabels:
      io.kompose.service: {name}cli
  template:
    metadata:
      labels:
        io.kompose.service: {name}cli
    spec:
      volumes:
        - name: nginx-config
          configMap:
            name: nginx-config
      containers:
        - name: nginx
          image: "docker.io/beclab/aboveos-bitnami-openresty:1.25.3-2"
          ports:
            - containerPort: 8080
          resources:
            limits:
              cpu: 500m
              memory: 500Mi
            requests:
              cpu: 10m
              memory: 64Mi
          volumeMounts:
            - name: nginx-config
              mountPath: /opt/bitnami/openresty/nginx/conf/server_blocks/nginx.conf
              subPath: nginx.conf
---
apiVersion: v1
kind: Service
metadata:
  name: {name}cli
  namespace: {{{{ .Release.Namespace }}}}
spec:
  type: ClusterIP
  selector:
    io.kompose.service: {name}cli
  ports:
    - name: {name}cli
      port: 8080
      targetPort: 8080
"""


def shared_chart(root: Path, name: str, *, title: str = "Qwen3.6 A3B (Shared)", version: str = "2.0.39",
                 context: int = 65536, image: str = "ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740",
                 categories: tuple[str, ...] = ("LLM Chat", "AI Agents"), builds: bool = False,
                 gb10: bool = False, port: int = 8080, helm_args: bool = False, tee: bool = False,
                 own_array: bool = False, builds_var: bool = False, python: bool = False,
                 hami: str | None = "30000m", limited_gpu: str = "24Gi", helper: bool = False,
                 extra: tuple[str, ...] = (), entrance_title: str | None = None, reasoning: bool = False) -> Path:
    """One app folder of the second store's layout (`tee`: the server's log teed, no `exec`; `own_array`: with an
    array of the launcher's own flags; `builds_var`: it clones a fork whose URL a variable holds; `python`: a Python
    server the catalog does not model; `hami`: its CUDA_DEVICE_MEMORY_LIMIT_0 (None: none); `limited_gpu`: the
    manifest's limitedGPUMemory; `helper`: the launcher downloads the model through a function of its own; `extra`: more of the server's words, one line;
    `entrance_title`: the client entrance's title, when not the app's; `reasoning`: a reasoning setting picks a flag
    in a `case`)."""
    folder = root / name
    (folder / "templates").mkdir(parents=True)
    description = "Qwen3.6 35B-A3B via llama.cpp, a shared app of another store"
    (folder / "Chart.yaml").write_text(CHART.format(name=name, version=version, description=description))
    (folder / "OlaresManifest.yaml").write_text(MANIFEST.format(
        name=name, title=title, entrance_title=entrance_title or title, version=version, description=description,
        limited_gpu=limited_gpu,
        categories="".join(f"    - {c}\n" for c in categories).rstrip("\n"),
        arm="    - arm64\n" if gb10 else "", gb10=GB10 if gb10 else "", more_envs=REASONING_ENV if reasoning else ""))
    if reasoning:
        extra = (*extra, '"${REASONING_ARGS[@]}"')
    (folder / "values.yaml").write_text(VALUES.format(name=name))
    launch = (LAUNCH_TEE.format(context=context, port=port, own=OWN_ARRAY if own_array else "",
                                own_use=OWN_ARRAY_USE if own_array else "") if tee or own_array
              else LAUNCH_PY.format(context=context, port=port) if python
              else LAUNCH.format(context=context, port=port,
                                 extra=f"                {' '.join(extra)} \\\n" if extra else ""))
    build = BUILD if builds else BUILD_VAR if builds_var else ""
    fetch = FETCH_HELPER if helper else FETCH
    container = HELM_ARGS.format(port=port) if helm_args else BASH.format(build=build, launch=launch, fetch=fetch,
                                                                          pre=REASONING if reasoning else "")
    (folder / "templates" / "server.yaml").write_text((HELM_HEAD if helm_args else "") + SERVER.format(
        name=name, image=image, context=context, container=container, port=port,
        hami_env=f"            - name: CUDA_DEVICE_MEMORY_LIMIT_0\n              value: \"{hami}\"\n" if hami else "",
        more_env=REASONING_POD if reasoning else "",
        init=HELM_INIT.format(name=name) if helm_args else ""))
    (folder / "templates" / "clientproxy.yaml").write_text(CLIENT.format(name=name, port=port))
    for sub in (name, f"{name}srv"):  # the empty client / server subchart folders the store keeps
        (folder / sub).mkdir()
        (folder / sub / "Chart.yaml").write_text(CHART.format(name=sub, version="2.0.27",
                                                              description=f"{name} shared part"))
    return folder


def shared_store(root: Path) -> Path:
    """A store of four shared apps: one on an image the catalog knows, one that builds llama.cpp at start, one that
    also installs on a DGX Spark (nvidia-gb10), one whose template writes the engine's args with Helm conditionals."""
    store = root / "store"
    shared_chart(store, "sharedqwen")
    shared_chart(store, "sharedbuild", builds=True)
    shared_chart(store, "sharedspark", gb10=True, title="Qwen3.6 A3B Spark")
    shared_chart(store, "sharedhelm", helm_args=True, context=32768)
    return store


__all__ = ["shared_chart", "shared_store"]
