"""Two charts that run one image on two ports draft two stacks (docs/import.md "Drafts extend, never overwrite":
a stack draft is never merged), and the second draft says why it is not the first (issue 38 item 5: importing
github.com/coynntis/olares-one-market@cb991c8f drafted `buun-llama-cpp-87c351d2` on port 8000 and
`buun-llama-cpp-87c351d2-imported` on 8080 with no reason given). Charts are written here; Helm is real."""

from __future__ import annotations

from pathlib import Path

import olares_charts as oc

from generator.catalog import load_catalog
from generator.importer import import_paths

IMAGE = "example.org/forks/llama-fork:abc1234"


def _chart(root: Path, name: str, port: int) -> Path:
    folder = oc.llamacpp_chart(root, name)
    path = folder / "templates" / "deployment.yaml"
    text = path.read_text().replace("ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740", IMAGE)
    path.write_text(text.replace('"8080"', f'"{port}"'))
    return folder


def _header(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("# [draft]")]


def test_one_image_on_two_ports_is_two_draft_stacks_and_the_second_says_why(catalog, tmp_path):
    store = tmp_path / "store"
    report = import_paths([_chart(store, "aone", 8000), _chart(store, "atwo", 8080), _chart(store, "athree", 8080)],
                          load_catalog(catalog))
    assert report.ok, report.problems
    stacks = catalog / "drafts" / "stacks"
    assert sorted(p.name for p in stacks.iterdir()) == ["llama-fork-abc1234-imported.yaml", "llama-fork-abc1234.yaml"]
    assert not [line for line in _header(stacks / "llama-fork-abc1234.yaml") if "id llama-fork" in line]
    second = _header(stacks / "llama-fork-abc1234-imported.yaml")
    why = [line for line in second if "id llama-fork-abc1234-imported, not llama-fork-abc1234:" in line]
    assert len(why) == 1, second
    assert ("the draft stack llama-fork-abc1234 (drafts/stacks/llama-fork-abc1234.yaml) has another port (8000 there, "
            "8080 here); two images") in why[0]
    assert "Drafts extend, never overwrite" in why[0] and "image" not in why[0].split(";")[0]
    assert "from ../store/atwo, ../store/athree;" in second[0]  # the third chart (same port) shares the second


def test_a_draft_stack_on_disk_is_named_as_the_reason(catalog, tmp_path):
    assert import_paths([_chart(tmp_path / "a", "aone", 8000)], load_catalog(catalog)).ok
    first = (catalog / "drafts" / "stacks" / "llama-fork-abc1234.yaml").read_text()
    assert import_paths([_chart(tmp_path / "b", "atwo", 8080)], load_catalog(catalog)).ok
    assert (catalog / "drafts" / "stacks" / "llama-fork-abc1234.yaml").read_text() == first
    second = _header(catalog / "drafts" / "stacks" / "llama-fork-abc1234-imported.yaml")
    assert any("id llama-fork-abc1234-imported, not llama-fork-abc1234: the draft stack llama-fork-abc1234 "
               "(drafts/stacks/llama-fork-abc1234.yaml) has another port (8000 there, 8080 here)" in line
               for line in second), second
