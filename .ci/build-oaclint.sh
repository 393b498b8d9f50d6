#!/usr/bin/env bash
# Build tools/oaclint/ (the platform's chart validator, beclab/Olares framework/oac, as `olares-cli chart lint` runs
# it) into the cache, with Go and the Go module proxy; the module cache lives outside the repository. Prints the
# binary's path. Exits non-zero, with Go's own message, when the module cannot be had (the proxy refused
# github.com/beclab/Olares/framework/oac@v0.0.0-20260509033324-899cba323495 with 403 on 2026-12-06: README.md).
set -euo pipefail
cd "$(dirname "$0")/../tools/oaclint"
cache="${CATALOG_CACHE:-$HOME/.cache/catalog}"
export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" GOFLAGS="${GOFLAGS:--mod=mod}"
command -v go >/dev/null || { echo "build-oaclint: go is not installed" >&2; exit 1; }
mkdir -p "$cache/oaclint"
timeout 900 go build -trimpath -o "$cache/oaclint/oaclint" . >&2
echo "$cache/oaclint/oaclint"
