"""The walkthrough of docs/architecture.md "Where to add … an engine", done for real on a copy of the code.

In a temporary copy of `generator/` (and `templates/`), a toy engine family is added exactly as the walkthrough says:
its module `generator/engines/toyllm.py` (one `FAMILY`) and its entry in the registry `generator/schema/engines.py`;
in a copy of the fixture catalog, its flag table, a stack that runs it and an app on that stack. The copied code then
loads that catalog, renders the app's chart and checks it (rules, flag table, chart lint) with the real CLI, and the
test asserts that the two files above are the only code that changed. The unpatched code refuses the same catalog
at load ("unknown engine"), so the registry entry is what makes the engine exist.

ToyLLM is a stand-in: no such server exists (it serves llama-server's argv, settings and memory model under its own
name), because what is under test is the seam, not an engine.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.core.errors import InputError

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "catalog_small"

TOY_MODULE = '''"""ToyLLM: a stand-in engine family for tests/engines/test_add_an_engine.py (no such server exists): it serves
llama-server's argv under its own name."""

from __future__ import annotations

from generator.catalog import Resolved
from generator.engines.base import EngineSpec, build
from generator.engines.interface import EngineFamily, Get, Parser, Said, Server, Text, semver
from generator.engines.llamacpp import own, supports
from generator.engines.settings import llama_settings
from generator.schema.engines import declaration


def engine(r: Resolved) -> EngineSpec:
    return build(r, own)


def _said(said: Said, get: Get, text: Text) -> tuple[str | None, str | None, int | None]:
    return (text(said.version.get("version")) if said.version else None, None, None)


FAMILY = EngineFamily(declaration("toyllm"), engine, supports, llama_settings, fit="llamacpp",
                      server=Server("ToyLLM", "toyllm", _said, semver), parser=Parser(strict_ints=True),
                      allocates=True)
'''

REGISTRY_ENTRY = '    Declared("toyllm", "toyllm", gguf=True),\n'

IMAGE = "docker.io/example/toyllm:1.0.0"

FLAG_TABLE = f"""id: toyllm-1
engine: toyllm
fork: upstream
image: {IMAGE}
version: toyllm 1.0.0
provenance:
  method: generated
  generator: tests/engines/test_add_an_engine.py
  input: the toy engine's options, as this test declares them
  date: 2026-12-02
  sources:
    - ref: tests/engines/test_add_an_engine.py (test data)
syntax:
  equals_values: false
  underscores: false
  dotted_json: false
flags:
  - name: --model
  - name: --alias
  - name: --host
  - name: --port
    type: int
  - name: --ctx-size
    type: int
  - name: --cache-type-k
  - name: --cache-type-v
  - name: --n-gpu-layers
    type: int
  - name: --parallel
    type: int
  - name: --jinja
    nargs: "0"
"""

STACK = f"""id: toyllm-1
title: ToyLLM 1.0.0
engine: toyllm
fork: upstream
image: {IMAGE}
version: 1.0.0
port: 8080
command: [/app/toyllm-server]
args: [--n-gpu-layers, "99", --parallel, "1", --jinja]
flag_table: toyllm-1
sources:
  - ref: tests/engines/test_add_an_engine.py (test data)
"""


def _toy_app(fixture: Path) -> str:
    text = (fixture / "apps" / "qwenlab.yaml").read_text(encoding="utf-8")
    text = text.replace("name: qwenlab\n", "name: toylab\n").replace("stack: llamacpp-b8740\n", "stack: toyllm-1\n")
    text = text.replace("title: Qwen36 35B-A3B Lab\n", "title: Qwen36 35B-A3B Toy\n")
    return text.replace("extra_args: [--flash-attn, auto, --no-context-shift]\n", "")


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _changed(before: Path, after: Path) -> list[str]:
    """The files of `after` that are new or differ from `before` (and any `before` lost)."""
    old, new = _tree(before), _tree(after)
    changed = {f for f in old & new if not filecmp.cmp(before / f, after / f, shallow=False)}
    return sorted(changed | (new - old) | (old - new))


@pytest.fixture
def added(tmp_path: Path) -> Path:
    """A copy of the code and of the fixture catalog with the toy engine added as the walkthrough says."""
    code = tmp_path / "code"
    shutil.copytree(REPO / "generator", code / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "templates", code / "templates")
    (code / "generator" / "engines" / "toyllm.py").write_text(TOY_MODULE, encoding="utf-8")
    registry = code / "generator" / "schema" / "engines.py"
    text = registry.read_text(encoding="utf-8")
    anchor = "\n)\nENGINES"
    assert anchor in text, "the registry tuple ends where the walkthrough says"
    registry.write_text(text.replace(anchor, "\n" + REGISTRY_ENTRY.rstrip("\n") + anchor, 1), encoding="utf-8")

    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURE, cat)
    (cat / "flags").mkdir()
    (cat / "flags" / "toyllm-1.yaml").write_text(FLAG_TABLE, encoding="utf-8")
    (cat / "stacks" / "toyllm-1.yaml").write_text(STACK, encoding="utf-8")
    (cat / "apps" / "toylab.yaml").write_text(_toy_app(FIXTURE), encoding="utf-8")
    return tmp_path


def _catalog(code: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI of the copied code (`PYTHONPATH` puts it before the installed checkout)."""
    env = {**os.environ, "PYTHONPATH": str(code), "NO_COLOR": "1"}
    env.pop("CATALOG_DIR", None)
    script = ("import sys, generator; assert generator.__file__.startswith(sys.argv[1]), generator.__file__; "
              "from generator.cli import main; sys.argv = ['catalog', *sys.argv[2:]]; sys.exit(main())")
    return subprocess.run([sys.executable, "-c", script, str(code), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def test_the_walkthrough_touches_only_the_engine_module_and_the_registry(added: Path) -> None:
    code = added / "code"
    assert _changed(REPO / "generator", code / "generator") == ["engines/toyllm.py", "schema/engines.py"]
    assert _changed(FIXTURE, added / "catalog") == ["apps/toylab.yaml", "flags/toyllm-1.yaml", "stacks/toyllm-1.yaml"]

    rendered = _catalog(code, "render", "--catalog", "catalog", "--out", "charts", "toylab", cwd=added)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    values = (added / "charts" / "toylab" / "values.yaml").read_text(encoding="utf-8")
    assert IMAGE.rsplit(":", 1)[0] in values and "/app/toyllm-server" in values and "--ctx-size" in values

    checked = _catalog(code, "check", "--catalog", "catalog", "toylab", cwd=added)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 passed, 0 failed" in checked.stdout + checked.stderr

    # the flag table is read: a flag it does not list is an error of the toy's own table
    app = added / "catalog" / "apps" / "toylab.yaml"
    app.write_text(app.read_text(encoding="utf-8") + "extra_args: [--no-such-flag]\n", encoding="utf-8")
    bad = _catalog(code, "check", "--catalog", "catalog", "--no-lint", "toylab", cwd=added)
    assert bad.returncode != 0 and "--no-such-flag" in bad.stdout and "toyllm-1" in bad.stdout, bad.stdout


def test_without_the_registry_entry_the_engine_is_unknown_at_load(added: Path) -> None:
    with pytest.raises(InputError) as err:
        load_catalog(added / "catalog")  # the code of this checkout: no toyllm in its registry
    assert "toyllm-1.yaml" in str(err.value) and "unknown engine 'toyllm'" in str(err.value)
