"""The one quote-aware splitter the importer reads launcher lines with (generator/importer/shell.py)."""

from generator.importer.shell import simple_commands, split_outside_quotes


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
