"""Issue 40 cause 8: writers never lose each other's updates, and a failed write leaves the catalog as it was.

Every command that writes the catalog holds one catalog-wide lock (generator/core/lock.py, taken where the CLI
resolves the catalog) and runs inside one journal of its writes (generator/core/fileio.py `journal`, opened where
the CLI dispatches): concurrent `bump`s and `calibrate --write`s run one after the other, each from what the one
before left; a write that fails half-way (a full disk, as RLIMIT_FSIZE makes it, at several points) puts back
every file the command had written and names the path. Real `catalog` processes on real files."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.core import lock
from generator.versions.releases import load_releases

from support.adversarial import REPO
from support.catalogs import edit_app

FAST = "vllmqwen36turbo27bone"
EDITS = {"gemma4e2bone": {"context_length": 65536}, "gemma426ba4bone": {"context_length": 32768}}


def _cli(*args: str, preexec=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "generator.cli", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                            preexec_fn=preexec)


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _edit_three(cat: Path) -> None:
    for app, change in EDITS.items():
        edit_app(cat, app, **change)
    path = cat / "apps" / f"{FAST}.yaml"
    text = path.read_text()
    assert text.count('[--max-num-seqs, "1",') == 1
    path.write_text(text.replace('[--max-num-seqs, "1",', '[--max-num-seqs, "2",'))


def test_concurrent_bumps_keep_every_release_record(recorded):
    cat = recorded
    _edit_three(cat)
    before = {app: load_releases(cat).latest(app).version for app in (*EDITS, FAST)}
    procs = [_cli("bump", app, "--catalog", str(cat)) for app in (*EDITS, FAST)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    releases = load_releases(cat)
    for app, old in before.items():
        assert releases.latest(app).version != old, f"{app}: its release record was lost"
    changelog = (cat.parent / "CHANGELOG.md").read_text()
    assert all(f"### {app} " in changelog for app in before)
    check = subprocess.run([sys.executable, "-m", "generator.cli", "bump", "--check", "--catalog", str(cat)],
                           cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert check.returncode == 0, check.stderr


LOG = """\
(APIServer pid=1) INFO 05-04 09:58:01 [utils.py:233] non-default args: {'model': 'Lorbus/Qwen3.6-27B-int4-AutoRound', \
'max_model_len': 96000, 'gpu_memory_utilization': 0.97}
(EngineCore_DP0 pid=80) INFO 05-04 09:58:04 [core.py:110] Initializing a V1 LLM engine (v0.20.0) with config: \
model='Lorbus/Qwen3.6-27B-int4-AutoRound', speculative_config=SpeculativeConfig(method='mtp', num_spec_tokens=3)
(EngineCore_DP0 pid=80) INFO 05-04 09:59:40 [gpu_worker.py:440] Available KV cache memory: 2.97 GiB
"""


def test_four_concurrent_calibrate_writes_keep_every_row(catalog_copy, tmp_path):
    log = tmp_path / "boot.log"
    log.write_text(LOG)
    images = [f"vllm/vllm-openai:run{i}" for i in range(4)]
    procs = [_cli("calibrate", FAST, "--log", str(log), "--catalog", str(catalog_copy), "--write", "--image", image)
             for image in images]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    text = (catalog_copy / "apps" / f"{FAST}.yaml").read_text()
    assert all(image in text for image in images), "a run's rows were lost"


def test_a_second_writer_waits_for_the_first_and_says_so(recorded):
    cat = recorded
    edit_app(cat, "gemma4e2bone", context_length=65536)
    held = lock.hold(cat, "test")
    try:
        proc = _cli("bump", "--catalog", str(cat))
        time.sleep(3)
        assert proc.poll() is None, proc.stderr.read()  # it waits
        assert load_releases(cat).latest("gemma4e2bone").version == "1.0.2"  # nothing bumped meanwhile
    finally:
        lock.release(held)
    code = proc.wait(timeout=300)
    err = proc.stderr.read()
    assert code == 0, err
    assert f"waiting for another catalog command writing {cat}" in err


def _limit(size: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


@pytest.mark.parametrize("where", ["releases.yaml", "CHANGELOG.md"])
def test_a_bump_failing_half_way_leaves_everything_byte_identical(recorded, where):
    """A full disk (RLIMIT_FSIZE: writes past it fail with EFBIG) when releases.yaml, or CHANGELOG.md, is written,
    after the app files were: every file is put back, the charts untouched, and the message names the path."""
    cat = recorded
    _edit_three(cat)
    if where == "CHANGELOG.md":
        changelog = cat.parent / "CHANGELOG.md"
        changelog.write_text(changelog.read_text() + "\n" + "<!-- padding -->\n" * 800)
    root = cat.parent
    before = _tree(root)
    proc = _cli("bump", "--catalog", str(cat), preexec=_limit(6000))
    code = proc.wait(timeout=300)
    err = proc.stderr.read()
    assert code == 2, err
    assert where in err and "File too large" in err, err
    assert "error: : " not in err
    assert _tree(root) == before, "a failed bump left the store changed"


def test_a_render_failing_on_a_full_disk_names_the_path(recorded):
    cat = recorded
    edit_app(cat, "gemma4e2bone", context_length=65536)
    proc = _cli("render", "--catalog", str(cat), preexec=_limit(1000))
    code = proc.wait(timeout=300)
    err = proc.stderr.read()
    assert code == 2, err
    assert "File too large" in err and "error: : " not in err and "charts" in err, err


def test_an_import_on_a_full_disk_names_the_path_and_writes_nothing(small_catalog, tmp_path):
    sys.path.insert(0, str(REPO / "tests" / "importer"))
    import olares_charts as oc

    chart = oc.llamacpp_chart(tmp_path / "in")
    before = _tree(small_catalog)
    for size in (1, 3000):  # the first write fails; a later one fails after others were written
        proc = _cli("import", str(chart), "--catalog", str(small_catalog), preexec=_limit(size))
        code = proc.wait(timeout=300)
        err = proc.stderr.read()
        assert code == 2, err
        assert "File too large" in err and "error: : " not in err and "cannot write /" in err, err
        assert _tree(small_catalog) == before
