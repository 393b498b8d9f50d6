"""PATH001's scan (generator/rules/paths.py): the quick test of a whole text (`MAY_HOLD`) never hides a machine path
that the line-by-line scan finds."""

from hypothesis import given, settings, strategies as st

from generator.rules.paths import MACHINE_PATH, machine_paths

FRAGMENTS = ["/home/me/x", "/Users/a", "/tmp/", "/tmp", "/work/y.yaml", "/mnt/d", "/media/u", "/private/var",
             "/var/tmp/z", "/var/folders/q", "/root/.cache/m", "/root/x", "file:///etc/x", "file://host/x", "C:\\Users\\me",
             "c:\\", "C:/x", "/models/q.gguf", "/usr/local/bin", "~/home/x", "./tmp/x", "a/home/b", "(", ")", ".", ",", ";",
             " ", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\u2028", "'", '"', "=", "x", "é", "\t", "$", "-"]


def _unfiltered(text: str) -> list[tuple[int, str]]:
    """The scan without the whole-text test: each line through MACHINE_PATH."""
    return [(n, m.group(0).rstrip(").,;")) for n, line in enumerate(text.splitlines(), 1)
            for m in MACHINE_PATH.finditer(line)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_the_whole_text_test_hides_no_machine_path(parts: list[str]) -> None:
    text = "".join(parts)
    assert list(machine_paths(text)) == _unfiltered(text)


def test_a_text_with_paths_is_scanned_line_by_line() -> None:
    text = "a: 1\nupstream: /home/me/upstream\nb: C:\\Users\\me (see file:///x).\n"
    assert list(machine_paths(text)) == [(2, "/home/me/upstream"), (3, "C:\\Users\\me"), (3, "file:///x")]
    assert list(machine_paths("models: /models/a\nbin: /usr/local/bin\n")) == []
