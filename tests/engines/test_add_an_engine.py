"""The walkthrough of docs/architecture.md "Where to add … an engine", done for real on a copy of the code.

In a temporary copy of `generator/` (and `templates/`), a toy engine family is added exactly as the walkthrough says:
its module `generator/engines/toyllm.py` (one `FAMILY`) and its entry in the registry `generator/schema/engines.py`;
in a copy of the fixture catalog, its flag table, a stack that runs it and an app on that stack. The copied code then
loads that catalog, renders the app's chart and checks it (rules, flag table, chart lint) with the real CLI, and the
test asserts that the two files above are the only code that changed. The unpatched code refuses the same catalog
at load ("unknown engine"), so the registry entry is what makes the engine exist.

The same copy then imports the rendered chart back (`catalog import`: the stack's own chart, and one whose image no
catalog stack has, recognised by the toy's launcher program alone) and reads a boot log of the toy's own line into a
calibration row (`catalog calibrate`).

ToyLLM is a stand-in: no such server exists (it serves llama-server's argv, settings and memory model under its own
name), because what is under test is the seam, not an engine.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import load_catalog
from generator.core.errors import InputError

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "catalog_small"

TOY_MODULE = '''"""ToyLLM: a stand-in engine family for tests/engines/test_add_an_engine.py (no such server exists): it serves
llama-server's argv under its own name, prints one boot-log line of its own, and runs as `toyllm-server`."""

from __future__ import annotations

import re

from generator.catalog import Resolved
from generator.engines.base import EngineSpec, build
from generator.engines.bootlog import BootReader, Parsed, Provenance, Reading, Row, add, cal, figure, whole
from generator.engines.interface import EngineFamily, Get, Parser, Said, Server, Text, semver
from generator.engines.llamacpp import ALIASES, FAMILY as LLAMACPP, decide, own, read, supports
from generator.engines.readback import Launcher, Syntax
from generator.engines.settings import llama_settings
from generator.schema.engines import declaration

KV_LINE = re.compile(r"toyllm: KV cache ([0-9.]+) MiB for ([0-9]+) tokens")


def engine(r: Resolved) -> EngineSpec:
    return build(r, own)


def _said(said: Said, get: Get, text: Text) -> tuple[str | None, str | None, int | None]:
    return (text(said.version.get("version")) if said.version else None, None, None)


def read_boot_line(out: Parsed, line: str, number: int) -> None:
    if match := KV_LINE.search(line):
        out.engine = "toyllm"
        add(out, Reading("kv_buffer", figure(match.group(1)), number, line, context=whole(match.group(2))))


def rows(parsed: Parsed, p: Provenance) -> list[Row]:
    return [Row("app", cal("kv_buffer", r.value, f"ToyLLM: KV cache {r.value} MiB", p, context=r.context))
            for r in parsed.all("kv_buffer")]


def launcher() -> Launcher:
    return LAUNCHER


def boot() -> BootReader:
    return BOOT


LAUNCHER = Launcher(read, "--ctx-size", program=re.compile(r"^toyllm-server$"), syntax=Syntax(ALIASES))
BOOT = BootReader(read_boot_line, rows, "'toyllm: KV cache X MiB for N tokens'")
FAMILY = EngineFamily(declaration("toyllm"), engine, supports, llama_settings, decide, fit="llamacpp",
                      server=Server("ToyLLM", "toyllm", _said, semver), knobs=LLAMACPP.knobs,
                      parser=Parser(strict_ints=True),
                      allocates=True, launcher_of=launcher, boot_of=boot)
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


def add_engine(root: Path, modules: dict[str, str], registry_entry: str, catalog_files: dict[str, str]) -> Path:
    """Under `root`: a copy of the code with `modules` ({path under generator/: text}) written and `registry_entry`
    added to the registry, as the walkthrough says, and a copy of the fixture catalog with `catalog_files` ({path
    under the catalog: text}) written. Returns `root`."""
    code = root / "code"
    shutil.copytree(REPO / "generator", code / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "templates", code / "templates")
    for rel, text in modules.items():
        (code / "generator" / rel).write_text(text, encoding="utf-8")
    registry = code / "generator" / "schema" / "engines.py"
    text = registry.read_text(encoding="utf-8")
    anchor = "\n)\nENGINES"
    assert anchor in text, "the registry tuple ends where the walkthrough says"
    registry.write_text(text.replace(anchor, "\n" + registry_entry.rstrip("\n") + anchor, 1), encoding="utf-8")

    cat = root / "catalog"
    shutil.copytree(FIXTURE, cat)
    for rel, text in catalog_files.items():
        (cat / rel).parent.mkdir(exist_ok=True)
        (cat / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def added(tmp_path: Path) -> Path:
    """A copy of the code and of the fixture catalog with the toy engine added as the walkthrough says."""
    return add_engine(tmp_path, {"engines/toyllm.py": TOY_MODULE}, REGISTRY_ENTRY,
                      {"flags/toyllm-1.yaml": FLAG_TABLE, "stacks/toyllm-1.yaml": STACK,
                       "apps/toylab.yaml": _toy_app(FIXTURE)})


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


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert isinstance(found, dict)
    return found


def test_import_and_calibrate_reach_the_engine_through_its_module(added: Path) -> None:
    """`catalog import` recognises the toy's container (by the catalog stack, then by its launcher program alone)
    and reads its argv back; `catalog calibrate` reads the toy's own boot-log line: both through the module's
    `Launcher` and `BootReader`, with no other code changed."""
    code = added / "code"
    assert _changed(REPO / "generator", code / "generator") == ["engines/toyllm.py", "schema/engines.py"]
    rendered = _catalog(code, "render", "--catalog", "catalog", "--out", "charts", "toylab", cwd=added)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    (added / "catalog" / "apps" / "toylab.yaml").unlink()  # imported anew, not as an --update

    imported = _json(_catalog(code, "import", "charts/toylab", "--catalog", "catalog", "--dry-run", "--json",
                              cwd=added))["apps"][0]
    assert (imported["engine"], imported["stack"], imported["stack_draft"]) == ("toyllm", "toyllm-1", False)
    assert imported["app"]["context_length"] == 65536 and imported["app"]["kv_cache_type"] == "q4_0"
    assert imported["unmapped"] == [] and imported["missing"] == [], imported

    # an image no catalog stack has: only the launcher's program (`toyllm-server`) says which engine runs
    values = added / "charts" / "toylab" / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("example/toyllm:", "example/toyllm-nightly:"),
                      encoding="utf-8")
    drafted = _json(_catalog(code, "import", "charts/toylab", "--catalog", "catalog", "--dry-run", "--json",
                             cwd=added))
    app = drafted["apps"][0]
    assert (app["engine"], app["stack_draft"]) == ("toyllm", True), app
    assert app["app"]["context_length"] == 65536
    assert [d["kind"] for d in drafted["drafts"]] == ["stack"]

    (added / "catalog" / "apps" / "toylab.yaml").write_text(_toy_app(FIXTURE), encoding="utf-8")
    log = added / "boot.log"
    log.write_text("toyllm: starting\ntoyllm: KV cache 123.5 MiB for 4096 tokens\n", encoding="utf-8")
    rows = _json(_catalog(code, "calibrate", "toylab", "--log", "boot.log", "--catalog", "catalog", "--json",
                          cwd=added))["rows"]
    assert [(r["measure"], r["value_mib"], r["context"]) for r in rows] == [("kv_buffer", 123.5, 4096)], rows

    # a log of another engine is refused as that engine's
    log.write_text("INFO [gpu_worker.py:1] Available KV cache memory: 12.5 GiB\n", encoding="utf-8")
    other = _catalog(code, "calibrate", "toylab", "--log", "boot.log", "--catalog", "catalog", cwd=added)
    assert other.returncode != 0 and "is a vllm log, but toylab runs on toyllm" in other.stdout + other.stderr, (
        other.stdout + other.stderr)
