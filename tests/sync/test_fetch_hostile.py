"""How sync reads a hostile upstream (issue 40 causes 4, 5 and 6): bounded reads, a partial clone that never fetches
a file over the cap, no link followed, no RecursionError, a bad chart is that app's error while the rest merges,
duplicate names and non-SemVer versions refused, a SIGTERM mid-clone leaves no folder and no process, and no
credential of the upstream's URL in any output or written file. Upstreams are written by the tests; git is real (a
local repository served through `file://`, a fake `ssh` that only sleeps for the interrupted clone)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importer"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import olares_charts as oc  # noqa: E402
from stores import GIT, commit_all, files_of  # noqa: E402

from generator.cli import main  # noqa: E402
from generator.yamlio.loader import read_document  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dest = tmp_path / "store"
    shutil.copytree(FIXTURE, dest)
    return dest


def sync(store: Path, capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["sync", *args, "--catalog", str(store), "--json"])
    out = capsys.readouterr()
    return code, out.out, out.err


def rows(out: str) -> dict[str, dict]:
    return {a["app"]: a for a in json.loads(out)["apps"]}


def two_apps(root: Path) -> Path:
    oc.llamacpp_chart(root, "marketqwen", version="1.0.3")
    oc.llamacpp_chart(root, "marketqwenb", version="1.0.0")
    return root


def test_sources_tsv_not_utf8_is_file_line_and_nothing_is_written(store, tmp_path, capsys):
    up = two_apps(tmp_path / "mirror")
    (up / "SOURCES.tsv").write_bytes(b"marketqwen/Chart.yaml\tabcdef1\n\xff\xfe bad\tabcdef1\n")
    before = files_of(store)
    code, _, err = sync(store, capsys, str(up))
    assert code == 1 and "SOURCES.tsv:2: not UTF-8" in err and "Traceback" not in err
    assert files_of(store) == before


def test_a_huge_sources_tsv_is_refused_before_it_is_read(store, tmp_path, capsys):
    up = two_apps(tmp_path / "mirror")
    with open(up / "SOURCES.tsv", "wb") as fh:
        fh.truncate(1_200_000_000)  # sparse: 1.2 GB that would be read whole
    start = time.monotonic()
    code, _, err = sync(store, capsys, str(up))
    assert code == 1 and "larger than" in err
    assert time.monotonic() - start < 30


def test_a_bad_chart_is_that_apps_error_and_the_rest_merges(store, tmp_path, capsys):
    up = two_apps(tmp_path / "up")
    manifest = up / "marketqwenb" / "OlaresManifest.yaml"
    manifest.write_text(manifest.read_text().replace("metadata:\n", "metadata:\n  title: a\n  title: b\n", 1))
    code, out, err = sync(store, capsys, str(up))
    assert code == 0, err
    found = rows(out)
    assert found["marketqwenb"]["status"] == "error" and "marketqwenb/" in found["marketqwenb"]["detail"]
    assert found["marketqwen"]["status"] == "new" and (store / "apps" / "marketqwen.yaml").is_file()


def test_a_package_linking_outside_the_upstream_is_refused(store, tmp_path, capsys):
    outside = oc.package(oc.llamacpp_chart(tmp_path / "elsewhere", "marketqwenb", version="1.0.0"),
                         tmp_path / "elsewhere" / "marketqwenb-1.0.0.tgz")
    up = tmp_path / "up"
    oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    (up / "evil.tgz").symlink_to(outside)
    code, out, err = sync(store, capsys, str(up))
    assert code == 0, err
    found = rows(out)
    assert found["evil.tgz"]["status"] == "error" and "symbolic link" in found["evil.tgz"]["detail"]
    assert not (store / "apps" / "marketqwenb.yaml").exists()


def _nest(folder: Path, depth: int) -> None:
    """`depth` folders `d/d/...` under `folder`, one level at a time (the whole path is longer than PATH_MAX)."""
    here = os.getcwd()
    try:
        os.chdir(folder)
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
    finally:
        os.chdir(here)


def _unnest(folder: Path, depth: int) -> None:
    """Remove what `_nest` made, deepest first (Python 3.11's shutil.rmtree recurses: pytest could not clean it)."""
    here = os.getcwd()
    try:
        os.chdir(folder)
        for _ in range(depth):
            os.chdir("d")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(here)


def test_deeply_nested_folders_are_no_recursion_error(store, tmp_path, capsys):
    up = two_apps(tmp_path / "up")
    templates = up / "marketqwenb" / "templates"
    _nest(templates, 1100)
    try:
        code, out, err = sync(store, capsys, str(up))
    finally:
        _unnest(templates, 1100)
    assert "RecursionError" not in err and "Traceback" not in err
    assert code == 0 and rows(out)["marketqwen"]["status"] == "new"


def test_two_folders_with_one_name_are_an_error_naming_both(store, tmp_path, capsys):
    up = tmp_path / "up"
    oc.llamacpp_chart(up, "marketqwen", context=131072, version="1.0.9")
    second = oc.llamacpp_chart(tmp_path / "other", "marketqwen", version="1.0.4")
    shutil.move(str(second), str(up / "marketqwenold"))
    before = files_of(store)
    code, _, err = sync(store, capsys, str(up))
    assert code == 1, err
    assert "marketqwen/" in err and "marketqwenold/" in err and "one app name, one chart" in err
    assert files_of(store) == before


def test_a_version_that_is_not_semver_is_that_apps_error(store, tmp_path, capsys):
    up = two_apps(tmp_path / "up")
    for rel in ("Chart.yaml", "OlaresManifest.yaml"):
        path = up / "marketqwenb" / rel
        path.write_text(path.read_text().replace("1.0.0", "latest"))
    code, out, err = sync(store, capsys, str(up))
    assert code == 0 and "Traceback" not in err and "ValidationError" not in err, err
    found = rows(out)
    assert found["marketqwenb"]["status"] == "error" and "not SemVer" in found["marketqwenb"]["detail"]
    assert found["marketqwen"]["status"] == "new"


def _repo(tmp_path: Path) -> Path:
    up = two_apps(tmp_path / "upgit")
    commit_all(up)
    subprocess.run([*GIT, "-C", str(up), "config", "uploadpack.allowFilter", "true"], check=True)
    subprocess.run([*GIT, "-C", str(up), "config", "uploadpack.allowAnySHA1InWant", "true"], check=True)
    return up


def test_a_file_over_the_cap_is_never_fetched_and_only_its_app_fails(store, tmp_path, capsys):
    up = _repo(tmp_path)
    with open(up / "marketqwenb" / "templates" / "blob.bin", "wb") as fh:
        fh.write(b"\0" * (5 * 2**20))  # over the 4 MiB a chart file may hold
    head = commit_all(up, "a big file")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    os.environ["TMPDIR"] = str(tmp)
    try:
        import tempfile

        tempfile.tempdir = None
        code, out, err = sync(store, capsys, f"file://{up}")
    finally:
        del os.environ["TMPDIR"]
        tempfile.tempdir = None
    assert code == 0, err
    found = rows(out)
    assert found["marketqwenb"]["status"] == "error" and "not fetched" in found["marketqwenb"]["detail"]
    assert found["marketqwen"]["status"] == "new"
    assert json.loads(out)["commit"] == head
    assert list(tmp.iterdir()) == [], "the temporary folder is removed"


def test_links_in_the_repository_are_never_read(store, tmp_path, capsys):
    up = _repo(tmp_path)
    secret = tmp_path / "secret.yaml"
    secret.write_text("owners:\n- stolen\n")
    (up / "marketqwenb" / "owners").unlink()
    (up / "marketqwenb" / "owners").symlink_to(secret)
    commit_all(up, "a link")
    code, out, err = sync(store, capsys, f"file://{up}")
    assert code == 0, err
    assert "stolen" not in out and not any(b"stolen" in v for v in files_of(store).values())


def _procs_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if marker in cmd:
                found.append(int(pid))
    return found


def test_sigterm_mid_clone_leaves_no_folder_and_no_git_process(store, tmp_path):
    marker = "37.251"  # the fake ssh's sleep: found in /proc while the clone waits on it
    fake = tmp_path / "fake-ssh"
    fake.write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    fake.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "GIT_SSH_COMMAND": str(fake), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "generator.cli", "sync", "ssh://example.invalid/up.git",
                             "--catalog", str(store)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not _procs_with(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _procs_with(marker), "the clone started"
        assert any(p.name.startswith("catalog-sync-") for p in tmp.iterdir())
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    time.sleep(0.2)
    assert _procs_with(marker) == [], "git and its ssh are gone"
    assert list(tmp.iterdir()) == [], "the temporary folder is removed"
    assert not (store / "sync.yaml").exists()


SECRET = "ghp_" + "S3cr3tT0ken" * 3
QUERY_SECRET = "qs3cr3tvalue"


def test_a_credential_in_the_upstream_url_appears_nowhere(store, tmp_path, capsys):
    """A clone whose `origin` carries `user:token@` and a `?token=`: the record keeps the URL less them; no output
    and no written file holds either."""
    up = _repo(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(up), str(clone)], check=True)
    url = f"https://bot:{SECRET}@example.org/up.git?token={QUERY_SECRET}&ref=main"
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin", url], check=True)
    before = files_of(store)
    outputs = []
    for args in (["--dry-run"], []):
        code, out, err = sync(store, capsys, str(clone), *args)
        assert code == 0, err
        outputs += [out, err]
        capsys.readouterr()
        assert main(["sync", str(clone), "--catalog", str(store), *args]) == 0  # the table too
        table = capsys.readouterr()
        outputs += [table.out, table.err]
    written = {p: v for p, v in files_of(store).items() if before.get(p) != v}
    assert written, "the sync wrote its record and the new apps"
    for text in outputs:
        assert SECRET not in text and QUERY_SECRET not in text and "bot:" not in text
    for path, data in written.items():
        assert SECRET.encode() not in data and QUERY_SECRET.encode() not in data, path
    assert read_document(store / "sync.yaml").data["upstream"] == "https://example.org/up.git?ref=main"


def test_a_credential_in_a_git_url_that_fails_is_never_printed(store, tmp_path, capsys):
    before = files_of(store)
    capsys.readouterr()
    code = main(["sync", f"https://bot:{SECRET}@127.0.0.1:9/up.git?token={QUERY_SECRET}", "--catalog", str(store),
                 "--timeout", "20"])
    out = capsys.readouterr()
    assert code == 2
    assert SECRET not in out.out + out.err and QUERY_SECRET not in out.out + out.err
    assert files_of(store) == before


def test_a_new_apps_speed_on_a_device_without_bandwidth_is_no_benchmark(store, tmp_path, capsys):
    """Upstream's bento hero figure (99,999,999 t/s) for a new app on a device that states no bandwidth: a conflict,
    never a benchmark `list` shows."""
    up = tmp_path / "up"
    folder = oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    manifest = folder / "OlaresManifest.yaml"
    bento = '  bento:\n    hero:\n      value: "99999999 t/s"\n      label: "speed"\n'
    manifest.write_text(manifest.read_text().replace("  categories:\n", bento + "  categories:\n", 1))
    assert "memory_bandwidth_gb_s" not in (store / "devices" / "lab-4090.yaml").read_text()
    code, out, err = sync(store, capsys, str(up))
    assert code == 0, err
    change = next(c for c in rows(out)["marketqwen"]["changes"] if c["field"] == "benchmarks")
    assert change["kind"] == "conflict" and "no memory bandwidth" in change["reason"]
    assert "benchmarks" not in read_document(store / "apps" / "marketqwen.yaml").data
    capsys.readouterr()
    assert main(["list", "--catalog", str(store), "--json"]) == 0
    listed = next(r for r in json.loads(capsys.readouterr().out) if r["name"] == "marketqwen")
    assert not listed.get("tokens_per_s")


def test_a_credential_in_upstreams_values_is_never_printed_as_theirs(store, tmp_path, capsys):
    """An upstream argument holding `user:password@` (a `?token=` the import already leaves out): the plan (table and
    --json) and every written file are without it; the import does not carry an argument with a password (it is
    left to the cluster, importer/build.py), so the app keeps no such argument either."""
    first = oc.llamacpp_chart(tmp_path / "first", "marketqwen", version="1.0.3")
    assert sync(store, capsys, str(first.parent))[0] == 0
    password = "pw123plainsecretXYZ"  # no token format: only its place in the URL says it is a secret
    url = f"https://bot:{password}@host.example/x.gguf"
    up = oc.llamacpp_chart(tmp_path / "up", "marketqwen", version="1.0.4", extra_args=["--model-url", url])
    texts = []
    for args in (["--dry-run", "--json"], ["--dry-run"], []):
        capsys.readouterr()
        code = main(["sync", str(up.parent), "--catalog", str(store), *args])
        out = capsys.readouterr()
        texts.append(out.out + out.err)
        assert code in (0, 1), out.err
    for text in texts:
        assert password not in text
    assert not any(password.encode() in v for v in files_of(store).values())
    assert not any("host.example" in str(a) for a in read_document(store / "apps" / "marketqwen.yaml").data.get(
        "extra_args", []))


def test_a_signal_during_the_writes_waits_until_every_file_is_written(store, tmp_path, capsys, monkeypatch):
    """SIGTERM after the first of the sync's files is written: it is delivered only once all are (never half a
    sync). The test's own handler records when it arrived."""
    from generator.sync import apply

    up = two_apps(tmp_path / "up")
    written: list[str] = []
    arrived: list[int] = []
    real = apply.atomic_write_text

    def write(path: Path, text: str) -> None:
        real(path, text)
        written.append(path.name)
        if len(written) == 1:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(apply, "atomic_write_text", write)
    old = signal.signal(signal.SIGTERM, lambda *_: arrived.append(len(written)))
    try:
        code, _, err = sync(store, capsys, str(up))
    finally:
        signal.signal(signal.SIGTERM, old)
    assert code == 0, err
    assert len(written) >= 3 and arrived == [len(written)], (written, arrived)


@pytest.mark.parametrize(("given", "recorded"), [
    ("https://bot:pw@host.example/m.git?token=abc&ref=main", "https://host.example/m.git?ref=main"),
    ("https://TOKEN123@host.example/m.git", "https://host.example/m.git"),
    ("https://host.example/m.git?X-Amz-Signature=s1&sig=s2", "https://host.example/m.git"),
    ("ssh://git@host.example/o/m.git", "ssh://git@host.example/o/m.git"),
    ("ssh://u:pw@host.example/o/m.git", "ssh://host.example/o/m.git"),
    ("git@host.example:o/m.git", "git@host.example:o/m.git"),
])
def test_the_record_names_a_url_less_its_credentials(given, recorded):
    from generator.sync.source import portable_url

    assert portable_url(given) == recorded


def test_a_chart_the_import_refuses_as_a_whole_is_only_that_apps_error(store, tmp_path, capsys, monkeypatch):
    """Whatever in one chart makes the import raise (rather than return that chart's error): the sync imports each
    chart alone, marks that one `error` and merges the rest. The raising is planted on one label (the importer is
    real for every other call)."""
    from generator.core.errors import InputError, Problem
    from generator.sync import plan as sync_plan

    up = two_apps(tmp_path / "up")
    real = sync_plan.import_paths

    def picky(paths, *args, **kw):  # type: ignore[no-untyped-def]
        if "marketqwenb/" in kw.get("labels", []):
            raise InputError([Problem("marketqwenb/templates/x.yaml", 3, None, "a hostile template")])
        return real(paths, *args, **kw)

    monkeypatch.setattr(sync_plan, "import_paths", picky)
    code, out, err = sync(store, capsys, str(up))
    assert code == 0, err
    found = rows(out)
    assert found["marketqwenb"]["status"] == "error" and "a hostile template" in found["marketqwenb"]["detail"]
    assert found["marketqwen"]["status"] == "new" and (store / "apps" / "marketqwen.yaml").is_file()
