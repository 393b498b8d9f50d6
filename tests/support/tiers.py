"""The test tiers, as pytest hooks (tests/conftest.py imports them; docs/testing.md describes the tiers).

`@pytest.mark.needs_llama_server` marks every test that runs the built llama.cpp `llama-server`. pytest never
builds it: `scripts/test.sh` builds or finds it (.ci/build-llama-server.sh, cached in ~/.cache/catalog) and
exports `LLAMA_SERVER`.

- `LLAMA_SERVER` unset: a marked test is SKIPPED with `SKIP_REASON`.
- `LLAMA_SERVER` set to something that is not an executable file: a marked test FAILS (a broken setup is not
  a reason to skip).
- `CATALOG_REQUIRE_ALL=1` (set by `.ci/run` and the tests workflow): a marked test FAILS instead of skipping,
  and the session fails when any marked test was skipped for another reason or deselected (`-m`, `-k`), so CI
  always runs them. pytest's own exit code 5 (no test collected) fails CI as it is.
"""

from __future__ import annotations

import os

import pytest

MARK = "needs_llama_server"
REQUIRE_ALL = "CATALOG_REQUIRE_ALL"
SKIP_REASON = "needs a built llama-server: set LLAMA_SERVER or run scripts/test.sh"
MARKERS = (
    (f"{MARK}: runs the built llama.cpp llama-server ($LLAMA_SERVER); skipped without it, "
     f"a failure under {REQUIRE_ALL}=1 (.ci/run, the tests workflow)"),
    ("slow: downloads a large artefact on a cold cache (the vllm 0.19.1 wheel, ~430 MB, kept in "
     "~/.cache/catalog/vllm-wheels); `scripts/test.sh --quick` deselects it"),
    ("embedded_catalog: reads the live catalog/ and charts/ (only tests/test_embedded_catalog.py); every other "
     "test gets an unreachable embedded catalog"),
)

_missed: list[str] = []  # marked tests skipped or deselected in this session


def require_all() -> bool:
    return os.environ.get(REQUIRE_ALL, "") not in ("", "0")


def llama_server() -> str | None:
    """$LLAMA_SERVER, or None when unset or empty."""
    return os.environ.get("LLAMA_SERVER") or None


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without LLAMA_SERVER, a skip mark on each marked test (reported at the test's own line, with the reason)."""
    if llama_server() is None and not require_all():
        for item in items:
            if item.get_closest_marker(MARK) is not None:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture of a marked test runs (a module-scoped server included)."""
    if item.get_closest_marker(MARK) is None:
        return
    path = llama_server()
    if path is None:
        if require_all():
            pytest.fail(f"{REQUIRE_ALL}=1 and this test {SKIP_REASON}", pytrace=False)
        return  # skipped by its skip mark
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"LLAMA_SERVER={path!r} is not an executable file; unset it or run scripts/test.sh",
                    pytrace=False)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _missed.extend(f"{i.nodeid} (deselected)" for i in items if i.get_closest_marker(MARK))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # an expected failure ran (its server booted; it xfails on its known miss): it is not a test that did not run
    if report.skipped and MARK in report.keywords and not hasattr(report, "wasxfail"):
        _missed.append(f"{report.nodeid} (skipped)")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if require_all() and _missed and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if require_all() and _missed:
        terminalreporter.section(f"{REQUIRE_ALL}=1: {MARK} tests that did not run", sep="=", red=True)
        for line in _missed:
            terminalreporter.write_line(line)
