"""The one quote-aware splitter the importer reads launcher lines with (generator/importer/shell.py)."""

import time

import pytest

from generator.importer.shell import functions, logical_lines, read_script
from generator.importer.shellwords import ShellError, simple_commands, split_outside_quotes, split_words


def test_simple_commands_split_on_every_list_operator_outside_quotes():
    line = "set -e; cd /app && echo 'a;b|c' | tee x || true & wait"
    assert simple_commands(line) == ["set -e", "cd /app", "echo 'a;b|c'", "tee x", "true", "wait"]


def test_an_escaped_operator_or_one_in_double_quotes_is_text():
    assert simple_commands(r'echo a\;b "x && \"y\" ; z"') == [r'echo a\;b "x && \"y\" ; z"']


def test_a_redirect_of_both_streams_is_not_a_background_operator():
    assert simple_commands("exec /app/llama-server &> /tmp/log; echo done") == [
        "exec /app/llama-server &> /tmp/log", "echo done"]


def test_a_refused_construct_outside_quotes_stops_the_split():
    def backquote(text: str, i: int) -> bool:
        return text[i] == "`"

    assert split_outside_quotes("printf x && echo `id`", ("&&",), refuse=backquote) is None
    assert split_outside_quotes("printf x && echo '`id`'", ("&&",), refuse=backquote) == ["printf x", "echo '`id`'"]


def test_a_redirect_to_another_stream_is_not_a_background_operator():
    assert simple_commands('/app/llama-server -m x 2>&1 | tee -a "$LOG"') == ["/app/llama-server -m x 2>&1",
                                                                            'tee -a "$LOG"']


def _server(script: str, env: dict[str, str] | None = None) -> list[str]:
    found = read_script(script, env or {}, lambda word, _exec: word.endswith("llama-server"))
    assert found.exec_line is not None
    return split_words(found.exec_line.text, found.env).words


def test_an_array_set_outside_any_block_is_followed_and_the_output_redirection_dropped():
    """The second public store's launchers (github.com/coynntis/olares-one-market@cb991c8f sglangminicpm51bone,
    llamacppagentsa1one): arrays of flags, the server's output teed to a log."""
    script = """set -e
EXTRA_ARGS=()
EXTRA_ARGS+=(--disable-radix-cache)
TEMPLATE=(--jinja --chat-template-file "$DIR/t.jinja")
/app/llama-server -m x "${EXTRA_ARGS[@]}" "${TEMPLATE[@]}" "${EMPTY[@]+x}" 2>&1 | tee -a "$LOG"
"""
    with pytest.raises(ShellError):  # a form it does not read stays refused
        _server(script, {"DIR": "/m"})
    words = _server(script.replace(' "${EMPTY[@]+x}"', ""), {"DIR": "/m", "LOG": "/l"})
    assert words == ["/app/llama-server", "-m", "x", "--disable-radix-cache", "--jinja", "--chat-template-file",
                     "/m/t.jinja"]


@pytest.mark.parametrize("block", [
    'if [ -f /models/d.gguf ]; then\n  SPEC=(-md /d.gguf)\nfi',  # a file: known only when the pod runs
    'if [ -n "$(ls /models)" ]; then SPEC+=(-md /d.gguf); fi',  # a command
    'if [ "$SET" = "1" ]; then SPEC+=(-md /d.gguf); fi',  # a value set at install (a manifest env, a Secret)
    'case "$(hostname)" in\n  off|no) SPEC=(--reasoning off) ;;\n  *) SPEC=(--reasoning on) ;;\nesac',
    'pick() {\n  SPEC=(--x)\n}',
    'for f in a b; do SPEC+=(--x "$f"); done',
])
def test_an_array_set_where_it_may_or_may_not_run_is_not_guessed(block):
    script = f"SPEC=()\n{block}\nexec /app/llama-server -m x \"${{SPEC[@]}}\"\n"
    with pytest.raises(ShellError, match="set where it may or may not run"):
        _server(script, {"SET": "<olaresEnv:SET>"})
    with pytest.raises(ShellError, match="set where it may or may not run"):
        found = read_script(script, {}, lambda word, _exec: word.endswith("llama-server"), frozenset({"SET"}))
        split_words(found.exec_line.text if found.exec_line else "", found.env)


# the second public store's launchers (github.com/coynntis/olares-one-market@cb991c8f llamacppqwen36a3bone,
# llamacppkatcoderv25one, llamacpplagunas21one, llamacppbonsai27bone): flags chosen on env the chart sets
REASONING = """REASONING_ARGS=()
REASONING_MODE="$(echo "${LLM_REASONING:-on}" | tr '[:upper:]' '[:lower:]')"
case "$REASONING_MODE" in
  off|0|false|no) REASONING_ARGS=(--reasoning off) ;;
  auto) REASONING_ARGS=(--reasoning auto) ;;
  *) REASONING_ARGS=(--reasoning on) ;;
esac
OFFLOAD_ARGS=()
if [ -n "${N_CPU_MOE:-}" ]; then
  OFFLOAD_ARGS+=(--n-cpu-moe "$N_CPU_MOE")
elif [ "${ENABLE_CPU_MOE:-1}" = "1" ] || [ "${ENABLE_CPU_MOE:-1}" = "true" ]; then
  OFFLOAD_ARGS+=(--cpu-moe)
else
  echo "no offload"
fi
SPEC_ARGS=()
if [ "${ENABLE_DSPARK:-0}" = "1" ] && [ -f "$DRAFT" ]; then SPEC_ARGS+=(-md "$DRAFT"); fi
CTK_ARGS=()
if [ -n "${LLM_ENABLE_THINKING:-}" ]; then
  json_bool() { case "$(echo "$1" | tr '[:upper:]' '[:lower:]')" in 1|true|yes|on) echo true ;; *) echo false ;; esac; }
  CTK_ARGS=(--chat-template-kwargs "{}")
fi
exec /app/llama-server -m x "${REASONING_ARGS[@]}" "${OFFLOAD_ARGS[@]}" "${SPEC_ARGS[@]}" "${CTK_ARGS[@]}"
"""


@pytest.mark.parametrize(("env", "flags"), [
    ({"LLM_REASONING": "", "LLM_ENABLE_THINKING": ""}, ["--reasoning", "on", "--cpu-moe"]),  # settings empty
    ({"LLM_REASONING": "OFF", "N_CPU_MOE": "12"}, ["--reasoning", "off", "--n-cpu-moe", "12"]),
    ({"LLM_REASONING": "auto", "ENABLE_CPU_MOE": "0"}, ["--reasoning", "auto"]),
    ({"LLM_REASONING": "x", "ENABLE_CPU_MOE": "true", "LLM_ENABLE_THINKING": "1"},
     ["--reasoning", "on", "--cpu-moe", "--chat-template-kwargs", "{}"]),
])
def test_a_branch_the_chart_decides_is_read_as_bash_runs_it(env, flags):
    """case on a lowercased value, if/elif/else of string tests joined by || and &&, a test of a file after a false
    `&&` (decided without it), a one-line function with a case inside a branch not taken."""
    assert _server(REASONING, env) == ["/app/llama-server", "-m", "x", *flags]


def test_a_value_set_at_install_leaves_the_case_undecided():
    with pytest.raises(ShellError, match="REASONING_ARGS"):
        _server(REASONING, {"LLM_REASONING": "<olaresEnv:LLM_REASONING>"})


def test_the_functions_a_script_defines_are_read_with_their_bodies():
    """One-line and many-line bodies, a `{ ...; }` group inside (it closes with its own `}`), a `name()` whose `{`
    is on the next line; a function's body does not run on into the script after it."""
    script = "\n".join([
        'log() { echo "$*" >&2; }',
        "download() {",
        '  url="$1"; dest="$2"',
        '  if [ -f "$dest" ] || { [ -e "$dest.part" ] && [ -s "$dest.part" ]; }; then',
        "    return 0",
        "  fi",
        '  curl -fL "$url" -o "$dest"',
        "}",
        "late()",
        "{",
        "  wget -O /x https://example.org/x",
        "}",
        'download "https://huggingface.co/o/r/resolve/main/f.gguf" /m/f.gguf',
        "exec /app/llama-server --model /m/f.gguf",
    ])
    found = functions(logical_lines(script))
    assert set(found) == {"log", "download", "late"}
    assert found["log"] == ['echo "$*" >&2']
    assert found["download"][-1] == 'curl -fL "$url" -o "$dest"'
    assert found["late"] == ["wget -O /x https://example.org/x"]
    assert not any("exec" in c or c.startswith("download ") for body in found.values() for c in body)


def test_a_here_document_of_another_language_is_not_read_as_the_launcher():
    """A Python here-document before the server (the second public store's vLLM launchers: `python3 - <<'PATCH'`
    with `if ...:` and `for ...:` lines) is another program's text: its lines open no block, and the server line
    and its branch are read after it."""
    script = """MODE=on
python3 - <<'PATCH'
for path in glob.glob("x"):
    if changed:
        print(path)
PATCH
ARGS=()
if [ "$MODE" = "on" ]; then ARGS+=(--reasoning on); fi
exec /app/llama-server -m x "${ARGS[@]}"
"""
    assert _server(script) == ["/app/llama-server", "-m", "x", "--reasoning", "on"]


def test_a_here_document_that_writes_a_shell_script_is_read_on():
    """`cat > /app/start.sh << SHEOF ... exec llama-server ... SHEOF`: the server the script it writes starts is the
    server (as the launcher reader always took it)."""
    script = """mkdir -p /app
cat > /app/start.sh << SHEOF
exec /app/llama-server -m /m/x.gguf --port 8001
SHEOF
exec python3 /app/proxy.py
"""
    assert _server(script) == ["/app/llama-server", "-m", "/m/x.gguf", "--port", "8001"]


def test_a_default_that_is_itself_a_parameter_with_a_default_is_expanded():
    """`${LLM_SPEC_DRAFT_N_MAX:-${DEFAULT_DRAFT_N:-${SPEC_DRAFT_N_MAX:-4}}}` (the second public store's
    llamacppqwen3827bmtpone): each empty or unset name falls through to the next default."""
    line = 'x --n "${A:-${B:-${C:-4}}}" --m "${A:-${B:-${C:-4}}}x"'
    assert split_words(line, {"A": ""}).words == ["x", "--n", "4", "--m", "4x"]
    assert split_words(line, {"B": "7"}).words == ["x", "--n", "7", "--m", "7x"]
    assert split_words(line, {"A": "1", "C": "9"}).words == ["x", "--n", "1", "--m", "1x"]


def test_an_array_whose_words_run_over_several_lines_is_followed():
    """`SAMPLE_ARGS=(` on one line, a word per line, `)` on its own (the second public store's
    llamacppqwen3827bmtpone), inside the `case` branch that runs."""
    script = """MODE=on
SAMPLE_ARGS=()
case "$MODE" in
  off)
    SAMPLE_ARGS=(
      --temp "${T:-0.7}"
    )
    ;;
  *)
    SAMPLE_ARGS=(
      --temp "${T:-1.0}"  # thinking
      --top-k 20
    )
    ;;
esac
exec /app/llama-server -m x "${SAMPLE_ARGS[@]}"
"""
    assert _server(script) == ["/app/llama-server", "-m", "x", "--temp", "1.0", "--top-k", "20"]


def test_an_array_left_open_costs_one_look_at_each_line():
    """A 1 MiB launcher of `A=(` followed by long words and no `)`: the lines are joined at most MAX_ARRAY_LINES at a
    time, each looked at once (joining them again per line made it quadratic)."""
    block = "A=(\n" + ("x" * 5000 + "\n") * 400
    script = (block * 3)[:2**20]
    started = time.monotonic()
    read_script(script, {}, lambda word, _exec: False)
    assert time.monotonic() - started < 5


def test_a_line_of_many_block_words_does_not_exhaust_the_stack():
    """`then do do do ...` (200,000 of them) leading one command: read up to a bound, then nothing after is decided;
    the server line is still found."""
    script = "ARGS=(--x)\nif true; then " + "do " * 200_000 + "echo\nfi\nexec /app/llama-server \"${ARGS[@]}\"\n"
    assert _server(script) == ["/app/llama-server", "--x"]
