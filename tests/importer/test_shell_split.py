"""The one quote-aware splitter the importer reads launcher lines with (generator/importer/shell.py)."""

import pytest

from generator.importer.shell import (
    ShellError,
    functions,
    logical_lines,
    read_script,
    simple_commands,
    split_outside_quotes,
    split_words,
)


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
    'if [ "${ENABLE:-0}" = "1" ]; then\n  SPEC=(-md /d.gguf)\nfi',
    'if [ -n "$X" ]; then SPEC+=(-md /d.gguf); fi',
    'case "$MODE" in\n  off|no) SPEC=(--reasoning off) ;;\n  *) SPEC=(--reasoning on) ;;\nesac',
    'pick() {\n  SPEC=(--x)\n}',
])
def test_an_array_set_inside_a_block_is_not_guessed(block):
    script = f"SPEC=()\n{block}\nexec /app/llama-server -m x \"${{SPEC[@]}}\"\n"
    with pytest.raises(ShellError, match="set outside any if/case/loop/function block"):
        _server(script)


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
