#!/usr/bin/env bash
# Set up everything the tests need on a fresh Debian machine, then run them.
#   - a virtualenv with the package and its test extras
#   - Debian's docker-registry (OCI registry) and apache2-utils (htpasswd) for the publish tests
#   - llama.cpp's llama-server built from source, cached outside the repo (.ci/build-llama-server.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
need=()
command -v docker-registry >/dev/null || need+=(docker-registry)
command -v htpasswd >/dev/null || need+=(apache2-utils)
command -v git >/dev/null || need+=(git)
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]}: install them (sudo apt-get install ${need[*]}); the tests that need them fail without them" >&2
  fi
fi
export LLAMA_SERVER="${LLAMA_SERVER:-$(bash .ci/build-llama-server.sh)}"
exec .venv/bin/python -m pytest "$@"
