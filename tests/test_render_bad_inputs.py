"""Bad catalog input: `catalog render` exits 1, names `path:line:` of the offending line with a helpful
message on stderr, and writes nothing (the charts folder stays byte-identical)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

import pytest

from generator.cli import main

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "catalog_small"


@dataclass(frozen=True)
class Case:
    id: str
    file: str  # catalog-relative file the error must name
    edit: Callable[[Path], None]  # breaks the catalog copy
    line: int | None  # expected line, None = the line holding `anchor` after the edit
    anchor: str | None
    message: str  # substring of the message


def _sub(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(cat: Path) -> None:
        path = cat / rel
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{rel}: {old!r} should occur once"
        path.write_text(text.replace(old, new), encoding="utf-8")

    return edit


def _write(rel: str, data: bytes) -> Callable[[Path], None]:
    return lambda cat: (cat / rel).write_bytes(data)


def _rename(rel: str, new: str) -> Callable[[Path], None]:
    return lambda cat: (cat / rel).rename(cat / new)


GEMMA = "apps/gemmalab.yaml"
QWEN = "apps/qwenlab.yaml"
VISION = "apps/qwenvisionlab.yaml"

CASES = [
    Case("malformed-yaml", QWEN, _sub(QWEN, "context_length: 65536\n", "context_length: [65536\n"), None,
         "kv_cache_type:", "YAML syntax error"),
    Case("duplicate-key", QWEN, _sub(QWEN, "status: active\n", "status: active\nversion: 1.0.1\n"), None,
         "version: 1.0.1", "duplicate"),
    Case("unknown-key", QWEN, _sub(QWEN, "status: active\n", "status: active\ncolour: red\n"), None, "colour:",
         "colour: unknown key"),
    Case("wrong-type", QWEN, _sub(QWEN, "context_length: 65536", 'context_length: "65536"'), None, "context_length:",
         "context_length: Input should be a valid integer"),
    Case("name-hyphen", GEMMA, _sub(GEMMA, "name: gemmalab", "name: gemma-lab"), None, "name: gemma-lab",
         "name: 'gemma-lab' does not match"),
    Case("name-uppercase", GEMMA, _sub(GEMMA, "name: gemmalab", "name: GemmaLab"), None, "name: GemmaLab",
         "name: 'GemmaLab' does not match"),
    Case("name-too-long", GEMMA, _sub(GEMMA, "name: gemmalab", "name: " + "g" * 31), None, "name: ggg",
         "does not match ^[a-z][a-z0-9]{0,29}$"),
    Case("name-reserved", GEMMA, _sub(GEMMA, "name: gemmalab", "name: kube"), None, "name: kube",
         "'kube' is reserved"),
    Case("title-too-long", QWEN, _sub(QWEN, "title: Qwen36 35B-A3B Lab", "title: " + "T" * 31), None, "title:",
         "title: String should have at most 30 characters"),
    Case("bad-semver", QWEN, _sub(QWEN, "version: 1.0.0", "version: '1.0'"), None, "version:",
         "'1.0' is not a semantic version X.Y.Z"),
    Case("pre-release", QWEN, _sub(QWEN, "version: 1.0.0", "version: 1.0.0-rc.1"), None, "version:",
         "no pre-release"),
    Case("unknown-model", QWEN, _sub(QWEN, "model: qwen36-35b-a3b", "model: qwen99"), None, "model: qwen99",
         "unknown model 'qwen99'; known: gemma4-e4b, qwen36-35b-a3b"),
    Case("unknown-stack", QWEN, _sub(QWEN, "stack: llamacpp-b8740", "stack: llamacpp-b1"), None, "stack:",
         "unknown stack 'llamacpp-b1'"),
    Case("unknown-device", QWEN, _sub(QWEN, "device: lab-4090", "device: lab-5090"), None, "device:",
         "unknown device 'lab-5090'; known: lab-4090"),
    Case("unknown-quantization", QWEN, _sub(QWEN, "quantization: ud-q4kxl", "quantization: q2k"), None,
         "quantization:", "has no quantization 'q2k'; known: ud-q4kxl"),
    Case("unknown-drafter", GEMMA, _sub(GEMMA, "drafter: assistant}", "drafter: eagle3}"), None, "speculative:",
         "speculative.drafter: model 'gemma4-e4b' has no drafter 'eagle3'"),
    Case("unknown-genesis-patch", GEMMA, _sub(GEMMA, "status: active\n", "status: active\ngenesis_patches:\n  - P5\n"
                                                "  - P999\n"), None, "  - P999", "unknown Genesis patch 'P999'"),
    Case("replaced-by-unknown", VISION, _sub(VISION, "replaced_by: qwenlab", "replaced_by: qwenlab2"), None,
         "replaced_by:", "replaced_by: unknown app 'qwenlab2'"),
    Case("deprecated-without-reason", VISION,
         _sub(VISION, "reason: the text-only app is faster; vision is rarely used on this device.\n", ""), None,
         "status: deprecated", "status 'deprecated' needs a `reason`"),
    Case("file-name-differs", "apps/visionlab.yaml", _rename(VISION, "apps/visionlab.yaml"), None, "name: qwenvisionlab",
         "app name 'qwenvisionlab' must equal the file name 'visionlab'"),
    Case("not-utf8", QWEN, _write(QWEN, b"name: qwenlab\ntitle: Caf\xe9 Lab\n"), 2, None, "not UTF-8"),
    Case("empty-file", QWEN, _write(QWEN, b""), 1, None, "the file is empty"),
    Case("top-level-list", QWEN, _write(QWEN, b"- name: qwenlab\n- title: Qwen\n"), 1, None,
         "expected a mapping of App fields, got a list"),
    Case("bad-model-file", "models/qwen36-35b-a3b.yaml",
         _sub("models/qwen36-35b-a3b.yaml", "  layers: 40\n", "  layers: 41\n"), None, "architecture:",
         "but layers is 41"),
    Case("bad-quantity", QWEN, _sub(QWEN, 'cpu_request: "4"', 'cpu_request: "4 cores"'), None, "resources:",
         "resources.cpu_request: '4 cores' does not match"),
]


def _line(cat: Path, case: Case) -> int:
    if case.line is not None:
        return case.line
    lines = (cat / case.file).read_text(encoding="utf-8").splitlines()
    hits = [n for n, text in enumerate(lines, start=1) if case.anchor in text]
    assert len(hits) == 1, f"anchor {case.anchor!r} should match one line"
    return hits[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """The fixture catalog and its charts, rendered once per module."""
    root = tmp_path_factory.mktemp("bad-inputs")
    shutil.copytree(FIXTURE, root / "catalog")
    assert main(["render", "--catalog", str(root / "catalog")]) == 0
    return root


@pytest.fixture
def workspace(rendered: Path, tmp_path: Path, monkeypatch) -> Path:
    """tmp_path/catalog (a copy of the fixture) with its charts rendered; cwd = tmp_path."""
    for name in ("catalog", "charts"):
        shutil.copytree(rendered / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_at_least_fifteen_cases():
    assert len(CASES) >= 15 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_reported_at_its_line_and_nothing_is_written(workspace, capsys, case):
    charts = workspace / "charts"
    before = snapshot(charts)
    case.edit(workspace / "catalog")
    capsys.readouterr()
    assert main(["render", "--catalog", "catalog"]) == 1
    err = capsys.readouterr().err
    where = f"catalog/{case.file}:{_line(workspace / 'catalog', case)}: "
    matching = [line for line in err.splitlines() if line.startswith(where)]
    assert matching, f"no line starts with {where!r}:\n{err}"
    assert any(case.message in line for line in matching), err
    assert "nothing was written" in err
    assert snapshot(charts) == before
    assert sorted(p.name for p in workspace.iterdir()) == ["catalog", "charts"]  # no temporary folders


@pytest.mark.parametrize("case", CASES[:3], ids=[c.id for c in CASES[:3]])
def test_check_reports_bad_input_the_same_way(workspace, capsys, case):
    case.edit(workspace / "catalog")
    capsys.readouterr()
    assert main(["render", "--check", "--catalog", "catalog"]) == 1
    assert f"catalog/{case.file}:" in capsys.readouterr().err
