#!/usr/bin/env bash
# Set up everything the tests need on a Debian/Ubuntu machine, then run them (docs/testing.md).
#   bash scripts/test.sh [--quick] [PYTEST ARGS...]
# Full (the default, what CI runs): every test.
#   - a virtualenv .venv with the package, its test extras, ruff and mypy
#   - Debian's docker-registry (OCI registry) and apache2-utils (htpasswd) for the publish tests; cmake and g++
#     for the llama-server build (apt-get as root, else through passwordless sudo, else a hint)
#   - llama.cpp's llama-server: $LLAMA_SERVER when set, else built from source once and cached outside the
#     repository (.ci/build-llama-server.sh, ~/.cache/catalog); exported as LLAMA_SERVER for the
#     `needs_llama_server` tests. pytest itself never builds anything.
# --quick: no build and no large download: the `needs_llama_server` and `slow` tests are deselected (the first
# run to make: docs/testing.md gives the times).
# With CATALOG_REQUIRE_ALL=1 (.ci/run, the tests workflow) a `needs_llama_server` test that is skipped or
# deselected fails the run, so --quick is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
if [ "$quick" = 1 ] && [ "${CATALOG_REQUIRE_ALL:-0}" != 0 ]; then
  echo "scripts/test.sh: --quick deselects the needs_llama_server tests, which CATALOG_REQUIRE_ALL=1 forbids" >&2
  exit 2
fi

say() { echo "scripts/test.sh: $*" >&2; }
PY="${PYTHON:-python3}"
say "setting up .venv: the package with its test extras, ruff and mypy (pip; a minute or two the first time)"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1
pip_log="$(mktemp)"
if ! .venv/bin/python -m pip install -q -e '.[test]' ruff mypy >"$pip_log" 2>&1; then
  cat "$pip_log" >&2; rm -f "$pip_log"; say "pip install failed (its output above)"; exit 1
fi
rm -f "$pip_log"  # setuptools' warnings of a successful install are noise here

need=()
command -v docker-registry >/dev/null || need+=(docker-registry)
command -v htpasswd >/dev/null || need+=(apache2-utils)
command -v git >/dev/null || need+=(git)
command -v chromium >/dev/null || need+=(chromium)  # the store page is tested in a real headless browser
if [ "$quick" = 0 ] && [ -z "${LLAMA_SERVER:-}" ]; then
  command -v cmake >/dev/null || need+=(cmake)
  command -v g++ >/dev/null || need+=(g++)
fi
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=(); elif sudo -n true 2>/dev/null; then sudo=(sudo); else sudo=(none); fi
  if [ "${sudo[*]}" != none ]; then
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing ${need[*]}: install them (sudo apt-get install ${need[*]}); the tests that need them fail without them" >&2
  fi
fi

if [ "$quick" = 1 ]; then
  say "quick tier: no llama-server build, no large download (the needs_llama_server and slow tests deselected)"
  exec .venv/bin/python -m pytest -m "not needs_llama_server and not slow" "$@"
fi
if [ -z "${LLAMA_SERVER:-}" ]; then
  say "LLAMA_SERVER is unset: building llama-server from source, or reusing the cached build" \
      "(.ci/build-llama-server.sh; 'bash scripts/test.sh --quick' runs without it)"
  LLAMA_SERVER="$(bash .ci/build-llama-server.sh)"  # a plain assignment: a failed build stops here (set -e)
fi
say "running pytest with LLAMA_SERVER=$LLAMA_SERVER"
export LLAMA_SERVER
exec .venv/bin/python -m pytest "$@"
