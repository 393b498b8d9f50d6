"""Fuzz: random YAML trees and random bytes as an app file of a copy of the small fixture catalog.

`catalog render` and `catalog check --no-lint` must end with exit 0, 1 or 2 and a message, never a
traceback ("internal error"), and write nothing outside the chosen output folder. Runs in-process
(`generator.cli.main`) to stay fast; examples are few (the suite runs on two shared cores).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.adversarial import FIXTURE, REPO, snapshot
from generator.cli import main

BASE = yaml.safe_load((FIXTURE / "apps" / "qwenlab.yaml").read_text(encoding="utf-8"))
BASE_BYTES = (FIXTURE / "apps" / "qwenlab.yaml").read_bytes()
FIELDS = [*BASE, "env", "speculative", "probe", "benchmarks", "calibration", "served_name", "genesis_patches",
          "replaced_by", "reason", "removed_on", "upgrade_description", "vision"]

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=40)
           | st.dates(min_value=dt.date(1, 1, 1)) | st.sampled_from(["", "$(HF_TOKEN)", "../../x", "a\n::error::x",
                                                                     "\x1b[31m", "1.0.0", "qwenlab", "{{ .x }}"]))
keys = st.sampled_from(FIELDS) | st.text(max_size=12)
trees = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
                     max_leaves=24)
# a valid app with one field replaced by a random tree reaches deeper than a random tree alone
mutated = st.builds(lambda key, value: {**BASE, "name": "fuzzapp", key: value}, keys, trees)
documents = trees | mutated


def _bytes_edit(data: bytes, at: int, cut: int, insert: bytes) -> bytes:
    at %= len(data) + 1
    return data[:at] + insert + data[at + cut:]


byte_files = st.binary(max_size=600) | st.builds(_bytes_edit, st.just(BASE_BYTES.replace(b"qwenlab", b"fuzzapp")),
                                                 st.integers(0, 4096), st.integers(0, 64), st.binary(max_size=24))

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def _exercise(content: bytes) -> None:
    root = Path(tempfile.mkdtemp(prefix="fuzz-"))
    cwd = os.getcwd()
    try:
        catalog = root / "catalog"
        shutil.copytree(FIXTURE, catalog)
        (catalog / "apps" / "fuzzapp.yaml").write_bytes(content)
        before = snapshot(catalog)
        os.chdir(root)
        for argv in (["render", "--catalog", str(catalog), "--out", str(root / "charts")],
                     ["check", "--no-lint", "--catalog", str(catalog)]):
            code, said = _run(argv)
            assert code in (0, 1, 2), (argv, code, said)
            assert "Traceback" not in said and "internal error" not in said, said
            assert code == 0 or said.strip(), "a failure without a message"
        assert snapshot(catalog) == before  # the catalog is input only
        assert sorted(p.name for p in root.iterdir()) in (["catalog"], ["catalog", "charts"])
    finally:
        os.chdir(cwd)
        shutil.rmtree(root, ignore_errors=True)


_REPO_STATE = {folder: os.stat(REPO / folder).st_mtime_ns for folder in ("catalog", "charts")}


@FUZZ
@given(documents)
def test_fuzz_random_yaml_trees_as_an_app_file(document):
    try:
        text = yaml.safe_dump(document, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:
        return
    _exercise(text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(byte_files)
def test_fuzz_random_bytes_as_an_app_file(content):
    _exercise(content)


def test_fuzz_never_touched_the_repository():
    assert {folder: os.stat(REPO / folder).st_mtime_ns for folder in ("catalog", "charts")} == _REPO_STATE
