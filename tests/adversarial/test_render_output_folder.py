"""Attacks on `catalog render --out`: a folder that is not the tool's, kill -9, two runs at once, leftovers,
an output folder on its own filesystem, links inside the charts (failures 1, 6, 7, 15 of the issue)."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.adversarial import (  # noqa: F401 (small_catalog is a fixture)
    REPO,
    assert_clean_failure,
    cli,
    many_apps,
    popen,
    set_descriptions,
    small_catalog,
    snapshot,
)


def _a_clone(root: Path) -> Path:
    """A source checkout as a newcomer has it: the catalog beside source folders and files."""
    shutil.copytree(REPO / "tests" / "fixtures" / "catalog_small", root / "catalog")
    for folder in ("bench", "docs", "generator", "scripts", "templates", "tests"):
        (root / folder).mkdir()
        (root / folder / "keep.txt").write_text(f"{folder} source\n", encoding="utf-8")
    (root / "README.md").write_text("# readme\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    return root


def test_render_out_dot_in_a_clone_refused(tmp_path: Path):
    """Failure 1 (severe): `render --catalog catalog --out .` in a clone deleted every source folder."""
    clone = _a_clone(tmp_path / "clone")
    before = snapshot(clone)
    started = time.monotonic()
    proc = cli("render", "--catalog", "catalog", "--out", ".", cwd=clone)
    assert_clean_failure(proc, 2)
    assert "did not write" in proc.stderr and "nothing was written or deleted" in proc.stderr
    assert "removed stale" not in proc.stdout
    assert snapshot(clone) == before  # nothing deleted, nothing written
    assert time.monotonic() - started < 60


def test_render_out_foreign_folder_refused(small_catalog: Path, tmp_path: Path):
    """A folder holding a file and a folder the tool did not write is refused whole (exit 2)."""
    out = tmp_path / "mine"
    (out / "photos").mkdir(parents=True)
    (out / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 not a chart")
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = snapshot(out)
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert_clean_failure(proc, 2)
    assert "notes.txt" in proc.stderr and "photos/" in proc.stderr
    assert snapshot(out) == before


def test_render_out_foreign_folder_among_owned_charts_refused(small_catalog: Path, tmp_path: Path):
    """A folder dropped into a charts folder the tool owns is not deleted as stale: the run refuses."""
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    shutil.copytree(out / "qwenlab", out / "handmade")
    (small_catalog / "apps" / "gemmalab.yaml").unlink()  # gemmalab is now stale: it would go
    before = snapshot(out)
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert_clean_failure(proc, 2)
    assert "handmade/" in proc.stderr
    assert snapshot(out) == before  # not even the stale gemmalab went: nothing half-done


def test_render_out_symlink_entry_refused_target_untouched(small_catalog: Path, tmp_path: Path):
    """A link planted in the output folder (to a folder elsewhere) is foreign: refused, target intact."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me\n", encoding="utf-8")
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    (out / "oldapp").symlink_to(victim, target_is_directory=True)
    with (out / ".catalog-render").open("a", encoding="utf-8") as fh:
        fh.write("oldapp\n")  # even when the list names it: a link is never the tool's
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert_clean_failure(proc, 2)
    assert "oldapp" in proc.stderr
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "keep me\n"


def test_render_check_never_reads_through_a_symlink(small_catalog: Path, tmp_path: Path):
    """A link inside an owned chart folder to a secret file: --check shows the link, not the secret; render
    replaces the folder without following it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE\n", encoding="utf-8")
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    (out / "qwenlab" / "owners").unlink()
    (out / "qwenlab" / "owners").symlink_to(secret)
    proc = cli("render", "--catalog", small_catalog, "--out", out, "--check")
    assert proc.returncode == 1 and "TOP-SECRET-LINE" not in proc.stdout + proc.stderr
    assert "<symbolic link to" in proc.stdout
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert not (out / "qwenlab" / "owners").is_symlink()
    assert secret.read_text(encoding="utf-8") == "TOP-SECRET-LINE\n"


def test_render_out_legacy_charts_without_list_refused_with_hint(small_catalog: Path, tmp_path: Path):
    """Chart folders without the tool's list (written before it kept one, or copied by hand) are not
    assumed to be its own: one that differs from what this run writes is refused, with what to do."""
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    (out / ".catalog-render").unlink()
    (out / "qwenlab" / "owners").write_text("edited by hand\n", encoding="utf-8")
    before = snapshot(out)
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert_clean_failure(proc, 2)
    assert "qwenlab/" in proc.stderr and "older `catalog render`" in proc.stderr and "move the others" in proc.stderr
    assert "gemmalab" not in proc.stderr  # identical to what this run writes: not foreign
    assert snapshot(out) == before


def test_render_out_unlisted_identical_charts_taken_over(small_catalog: Path, tmp_path: Path):
    """An unlisted folder holding exactly the chart this run writes under its name loses nothing when
    replaced: render takes it over and writes its list; the charts keep their bytes."""
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    expected = snapshot(out)
    (out / ".catalog-render").unlink()
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert snapshot(out) == expected


def test_render_out_is_a_file_refused(small_catalog: Path, tmp_path: Path):
    out = tmp_path / "charts"
    out.write_text("a file\n", encoding="utf-8")
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert_clean_failure(proc, 2)
    assert out.read_text(encoding="utf-8") == "a file\n"


def test_render_removes_only_folders_it_wrote(small_catalog: Path, tmp_path: Path):
    """Its own stale folder goes; the list follows; nothing else appears beside the output folder."""
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    (small_catalog / "apps" / "gemmalab.yaml").unlink()
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "removed stale" in proc.stdout and "gemmalab" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == [".catalog-render", "qwenlab", "qwenvisionlab"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog", "charts"]


# ---- atomic under kill -9 (failure 6) ------------------------------------------------------------------

def _render_tree(catalog: Path, out: Path) -> dict[str, str]:
    proc = cli("render", "--catalog", catalog, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return snapshot(out)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".render-" in p.name or ".old-" in p.name)


def _kill_when_the_tree_starts_changing(proc: subprocess.Popen[str], watched: Path, timeout: float) -> None:
    """SIGKILL the moment the first chart folder is replaced (its inode changes): the worst moment for a
    writer that swaps folders one by one."""
    first = os.stat(watched).st_ino
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if os.stat(watched).st_ino != first:
                break
        except FileNotFoundError:
            break
    proc.kill()


def test_render_kill9_all_old_or_all_new(tmp_path: Path):
    """SIGKILL at random points of a render that rewrites every chart, and at the moment the first chart
    folder changes: the tree is always all-old or all-new (never a mixture, never a missing folder); the
    next run cleans the leftovers."""
    old_cat, new_cat = tmp_path / "old" / "catalog", tmp_path / "new" / "catalog"
    shutil.copytree(REPO / "tests" / "fixtures" / "catalog_small", old_cat)
    many_apps(old_cat, 60)
    shutil.copytree(old_cat, new_cat)
    set_descriptions(new_cat, "the new tree")
    out = tmp_path / "work" / "charts"
    trees = {"old": _render_tree(old_cat, tmp_path / "ref-old"), "new": _render_tree(new_cat, tmp_path / "ref-new")}
    assert trees["old"] != trees["new"]
    started = time.monotonic()
    assert _render_tree(old_cat, out) == trees["old"]
    full = time.monotonic() - started
    rng = random.Random(6)
    state, killed = "old", 0
    for trial in range(6):
        target = "new" if state == "old" else "old"
        proc = popen("render", "--catalog", new_cat if target == "new" else old_cat, "--out", out)
        if trial % 2:
            _kill_when_the_tree_starts_changing(proc, out / "gemmalab", timeout=10 * full + 30)
        else:
            time.sleep(rng.uniform(0.3, 1.2) * full)
            proc.kill()  # SIGKILL
        proc.wait(timeout=30)
        killed += proc.returncode == -9
        now = snapshot(out)
        assert now in (trees["old"], trees["new"]), f"trial {trial}: a mixed tree after kill -9"
        state = "old" if now == trees["old"] else "new"
    assert killed >= 3
    assert _render_tree(new_cat, out) == trees["new"]  # the next run completes and cleans up
    assert _leftovers(out.parent) == [] and _leftovers(out) == []


def test_render_leftovers_of_a_killed_run_are_cleaned_and_ignored(small_catalog: Path, tmp_path: Path):
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    planted = [tmp_path / ".charts.render-abc123", tmp_path / ".charts.old-def456" / "tree", out / ".render-x1"]
    for folder in planted:
        folder.mkdir(parents=True)
        (folder / "Chart.yaml").write_text("half\n", encoding="utf-8")
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert _leftovers(tmp_path) == [] and _leftovers(out) == []
    ignored = subprocess.run(["git", "check-ignore", "--no-index", ".charts.render-abc/", ".charts.old-x/",
                              "charts/.render-x/", "charts/.old-y/"], cwd=REPO, capture_output=True, text=True)
    assert len(ignored.stdout.split()) == 4, ignored.stdout + ignored.stderr


# ---- two runs at once (failure 7) ----------------------------------------------------------------------

def test_render_concurrent_runs_do_not_undo_each_other(tmp_path: Path):
    """Two renders of different catalogs into one folder at the same time: both succeed, one after the
    other; the tree is all of one, with no leftovers."""
    one, two = tmp_path / "one" / "catalog", tmp_path / "two" / "catalog"
    shutil.copytree(REPO / "tests" / "fixtures" / "catalog_small", one)
    many_apps(one, 20)
    shutil.copytree(one, two)
    set_descriptions(two, "catalog two")
    (two / "apps" / "qwenlab3.yaml").unlink()  # two also removes a folder one writes
    trees = [_render_tree(one, tmp_path / "ref-one"), _render_tree(two, tmp_path / "ref-two")]
    out = tmp_path / "charts"
    for _ in range(2):
        procs = [popen("render", "--catalog", cat, "--out", out) for cat in (one, two)]
        results = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], results
        assert snapshot(out) in trees
        assert _leftovers(out.parent) == [] and _leftovers(out) == []


def test_render_waits_for_a_held_lock(small_catalog: Path, tmp_path: Path):
    """While another run holds the output folder, a render waits (and says so), writes nothing, then
    completes once the folder is free."""
    out = tmp_path / "charts"
    before = _render_tree(small_catalog, out)
    set_descriptions(small_catalog, "after the wait")
    log = tmp_path / "stderr.txt"
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with log.open("w") as sink:
            proc = subprocess.Popen([sys.executable, "-m", "generator.cli", "render", "--catalog", str(small_catalog),
                                     "--out", str(out)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                                    stdout=subprocess.DEVNULL, stderr=sink)
        deadline = time.monotonic() + 60
        while "waiting for another" not in log.read_text() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert "waiting for another" in log.read_text(), log.read_text()
        time.sleep(0.5)
        assert proc.poll() is None and snapshot(out) == before
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    proc.wait(timeout=120)
    assert proc.returncode == 0, log.read_text()
    assert "after the wait" in (out / "qwenlab" / "OlaresManifest.yaml").read_text(encoding="utf-8")


# ---- an output folder on its own filesystem (failure 15) ------------------------------------------------

def test_render_out_on_its_own_filesystem_stays_on_it(tmp_path: Path):
    """charts/ as a mount point (a tmpfs in a private mount namespace): staging sits inside it, so no rename
    crosses filesystems (EXDEV); a changed chart and a stale one are handled; the result equals a render
    into an ordinary folder."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no unprivileged mount namespace here (unshare -rm)")
    one, two = tmp_path / "one" / "catalog", tmp_path / "two" / "catalog"
    shutil.copytree(REPO / "tests" / "fixtures" / "catalog_small", one)
    shutil.copytree(one, two)
    set_descriptions(two, "second run")
    (two / "apps" / "gemmalab.yaml").unlink()
    expected = _render_tree(two, tmp_path / "ref")
    out = tmp_path / "charts"
    out.mkdir()
    script = (
        'set -e; mount -t tmpfs none "$OUT"; cd "$REPO"; '
        '"$PY" -m generator.cli render --catalog "$ONE" --out "$OUT"; '
        '"$PY" -m generator.cli render --catalog "$TWO" --out "$OUT"; '
        '"$PY" -c "import json,sys; sys.path.insert(0, \'$REPO/tests\'); '
        'from support.adversarial import snapshot; from pathlib import Path; '
        'print(\'TREE=\' + json.dumps(snapshot(Path(\'$OUT\'))))"'
    )
    env = {**os.environ, "OUT": str(out), "REPO": str(REPO), "PY": sys.executable, "ONE": str(one),
           "TWO": str(two), "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Cross-device" not in proc.stderr
    tree = json.loads(proc.stdout.split("TREE=", 1)[1])
    assert tree == expected
    assert "removed stale" in proc.stdout and "gemmalab" in proc.stdout


def test_render_check_reports_a_list_that_is_not_the_rendered_one(small_catalog: Path, tmp_path: Path):
    """A chart folder committed without its line in .catalog-render: --check fails and shows the list's diff;
    render then writes the list (the folder is identical to its render) and --check passes."""
    out = tmp_path / "charts"
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    listed = out / ".catalog-render"
    listed.write_text(listed.read_text(encoding="utf-8").replace("qwenvisionlab\n", ""), encoding="utf-8")
    proc = cli("render", "--catalog", small_catalog, "--out", out, "--check")
    assert proc.returncode == 1 and "+++ b/.catalog-render" in proc.stdout and "+qwenvisionlab" in proc.stdout
    assert "qwenvisionlab/Chart.yaml" not in proc.stdout  # identical to its render: not shown as deleted
    assert cli("render", "--catalog", small_catalog, "--out", out).returncode == 0
    assert cli("render", "--catalog", small_catalog, "--out", out, "--check").returncode == 0
