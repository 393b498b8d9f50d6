"""Issue 40 cause 1: YAML aliases in what Helm renders from a stranger's templates. Every shape of alias (sequences,
mappings, keys, across nesting levels, in the second document of a file) is refused before anything is constructed,
at its line, in time and memory linear in the text; a walk never meets a shared node."""

from __future__ import annotations

import sys
import time

import pytest

from generator.lint.helm import documents

from support.adversarial import REPO

sys.path.insert(0, str(REPO / "tests" / "importer"))
import olares_charts as oc  # noqa: E402
from test_import_attacks import _measured  # noqa: E402


def _seq_bomb(levels: int, fan: int) -> str:
    lines = ["a0: &a0 [x]"] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fan)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _map_bomb(levels: int, fan: int) -> str:
    lines = ["m0: &m0 {k: v}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{{', '.join(f'k{j}: *m{i - 1}' for j in range(fan))}}}")
    return "\n".join(lines) + "\n"


def _key_alias(levels: int, fan: int) -> str:  # an alias used as a key, and a block-style bomb
    out = ["b0: &b0\n  - x\n"]
    for i in range(1, levels):
        out.append(f"b{i}: &b{i}\n" + "".join(f"  - *b{i - 1}\n" for _ in range(fan)))
    return "".join(out) + "? *b0\n: y\n"


SHAPES = {
    "sequences 12x9": _seq_bomb(12, 9),
    "mappings 10x8": _map_bomb(10, 8),
    "block sequences and a key 8x20": _key_alias(8, 20),
    "one alias in a second document": "kind: A\n---\nkind: ConfigMap\ndata: &d {a: b}\nmore: *d\n",
    "a single harmless-looking alias": "kind: ConfigMap\nmetadata: {name: &n x}\ndata: {k: *n}\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_alias_in_rendered_output_is_refused_at_its_line(shape):
    docs, errors = documents({"templates/cm.yaml": SHAPES[shape]})
    assert errors and errors[0][0] == "templates/cm.yaml", (docs, errors)
    assert "alias" in errors[0][1] and "line" in errors[0][1]


def test_deep_nesting_in_rendered_output_is_refused():
    text = "a: " + "[" * 200 + "]" * 200 + "\n"
    _, errors = documents({"templates/deep.yaml": text})
    assert errors and "nested more than 64 levels" in errors[0][1]


def test_rendered_output_without_aliases_still_parses():
    docs, errors = documents({"templates/cm.yaml": "kind: ConfigMap\nmetadata: {name: x}\ndata: {a: '*', b: '&'}\n"
                                                   "---\nkind: Service\nmetadata: {name: y}\n"})
    assert not errors and [d.kind for d in docs] == ["ConfigMap", "Service"]


@pytest.mark.parametrize("shape", ["sequences 12x9", "mappings 10x8"])
def test_import_of_a_chart_rendering_an_alias_bomb_is_refused_fast(small_catalog, tmp_path, shape):
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  x: y\nbomb:\n" + "".join(
        "  " + line + "\n" for line in SHAPES[shape].splitlines())
    chart = oc.llamacpp_chart(tmp_path / "in", templates={"templates/bomb.yaml": body})
    code = ("from generator.cli import main\n"
            f"OUT = {{'code': main(['import', {str(chart)!r}, '--dry-run', '--catalog', {str(small_catalog)!r}])}}\n")
    out, seconds = _measured(code)
    # before: past 1.5 GB in 90 s (the sequence shape); now refused before anything is constructed
    assert out["code"] == 1, out
    assert out["rss_kib"] < 300 * 1024, out
    assert seconds < 30, seconds


@pytest.mark.parametrize("text", [SHAPES["sequences 12x9"], SHAPES["mappings 10x8"], "a: &a {x: [1]}\nb: *a\n",
                                  "a: &a [1, *a]\n"])
def test_the_content_hash_of_a_chart_data_file_refuses_an_alias_before_expanding_it(text):
    """A chart's values.yaml from outside (a PR, a market, a package) is hashed by versions/state.py: the JSON dump
    would expand every alias."""
    from generator.core.errors import InputError
    from generator.versions.state import canonical

    started = time.monotonic()
    with pytest.raises(InputError, match="alias"):
        canonical("values.yaml", text)
    assert time.monotonic() - started < 1.0
    assert canonical("values.yaml", "a: '*'\nb: [x, y]\nc: {d: e}\n") == '{"a":"*","b":["x","y"],"c":{"d":"e"}}'


@pytest.mark.parametrize("text", [SHAPES["sequences 12x9"], "id: x\n" + "y" * (2**20 + 1) + ": 1\n", "id: \xff\n"])
def test_a_hostile_draft_is_refused_before_it_is_loaded(tmp_path, text):
    """drafts/ are catalog files from whoever committed them: bounded, UTF-8, no alias (`catalog import` reads them
    back to extend them, `catalog check` lists them)."""
    from generator.importer.drafts import read_drafts

    folder = tmp_path / "drafts" / "models"
    folder.mkdir(parents=True)
    (folder / "x.yaml").write_bytes(text.encode("latin-1") if "\xff" in text else text.encode())
    started = time.monotonic()
    [draft] = read_drafts(tmp_path)
    assert time.monotonic() - started < 1.0
    assert any("unreadable" in line for line in draft.blocks), draft
