"""Citations a newcomer can follow: catalog and docs name public origins (repository@commit and path, a URL) or
the project's own docs, never the notes the project was started from (they are not in the repository).

docs/rules.md is generated from the rule registry in generator/rules/ (tests/test_rules_doc.py); its sources are
fixed there, not here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from support.catalogs import REPO

PRIVATE = re.compile(r"shared/|field-notes|DECISIONS|stacks\.md|machines\.md|peers\.md|olares-chart\.md")
PUBLIC = re.compile(r"github\.com/|https?://|docs/[a-z-]+\.md|bench/[a-z-]+\.md|pypi\.org/|huggingface\.co/|hub\.docker\.com/")
HAND_WRITTEN = ("apps", "models", "stacks", "devices", "genesis")


def _texts(*globs: str) -> list[Path]:
    return sorted(p for g in globs for p in REPO.glob(g))


def _private_mentions(paths: list[Path]) -> list[str]:
    return [f"{p.name}:{n}: {line.strip()[:120]}" for p in paths
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if PRIVATE.search(line)]


def test_no_catalog_file_cites_a_file_outside_the_repository():
    files = _texts("catalog/**/*.yaml", "scripts/flags/overlays/*.yaml")
    assert len(files) > 30
    assert _private_mentions(files) == []


def test_no_test_or_fixture_cites_a_file_outside_the_repository():
    files = [p for p in _texts("tests/**/*.py", "tests/**/*.yaml", "tests/**/*.md") if p.name != "test_citations.py"]
    assert len(files) > 100
    assert _private_mentions(files) == []


def test_docs_cite_public_origins():
    docs = [p for p in _texts("docs/*.md", "README.md") if p.name != "rules.md"]
    assert (REPO / "docs" / "domain.md") in docs
    assert _private_mentions(docs) == []


def _refs(node, where: str = ""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("source", "ref") and isinstance(value, str):
                yield f"{where}.{key}", value
            yield from _refs(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, f"{where}[{index}]")


@pytest.mark.parametrize("kind", HAND_WRITTEN)
def test_every_source_of_the_hand_written_catalog_is_a_public_origin(kind):
    yaml = YAML(typ="safe")
    bad = [f"{path.relative_to(REPO)} {where}: {value}"
           for path in sorted((REPO / "catalog" / kind).glob("*.yaml"))
           for where, value in _refs(yaml.load(path.read_text(encoding="utf-8")))
           if not PUBLIC.search(value)]
    assert bad == []


def test_the_check_catches_a_private_citation(tmp_path):
    sample = tmp_path / "app.yaml"
    sample.write_text("benchmarks:\n  - source: shared/domain/field-notes.md (88 t/s)\n")
    assert len(_private_mentions([sample])) == 1
    assert not PUBLIC.search("shared/domain/field-notes.md (88 t/s)")
