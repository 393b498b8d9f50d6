"""The test tiers hold: `needs_llama_server` skips with its reason, CI fails on such a skip, pytest never builds
llama-server, test modules do not import each other, logic tests never read the live catalog, and the CI
entry points (.ci/run, the tests workflow) run the suite with CATALOG_REQUIRE_ALL=1 (docs/testing.md).

The tier hooks (support/tiers.py) are run for real: a pytest subprocess on a two-test file, as a developer or
CI would run it.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

from support.catalogs import EMBEDDED, MARKET_CATALOG, REPO, TESTS
from support.tiers import MARK, REQUIRE_ALL, SKIP_REASON

SAMPLE = f"""
import pytest

@pytest.mark.{MARK}
def test_needs_it():
    pass

def test_plain():
    pass
"""


def run_pytest(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """pytest with the tier hooks on the sample file in `folder`; LLAMA_SERVER and CATALOG_REQUIRE_ALL only
    as given."""
    (folder / "test_sample.py").write_text(SAMPLE)
    (folder / "pytest.ini").write_text("[pytest]\n")  # its own rootdir: not this repository's options
    clean = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER", REQUIRE_ALL, "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "support.tiers", "-p", "no:cacheprovider", "-rs",
                           "--strict-markers", *args, "test_sample.py"], cwd=folder, capture_output=True,
                          text=True, timeout=120, check=False, env={**clean, "PYTHONPATH": str(TESTS), **env})


def test_without_llama_server_it_skips_with_the_reason(tmp_path):
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert re.search(rf"^SKIPPED \[1\] test_sample\.py:\d+: {re.escape(SKIP_REASON)}$", done.stdout, re.MULTILINE)


def test_require_all_turns_the_skip_into_a_failure(tmp_path):
    done = run_pytest(tmp_path, **{REQUIRE_ALL: "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout or "1 passed, 1 error" in done.stdout
    assert f"{REQUIRE_ALL}=1 and this test {SKIP_REASON}" in done.stdout


def test_require_all_fails_when_they_are_deselected(tmp_path):
    done = run_pytest(tmp_path, "-m", f"not {MARK}", **{REQUIRE_ALL: "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_sample.py::test_needs_it (deselected)" in done.stdout


def test_require_all_fails_when_one_skips_itself(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture(autouse=True)\ndef _gone():\n    pytest.skip('went missing')\n")
    done = run_pytest(tmp_path, **{REQUIRE_ALL: "1", "LLAMA_SERVER": sys.executable})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_sample.py::test_needs_it (skipped)" in done.stdout


def test_require_all_counts_an_expected_failure_as_run(tmp_path):
    """A marked test that ran and xfailed on a known miss (tests/fit/test_realshape_server.py) did run: no failure
    (one that skips itself still fails the run, above)."""
    (tmp_path / "test_sample.py").write_text(SAMPLE.replace("def test_needs_it():\n    pass",
                                                            "def test_needs_it():\n    pytest.xfail('known miss')"))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    clean = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER", REQUIRE_ALL, "PYTEST_ADDOPTS")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "support.tiers", "-p", "no:cacheprovider", "-rs",
                           "--strict-markers", "test_sample.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False, env={**clean, "PYTHONPATH": str(TESTS), REQUIRE_ALL: "1",
                                                         "LLAMA_SERVER": sys.executable})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 xfailed" in done.stdout


def test_a_broken_llama_server_path_fails_rather_than_skips(tmp_path):
    done = run_pytest(tmp_path, LLAMA_SERVER=str(tmp_path / "no-such-llama-server"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is not an executable file" in done.stdout


def test_with_llama_server_both_run(tmp_path):
    done = run_pytest(tmp_path, **{REQUIRE_ALL: "1", "LLAMA_SERVER": sys.executable})
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr


# -- the test code ------------------------------------------------------------------------------------

def _test_sources() -> list[Path]:
    return sorted(TESTS.glob("*.py")) + sorted((TESTS / "support").glob("*.py"))


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_test_modules_do_not_import_each_other_or_conftest():
    bad = {f"{p.relative_to(TESTS)}: {name}" for p in _test_sources() for name in _imported(p)
           if name.split(".")[0] in ("conftest", "tests") or name.split(".")[0].startswith("test_")}
    assert not bad, f"move shared fixtures to conftest.py and helpers to tests/support/: {sorted(bad)}"


def _code_strings(path: Path) -> list[str]:
    """The string constants of a module, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs]


def test_no_test_builds_llama_server():
    """pytest never compiles C++: scripts/test.sh builds or finds llama-server and exports LLAMA_SERVER."""
    offenders = {p.name: s for p in _test_sources() if p.name != Path(__file__).name for s in _code_strings(p)
                 if "build-llama-server" in s or "cmake" in s.split()}
    # `catalog smoke --build-llama-server` (issue 42) is tested on a cache seeded with a copy of LLAMA_SERVER's build:
    # the packaged script finds it and reuses it, nothing is compiled (test_llama_find.py, test_install.py)
    seeded = {"test_install.py", "test_llama_find.py"}
    assert {name: s for name, s in offenders.items() if name not in seeded} == {}


def _reads_live_catalog(path: Path) -> bool:
    """Imports EMBEDDED / EMBEDDED_CHARTS, or carries the `embedded_catalog` marker."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and any(a.name.startswith("EMBEDDED") for a in node.names):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "embedded_catalog":
            return True
    return False


def test_only_the_embedded_module_reads_the_live_catalog():
    here = Path(__file__).name
    users = {p.name for p in sorted(TESTS.glob("test_*.py")) if p.name != here and _reads_live_catalog(p)}
    # Besides the health module, only the tests of the commands whose behaviour *is* the shipped catalog read it:
    # `catalog init` copies it (its tests compare the copy with the source), discovery falls back to it and refuses
    # to write into it. Neither asserts anything about the apps it holds. test_device_speeds.py holds public decode
    # speeds against the shipped devices' roofline: its subject is the shipped device data, as the health module's.
    assert users <= {"test_embedded_catalog.py", "test_init.py", "test_discovery.py", "test_device_speeds.py"}
    assert "test_embedded_catalog.py" in users


def test_the_default_catalog_is_unreachable_in_logic_tests(capsys):
    from generator.catalog import EMBEDDED as default
    from generator.cli import main

    assert default != EMBEDDED and not default.exists()
    assert main(["list"]) == 2
    assert "not a catalog" in capsys.readouterr().err


def test_the_market_fixture_is_a_catalog_with_deprecated_apps():
    from generator.catalog import load_catalog

    cat = load_catalog(MARKET_CATALOG)
    statuses = sorted(r.app.status for r in cat.apps.values())
    assert len(cat.apps) == 11 and statuses.count("deprecated") == 4


# -- CI ----------------------------------------------------------------------------------------------

def test_ci_run_requires_every_tier_and_runs_the_readme_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert f"{REQUIRE_ALL}=1 bash scripts/test.sh" in ci
    assert "apt-get update" in ci and "apt-get install" in ci
    assert ".venv/bin/ruff check generator tests scripts bench" in ci and ".venv/bin/mypy generator" in ci
    assert "bash scripts/test.sh" in (REPO / "README.md").read_text(encoding="utf-8")


def test_tests_workflow_runs_the_suite_with_the_build_cached():
    workflow = YAML(typ="safe").load((REPO / ".github" / "workflows" / "tests.yml").read_text(encoding="utf-8"))
    assert {"push", "pull_request"} <= set(workflow["on"])
    steps = workflow["jobs"]["tests"]["steps"]
    runs = [s for s in steps if "run" in s]
    test_step = next(s for s in runs if "bash scripts/test.sh" in s["run"])
    assert test_step["env"][REQUIRE_ALL] == "1"
    caches = [s for s in steps if s.get("uses", "").startswith("actions/cache")]
    assert caches and all(s["with"]["path"] == "~/.cache/catalog" for s in caches)
    assert all("hashFiles('.ci/build-llama-server.sh')" in s["with"]["key"] for s in caches)
    build = next(s for s in runs if ".ci/build-llama-server.sh" in s["run"])
    assert "LLAMA_SERVER=" in build["run"] and steps.index(build) < steps.index(test_step)
