#!/usr/bin/env bash
# The README's install, walked through the way a new store maintainer does it, from a folder OUTSIDE the
# repository: build the wheel, install it with its dependencies into a fresh virtualenv, then
#   catalog init, render, check, explain, list, bump, publish --to dir:, smoke
# each of which must succeed, and nothing may be written inside the installed package.
# smoke runs against a real llama-server serving a tiny GGUF when $LLAMA_SERVER is set (the model is written
# by tests/tinygguf.py with $WALKTHROUGH_PYTHON, default .venv/bin/python, which needs numpy and gguf);
# otherwise only smoke is skipped, with a message.
# Usage: scripts/walkthrough.sh   (PYTHON: the interpreter that builds the wheel and the venv; default .venv/bin/python,
# else python3)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
default_py=python3
[ -x "$repo/.venv/bin/python" ] && default_py="$repo/.venv/bin/python"  # has pip even where Debian's python3 lacks it
PY="${PYTHON:-$default_py}"
MODEL_PY="${WALKTHROUGH_PYTHON:-$repo/.venv/bin/python}"
case "$MODEL_PY" in /*) ;; *) MODEL_PY="$PWD/$MODEL_PY";; esac  # the walk-through runs from another folder
case "$PY" in */*) case "$PY" in /*) ;; *) PY="$PWD/$PY";; esac;; esac
work="$(mktemp -d "${TMPDIR:-/tmp}/catalog-walkthrough.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
case "$work/" in "$repo"/*) echo "walkthrough: $work is inside the repository; set TMPDIR elsewhere" >&2; exit 1;; esac

step() { echo "== $*" >&2; "$@" || { echo "walkthrough: FAILED: $*" >&2; exit 1; }; }
check_out() { grep -q -- "$2" <<<"$1" || { echo "walkthrough: expected '$2' in the output of $3" >&2; exit 1; }; }

cd "$work"  # from here on, nothing runs from the repository (python -c would import its generator/)
echo "== build the wheel and install it into a fresh virtualenv ($work/venv)" >&2
"$PY" -m pip wheel "$repo" --no-deps --quiet -w "$work/wheel" >&2
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$work"/wheel/*.whl >&2
catalog="$work/venv/bin/catalog"
package="$("$work/venv/bin/python" -c 'import generator, os; print(os.path.dirname(generator.__file__))')"
case "$package" in "$work"/venv/*) ;; *) echo "walkthrough: generator resolves to $package, not the venv" >&2; exit 1;; esac
listing() { (cd "$package" && find . -printf '%p %s %T@\n' | sort); }
before="$(listing)"

mkdir "$work/outside" && cd "$work/outside"
unset CATALOG_DIR
step "$catalog" init store
cd store
step "$catalog" render
step "$catalog" check
out="$(step "$catalog" explain llamacppqwen36a3bone)"; check_out "$out" "ctx-size" "explain"
out="$(COLUMNS=80 step "$catalog" list | cat)"; check_out "$out" "llamacppqwen36a3bone" "list"
app_file=catalog/apps/llamacppqwen36a3bone.yaml
check_out "$out" "$(sed -n 's/^stack: //p' "$app_file")" "list"

echo "== a change that needs a new version: context -> 32768" >&2
version_before="$(sed -n 's/^version: //p' "$app_file")"
sed -i 's/^context_length: [0-9]*$/context_length: 32768/' "$app_file"
step "$catalog" bump
[ "$(sed -n 's/^version: //p' "$app_file")" != "$version_before" ] \
  || { echo "walkthrough: bump did not raise the version" >&2; exit 1; }
grep -q '^### llamacppqwen36a3bone ' CHANGELOG.md || { echo "walkthrough: no CHANGELOG entry" >&2; exit 1; }
step "$catalog" render --check
step "$catalog" bump --check
step "$catalog" publish --to "dir:$work/helm-repo"
ls "$work"/helm-repo/llamacppqwen36a3bone-*.tgz "$work/helm-repo/index.yaml" >/dev/null

if [ -n "${LLAMA_SERVER:-}" ] && [ -x "$LLAMA_SERVER" ] && "$MODEL_PY" -c 'import numpy, gguf' 2>/dev/null; then
  echo "== smoke against a real llama-server ($LLAMA_SERVER) serving a tiny GGUF" >&2
  "$MODEL_PY" - "$repo/tests" "$work/tiny.gguf" <<'EOF'
import sys
from dataclasses import replace
sys.path.insert(0, sys.argv[1])
from support import tinygguf
tinygguf.write(sys.argv[2], replace(tinygguf.MAIN, context=32768), never_eos=True, text_only=True)
EOF
  port="$("$work/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  LD_LIBRARY_PATH="$(dirname "$LLAMA_SERVER")" "$LLAMA_SERVER" -m "$work/tiny.gguf" --host 127.0.0.1 --port "$port" \
    -c 32768 -np 1 -t 1 --alias "$(sed -n 's/^served_name: //p' "$app_file")" --no-ui --metrics >"$work/llama-server.log" 2>&1 &
  server_pid=$!
  "$work/venv/bin/python" - "$port" <<'EOF' || { tail -20 "$work/llama-server.log" >&2; exit 1; }
import sys, time, httpx
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        if httpx.get(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=1).status_code == 200:
            sys.exit(0)
    except httpx.HTTPError:
        pass
    time.sleep(0.1)
sys.exit("llama-server not healthy after 60 s")
EOF
  # The tiny model runs no speculative decoding, so the MTP app's smoke must measure it and say FAIL (exit 1):
  # a verdict and a ledger row, never a crash (exit 2) or a pass.
  echo "== $catalog smoke llamacppqwen36a3bone --endpoint http://127.0.0.1:$port" >&2
  code=0; out="$("$catalog" smoke llamacppqwen36a3bone --endpoint "http://127.0.0.1:$port" --runs 2 --max-tokens 32 \
    --timeout 120)" || code=$?
  [ "$code" = 1 ] || { echo "walkthrough: smoke exited $code, expected 1 (a measured FAIL)" >&2; exit 1; }
  check_out "$out" "FAIL" "smoke"
  check_out "$out" "speculation is off on the server" "smoke"
  test -s catalog/ledger/llamacppqwen36a3bone.yaml || { echo "walkthrough: smoke recorded nothing" >&2; exit 1; }
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
else
  echo "== smoke SKIPPED: set LLAMA_SERVER to a llama-server binary (.ci/build-llama-server.sh builds one) and" \
       "WALKTHROUGH_PYTHON to a Python with numpy and gguf" >&2
fi

after="$(listing)"
if [ "$before" != "$after" ]; then
  echo "walkthrough: something was written inside the installed package $package:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "walkthrough: ok (the wheel from outside the repository; nothing written inside $package)" >&2
