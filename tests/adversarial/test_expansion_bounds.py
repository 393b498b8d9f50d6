"""Issue 40 causes 2 and 3: every expansion (Kubernetes `$(VAR)`, shell `$X`, `${X:-default}`), argument, script and
env default a stranger's chart hands the importer is bounded in bytes before or while it is built (what Linux exec
can pass: MAX_ARG_STRLEN per argument, ARG_MAX in all), and the importer's walks over a line are linear. Shapes and
sizes other than the issue's: tripling and doubling chains, chains through defaults, long lines of many short words,
of few long words, split over continuation lines."""

from __future__ import annotations

import shutil
import sys
import time

import pytest

from generator.engines.readback import Origin
from generator.importer.shell import MAX_SCRIPT_BYTES, read_script
from generator.importer.shellwords import MAX_ARG_BYTES, MAX_ARGV_BYTES, ShellError, k8s_expand, split_words
from generator.importer.workload import _place

from support.adversarial import REPO

sys.path.insert(0, str(REPO / "tests" / "importer"))
import olares_charts as oc  # noqa: E402
from test_import_attacks import _measured  # noqa: E402


@pytest.mark.parametrize("fan", [2, 3, 7])
def test_a_kubernetes_chain_of_env_references_stops_at_the_argument_cap(fan):
    env = {"E0": "x" * 13}
    started = time.monotonic()
    with pytest.raises(ShellError, match="MAX_ARG_STRLEN"):
        for i in range(1, 60):
            env[f"E{i}"] = k8s_expand("".join(f"$(E{i - 1})" for _ in range(fan)), env)[0]
    assert time.monotonic() - started < 0.5
    assert max(map(len, env.values())) <= MAX_ARG_BYTES


@pytest.mark.parametrize("template", ['X{i}="$X{j}$X{j}"', "X{i}=${{X{j}}}${{X{j}}}${{X{j}}}",
                                      'X{i}="${{UNSET:-$X{j}$X{j}}}"', "export X{i}=$X{j}$X{j}$X{j}$X{j}"])
def test_a_shell_chain_of_assignments_stays_within_the_cap(template):
    lines = ["X0=abcdefgh"] + [template.format(i=i, j=i - 1) for i in range(1, 60)]
    script = "\n".join(lines) + '\nexec llama-server --model "$X59" --alias "$X12"\n'
    started = time.monotonic()
    parsed = read_script(script, {}, lambda word, after_exec: word == "llama-server")
    assert time.monotonic() - started < 0.5
    assert max(map(len, parsed.env.values())) <= MAX_ARG_BYTES
    assert parsed.exec_line is not None


def test_a_word_built_from_many_references_is_refused_before_it_is_joined():
    env = {"X": "y" * 100_000}
    started = time.monotonic()
    with pytest.raises(ShellError):
        split_words('"' + "$X" * 50_000 + '"', env)
    with pytest.raises(ShellError):
        split_words(" ".join(["$X"] * 40), env)  # every word within the cap, the line past ARG_MAX
    assert time.monotonic() - started < 0.5


def test_scripts_and_lines_past_what_exec_passes_are_refused_unread():
    with pytest.raises(ShellError, match="refused unread"):
        read_script("a=b\n" * (MAX_SCRIPT_BYTES // 4 + 1), {}, lambda w, a: False)
    with pytest.raises(ShellError, match="refused unread"):
        split_words("x " * (MAX_ARGV_BYTES // 2 + 1), {})


@pytest.mark.parametrize("words,width", [(250_000, 1), (40_000, 20), (400, 2_000)])
def test_a_long_exec_line_is_read_and_placed_in_linear_time(words, width):
    """A script line just under the ConfigMap cap: split and every word placed on its line in well under a second."""
    flags = " ".join(f"--f{i % 97}={'v' * width}" if i % 2 else "p" * width for i in range(words))
    line = f"exec llama-server {flags}"[: MAX_SCRIPT_BYTES - 64]
    started = time.monotonic()
    script = read_script(line + "\n", {}, lambda word, after_exec: word == "llama-server")
    assert script.exec_line is not None
    split = split_words(script.exec_line.text, script.env).words
    placed = _place(split, [], [line], script.exec_line, Origin("chart/templates/cm.yaml", 10))
    seconds = time.monotonic() - started
    # linear: before, 8,000 flags took 0.35 s and doubling them quadrupled it (250,000: minutes)
    assert len(placed) == len(split) and seconds < 2.0, seconds


def test_an_exec_line_over_continuation_lines_keeps_each_flags_line():
    physical = ["exec llama-server \\", "  --ctx-size 4096 \\", "  --alias=x \\", "  --port 8080"]
    text = "llama-server --ctx-size 4096 --alias=x --port 8080"
    script = read_script("\n".join(physical) + "\n", {}, lambda w, a: w == "llama-server")
    assert script.exec_line is not None and script.exec_line.text == text
    placed = _place(split_words(text, {}).words, [], physical, script.exec_line, Origin("f", 1))
    assert [t.origin.line for t in placed] == [1, 2, 2, 3, 4, 4]


def _run_import(chart, catalog) -> tuple[dict, float]:
    code = ("from generator.cli import main\n"
            f"OUT = {{'code': main(['import', {str(chart)!r}, '--dry-run', '--catalog', {str(catalog)!r}])}}\n")
    return _measured(code)


@pytest.mark.parametrize("size", [3 * 2**20, 200 * 1024])
def test_import_of_an_argument_past_the_exec_cap_is_refused_at_once(small_catalog, tmp_path, size):
    chart = oc.vllm_chart(tmp_path / "in", extra_args=["--served-model-name", "a " * (size // 2)])
    out, seconds = _run_import(chart, small_catalog)
    assert out["code"] == 1, out  # before: a 3 MB exec line ran past 180 s
    assert seconds < 30 and out["rss_kib"] < 400 * 1024, (seconds, out)


@pytest.mark.parametrize("words", [300_000, 25_000])
def test_import_of_an_engine_args_default_of_many_words_is_refused_fast(small_catalog, tmp_path, words):
    """The official SGLang chart (`${ENGINE_ARGS:-}` split into the argv) with an ENGINE_ARGS default of many
    words: past the argument cap it is refused unread; under it, a list past the schema's 256 entries is refused
    before a YAML node is built per word."""
    chart = tmp_path / "in" / "sglangqwen359bawq4bitv3"
    shutil.copytree(REPO / "tests" / "importer" / "fixtures" / "beclab-apps" / chart.name, chart)
    manifest = chart / "OlaresManifest.yaml"
    text = manifest.read_text()
    old = 'default: "--context-length 65536 --mem-fraction-static 0.85'
    assert old in text
    manifest.write_text(text.replace(old, 'default: "' + " ".join(f"-w{i % 10}" for i in range(words)) + " --c", 1))
    out, seconds = _run_import(chart, small_catalog)
    assert out["code"] in (0, 1), out  # before: 144 s for 300,000 words
    assert seconds < 30 and out["rss_kib"] < 400 * 1024, (seconds, out)
