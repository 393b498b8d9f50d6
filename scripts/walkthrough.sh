#!/usr/bin/env bash
# A store owner's first hour, walked through from a folder OUTSIDE the repository (issue 24):
#   1. install as the README says: `pip install 'PATH[market]'` from the clone, into a fresh virtualenv
#   2. catalog init (and what it says about where the store's CI installs the tool from)
#   3. the generated workflow's "Install catalog" step, run here as CI would run it, in another fresh virtualenv
#      (CATALOG_TOOL set to this clone, as a store owner sets the repository variable)
#   4. render, check, explain, list (piped: every column), bump after a change, publish --to dir:
#   5. smoke --local: a real llama-server booted here on a tiny model shaped like the app: PASS
#   6. serve: a clean page (nothing "Not served") and GET /health saying ok
# Each must succeed, and nothing may be written inside the installed package.
# The llama-server of step 5: $LLAMA_SERVER, else .ci/build-llama-server.sh's cache (never built here); without
# one, step 5 is skipped with a message (CATALOG_REQUIRE_ALL=1, as .ci/run sets it, makes that a failure).
# Usage: scripts/walkthrough.sh   (PYTHON: the interpreter for the virtualenvs; default .venv/bin/python, else python3)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
default_py=python3
[ -x "$repo/.venv/bin/python" ] && default_py="$repo/.venv/bin/python"  # has pip even where Debian's python3 lacks it
PY="${PYTHON:-$default_py}"
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
check_out() { grep -q -- "$2" <<<"$1" || { echo "walkthrough: expected '$2' in the output of $3:" >&2; echo "$1" >&2; exit 1; }; }
fail() { echo "walkthrough: $*" >&2; exit 1; }

cd "$work"  # from here on, nothing runs from the repository (python -c would import its generator/)
echo "== 1. install as the README says: pip install '$repo[market]' into a fresh virtualenv ($work/venv)" >&2
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$repo[market]" >&2
catalog="$work/venv/bin/catalog"
step "$catalog" --version
package="$("$work/venv/bin/python" -c 'import generator, os; print(os.path.dirname(generator.__file__))')"
case "$package" in "$work"/venv/*) ;; *) fail "generator resolves to $package, not the venv";; esac
listing() { (cd "$package" && find . -printf '%p %s %T@\n' | sort); }
before="$(listing)"

mkdir "$work/outside" && cd "$work/outside"
unset CATALOG_DIR
echo "== 2. $catalog init store --owner walkthrough" >&2
init_err="$("$catalog" init store --owner walkthrough 2>&1 >/dev/null)" || { echo "$init_err" >&2; fail "init failed"; }
echo "$init_err" >&2
check_out "$init_err" "install the tool from the local folder $repo" "init"  # pip's record of a local folder
check_out "$init_err" "CATALOG_TOOL" "init"  # ... which CI cannot reach: said, with the fix
cd store

echo "== 3. the workflow's install step, as CI runs it, with the repository variable CATALOG_TOOL set" >&2
"$PY" -m venv "$work/ci-venv"
install_step="$("$work/venv/bin/python" - .github/workflows/catalog.yml <<'EOF'
import sys, yaml
jobs = yaml.safe_load(open(sys.argv[1]))["jobs"]
print(next(s for s in jobs["test"]["steps"] if s.get("name") == "Install catalog")["run"])
EOF
)"
out="$(PATH="$work/ci-venv/bin:$PATH" CATALOG_TOOL="" bash -c "$install_step" 2>&1)" && fail "the install step passed without CATALOG_TOOL"
check_out "$out" "::error::" "the install step without CATALOG_TOOL"
PATH="$work/ci-venv/bin:$PATH" CATALOG_TOOL="olares-llm-catalog @ file://$repo" step bash -c "$install_step"
step "$work/ci-venv/bin/catalog" render --check

echo "== 4. render, check, explain, list, bump, publish" >&2
step "$catalog" render
step "$catalog" check
out="$(step "$catalog" explain llamacppqwen36a3bone)"; check_out "$out" "ctx-size" "explain"
out="$(COLUMNS=80 step "$catalog" list | cat)"; check_out "$out" "llamacppqwen36a3bone" "list"
app_file=catalog/apps/llamacppqwen36a3bone.yaml
for column in name title model stack context version status speed/roof smoke; do check_out "$out" "$column" "list | cat"; done
check_out "$out" "$(sed -n 's/^stack: //p' "$app_file")" "list"

echo "== a change that needs a new version: context -> 32768, and the description that states it" >&2
version_before="$(sed -n 's/^version: //p' "$app_file")"
sed -i -e 's/^context_length: [0-9]*$/context_length: 32768/' -e 's/@ FULL 262K context/@ 32K context/' "$app_file"
step "$catalog" bump
[ "$(sed -n 's/^version: //p' "$app_file")" != "$version_before" ] || fail "bump did not raise the version"
grep -q '^### llamacppqwen36a3bone ' CHANGELOG.md || fail "no CHANGELOG entry"
step "$catalog" render --check
step "$catalog" bump --check
step "$catalog" publish --to "dir:$work/helm-repo"
ls "$work"/helm-repo/llamacppqwen36a3bone-*.tgz "$work/helm-repo/index.yaml" >/dev/null

echo "== 5. smoke --local" >&2
llama="${LLAMA_SERVER:-}"
if [ -z "$llama" ]; then
  llama="$("$work/venv/bin/python" -c 'from generator.adapters.llama import cache_folder; print(cache_folder() / "bin" / "llama-server")')"
fi
if [ -x "$llama" ]; then
  out="$(LLAMA_SERVER="$llama" step "$catalog" smoke llamacppqwen36a3bone --local --runs 2 --max-tokens 64 --timeout 300)"
  echo "$out" >&2
  check_out "$out" "PASS" "smoke --local"
  check_out "$out" "not recorded: a local run" "smoke --local"
  [ ! -e catalog/ledger ] || fail "smoke --local wrote a ledger row"
elif [ "${CATALOG_REQUIRE_ALL:-0}" != 0 ]; then
  fail "no llama-server at $llama and LLAMA_SERVER unset (CATALOG_REQUIRE_ALL=1): run .ci/build-llama-server.sh"
else
  echo "== smoke --local SKIPPED: no llama-server ($llama); .ci/build-llama-server.sh builds one" >&2
fi

echo "== 6. serve: a clean page and /health ok" >&2
port="$("$work/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$catalog" serve --host 127.0.0.1 --port "$port" >"$work/serve.log" 2>&1 &
server_pid=$!
"$work/venv/bin/python" - "$port" <<'EOF' || { tail -20 "$work/serve.log" >&2; fail "serve did not answer"; }
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 60
while True:
    try:
        with urllib.request.urlopen(base + "/health", timeout=2) as reply:
            health = json.load(reply)
        if health["status"] != "starting":  # the first seconds: older versions still read from git history
            break
        if time.monotonic() > deadline:
            sys.exit("serve: still starting after 60 s")
        time.sleep(0.2)
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("serve: no /health after 60 s")
        time.sleep(0.2)
with urllib.request.urlopen(base + "/", timeout=10) as reply:
    page = reply.read().decode()
print(f"/health: {health['status']}, {health['apps']} app(s), problems {health['problems']}", file=sys.stderr)
if health["status"] != "ok" or health["problems"]:
    sys.exit(f"/health is not clean: {health}")
if "Not served" in page or "llamacppqwen36a3bone" not in page:
    sys.exit("the store page is not clean (a 'Not served' box, or the app missing)")
EOF
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

after="$(listing)"
if [ "$before" != "$after" ]; then
  echo "walkthrough: something was written inside the installed package $package:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "walkthrough: ok (installed from the clone, used from outside the repository; nothing written inside $package)" >&2
