"""A sync a maintainer can run every morning (issue 38): a first sync of an unrelated store removes nothing, the
owner's edits survive as conflicts against the recorded base, an unchanged upstream writes nothing, no version moves
unless the rendered chart does, and no catalog file names a path of the machine. Fixture stores are written by the
tests (tests/importer/olares_charts.py shapes over a copy of tests/fixtures/catalog_small); the importer, the Helm
engine, the catalog loader and git are real."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importer"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import olares_charts as oc  # noqa: E402
from stores import commit_all, files_of  # noqa: E402

from generator.catalog import load_catalog  # noqa: E402
from generator.cli import main  # noqa: E402
from generator.rules.paths import machine_paths  # noqa: E402
from generator.yamlio.loader import read_document  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dest = tmp_path / "store"
    shutil.copytree(FIXTURE, dest)
    return dest


def sync(store: Path, capsys, *args: str) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = main(["sync", *args, "--catalog", str(store), "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


def row(plan: dict, name: str) -> dict:
    return next(a for a in plan["apps"] if a["app"] == name)


def app_file(store: Path, name: str) -> dict:
    return read_document(store / "apps" / f"{name}.yaml").data


def edit(store: Path, name: str, old: str, new: str) -> None:
    path = store / "apps" / f"{name}.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, text)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_first_sync_of_an_unrelated_store_removes_nothing(store, tmp_path, capsys):
    """No sync record, an upstream that never had the store's apps: each is the store's own (`local`), no file but
    the new app's and the record is written."""
    own = {p: p.read_bytes() for p in (store / "apps").iterdir()}
    up = tmp_path / "other"
    oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0, err
    assert plan["summary"]["removed"] == 0
    assert {a["app"]: a["status"] for a in plan["apps"]} == {
        "gemmalab": "local", "qwenlab": "local", "qwenvisionlab": "local", "marketqwen": "new"}
    assert {p: p.read_bytes() for p in own} == own, "the store's own apps are untouched"
    assert "qwenlab" not in read_document(store / "sync.yaml").data["apps"]
    load_catalog(store)


def test_an_app_upstreams_git_history_held_is_removed_with_a_changelog_reason(store, tmp_path, capsys):
    """No sync record, but upstream's history shows the folder: upstream had it and dropped it."""
    up = tmp_path / "upgit"
    oc.llamacpp_chart(up, "qwenlab", version="1.0.0")
    commit_all(up, "add qwenlab")
    shutil.rmtree(up / "qwenlab")
    oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    head = commit_all(up, "drop qwenlab")
    clone = tmp_path / "clone"
    import subprocess

    subprocess.run(["git", "clone", "-q", str(up), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin", "https://example.org/up.git"], check=True)
    code, plan, err = sync(store, capsys, str(clone))
    assert code == 0, err
    assert row(plan, "qwenlab")["status"] == "removed"
    assert row(plan, "gemmalab")["status"] == "local"  # never in upstream's history
    reason = app_file(store, "qwenlab")["reason"]
    assert f"upstream removed it at https://example.org/up.git@{head[:12]}" in reason
    record = read_document(store / "sync.yaml").data
    assert record["upstream"] == "https://example.org/up.git" and record["commit"] == head


def test_a_deprecated_app_upstream_dropped_waits_for_prune(store, tmp_path, capsys):
    up = tmp_path / "up"
    oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    (store / "sync.yaml").write_text("upstream: https://example.org/up.git\napps:\n  qwenvisionlab:\n"
                                     "    version: 1.0.4\n")
    before = (store / "apps" / "qwenvisionlab.yaml").read_bytes()
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0, err
    assert row(plan, "qwenvisionlab")["status"] == "dropped" and "catalog prune" in row(plan, "qwenvisionlab")["detail"]
    assert (store / "apps" / "qwenvisionlab.yaml").read_bytes() == before
    assert read_document(store / "sync.yaml").data["apps"]["qwenvisionlab"]["status"] == "listed"


def first_sync(store: Path, tmp_path: Path, capsys, context: int = 65536) -> Path:
    """marketqwen 1.0.3 taken from upstream by a first sync (the record keeps upstream's fields: the merge base)."""
    up = tmp_path / "up-1"
    oc.llamacpp_chart(up, "marketqwen", context=context, version="1.0.3")
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0 and row(plan, "marketqwen")["status"] == "new", err
    base = read_document(store / "sync.yaml").data["apps"]["marketqwen"]["fields"]
    assert base["context_length"] == context
    return up


def test_an_edit_above_upstream_survives_and_shows_as_a_conflict(store, tmp_path, capsys):
    first_sync(store, tmp_path, capsys)
    edit(store, "marketqwen", "context_length: 65536", "context_length: 32768")  # the owner's edit
    up = tmp_path / "up-2"
    oc.llamacpp_chart(up, "marketqwen", context=131072, version="1.0.4", extra_args=["--no-webui"])
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0, err
    changes = {c["field"]: c for c in row(plan, "marketqwen")["changes"]}
    ctx = changes["context_length"]
    assert (ctx["kind"], ctx["ours"], ctx["theirs"]) == ("conflict", 32768, 131072)
    assert "owner's edit" in ctx["reason"]
    assert changes["args.--no-webui"]["kind"] == "lands"  # upstream's own change, ours untouched: it lands
    data = app_file(store, "marketqwen")
    assert data["context_length"] == 32768 and "--no-webui" in data["extra_args"]
    assert data["version"] == "1.0.5"
    capsys.readouterr()
    assert main(["sync", str(up), "--catalog", str(store), "--dry-run"]) == 0
    table = capsys.readouterr().out
    assert "conflict: context_length: ours 32768, upstream 131072" in table


def test_without_a_base_a_version_above_upstreams_keeps_ours(store, tmp_path, capsys):
    """The issue's case: an app at 2.0.13 with its own context above upstream's 2.0.12, no field recorded: ours."""
    first_sync(store, tmp_path, capsys)
    record = store / "sync.yaml"
    text = record.read_text()
    record.write_text(text[:text.index("    fields:")])  # a record written before bases were kept (the last block)
    assert "fields" not in read_document(record).data["apps"]["marketqwen"]
    edit(store, "marketqwen", "context_length: 65536", "context_length: 32768")
    edit(store, "marketqwen", "version: 1.0.3", "version: 2.0.13")
    up = tmp_path / "up-2"
    oc.llamacpp_chart(up, "marketqwen", context=131072, version="2.0.12")
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0, err
    ctx = next(c for c in row(plan, "marketqwen")["changes"] if c["field"] == "context_length")
    assert ctx["kind"] == "conflict" and "above upstream's" in ctx["reason"]
    assert app_file(store, "marketqwen")["context_length"] == 32768


def test_an_unchanged_resync_writes_nothing(store, tmp_path, capsys):
    up = first_sync(store, tmp_path, capsys)
    code, _, _ = sync(store, capsys, str(up))  # ours is another content at upstream's version: goes above once
    assert code == 0
    before = files_of(store)
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0, err
    assert plan["writes"] == [] and row(plan, "marketqwen")["new_version"] is None
    assert files_of(store) == before


def test_a_merge_that_keeps_all_of_ours_writes_only_the_record(store, tmp_path, capsys):
    first_sync(store, tmp_path, capsys)
    edit(store, "marketqwen", "context_length: 65536", "context_length: 32768")
    edit(store, "marketqwen", "version: 1.0.3", "version: 1.0.9")
    before = (store / "apps" / "marketqwen.yaml").read_bytes()
    up = tmp_path / "up-2"
    oc.llamacpp_chart(up, "marketqwen", context=131072, version="1.0.4")
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0, err
    assert row(plan, "marketqwen")["status"] == "kept" and row(plan, "marketqwen")["new_version"] is None
    assert [Path(w["path"]).name for w in plan["writes"]] == ["sync.yaml"]
    assert (store / "apps" / "marketqwen.yaml").read_bytes() == before
    assert read_document(store / "sync.yaml").data["apps"]["marketqwen"]["version"] == "1.0.4"


@pytest.mark.parametrize(("field", "value", "moves"), [("kv_cache_type_v", "q8_0", False),
                                                        ("context_length", 131072, True)])
def test_no_version_moves_unless_the_rendered_chart_does(store, tmp_path, capsys, field, value, moves):
    """A merge above upstream's version that lands a field the rendered chart does not show (`kv_cache_type_v` equal
    to `kv_cache_type`: the same flags) writes the field and keeps the version; a rendered change gets a new one."""
    from generator.rules.versions_upstream import load_sync
    from generator.sync import settle_versions
    from generator.sync.apply import planned_writes
    from generator.sync.plan import AppPlan, Change, SyncPlan, plain

    first_sync(store, tmp_path, capsys)
    edit(store, "marketqwen", "version: 1.0.3", "version: 1.0.9")
    cat = load_catalog(store)
    ours = plain(cat.apps["marketqwen"].app)
    merged = {**ours, field: value, "version": "1.0.10"}
    app = AppPlan("marketqwen", None, "bumped", upstream_version="1.0.4", catalog_version="1.0.9",
                  new_version="1.0.10", merged=merged, mergeable=True,
                  changes=[Change(field, "args", ours.get(field), value, "lands")])
    plan = SyncPlan("https://example.org/up.git", None, [app])
    previous = load_sync(store)
    writes = planned_writes(plan, cat, previous)
    assert settle_versions(plan, cat, writes) is (not moves)
    assert app.new_version == ("1.0.10" if moves else None)
    text = next(w.text for w in planned_writes(plan, cat, previous) if w.path.name == "marketqwen.yaml")
    assert f"version: {'1.0.10' if moves else '1.0.9'}" in text and f"{field}: {value}" in text


def test_no_catalog_file_names_a_path_of_the_machine(store, tmp_path, capsys):
    """A folder that is no clone is recorded relative to the store, with a warning; nothing written holds tmp_path."""
    (store / "sync.yaml").write_text("upstream: https://example.org/up.git\napps:\n  qwenlab:\n    version: 1.0.0\n")
    up = tmp_path / "mirror"
    oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0
    assert "nobody else can re-run this sync" in err
    record = read_document(store / "sync.yaml").data
    assert record["upstream"] == "../mirror"
    for path in store.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert str(tmp_path) not in text, path
            assert not list(machine_paths(text)), (path, list(machine_paths(text)))
    assert "upstream removed it at ../mirror" in app_file(store, "qwenlab")["reason"]


def test_check_refuses_an_absolute_machine_path_at_file_and_line(store, capsys):
    (store / "sync.yaml").write_text("upstream: /home/someone/upstream\napps: {}\n")
    edit(store, "gemmalab", "status: active", "status: active\nupgrade_description: from C:\\Users\\me\\up")
    capsys.readouterr()
    code = main(["check", "--catalog", str(store), "--no-lint", "--json"])
    found = [f for r in json.loads(capsys.readouterr().out)["apps"] for f in r["findings"] if f["rule"] == "PATH001"]
    assert code == 1
    where = sorted((Path(f["file"]).name, f["line"]) for f in found)
    assert ("sync.yaml", 1) in where and any(name == "gemmalab.yaml" for name, _ in where)
    assert len(where) == len(set(where)), "each line is reported once"


def test_container_paths_are_not_machine_paths():
    text = "env: {HF_HOME: /root/.cache/huggingface, M: /models/x.gguf}\nbin: /app/llama-server\n"
    assert list(machine_paths(text)) == []
    assert [p for _, p in machine_paths("upstream: /tmp/x\nsrc: file:///srv/up\n")] == ["/tmp/x", "file:///srv/up"]


def test_a_mirror_kept_inside_the_stores_repository_is_no_clone_of_upstream(store, tmp_path, capsys):
    """The store is a git repository with its own `origin`; a mirror folder inside it is recorded relative to the
    store (with the warning), never as the store's own remote."""
    import subprocess

    commit_all(tmp_path)  # the repository holds the store (and, untracked or not, the mirror)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "https://example.org/store.git"],
                   check=True)
    mirror = tmp_path / "mirror"
    oc.llamacpp_chart(mirror, "marketqwen", version="1.0.3")
    commit_all(tmp_path, "the mirror")
    code, _, err = sync(store, capsys, str(mirror))
    assert code == 0, err
    assert read_document(store / "sync.yaml").data["upstream"] == "../mirror"


def test_an_upstream_that_is_not_a_store_is_a_clear_error(store, tmp_path, capsys):
    empty = tmp_path / "empty"
    (empty / "docs").mkdir(parents=True)
    before = files_of(store)
    capsys.readouterr()
    code = main(["sync", str(empty), "--catalog", str(store)])
    err = capsys.readouterr().err
    assert code == 1 and "not a store" in err and "Traceback" not in err
    assert files_of(store) == before


def test_a_long_upgrade_note_upstream_fits_the_record(store, tmp_path, capsys):
    """The base keeps upstream's texts as the app does: an upgrade note of 10,000 characters (one line a version,
    the maintainer's grow so) is recorded, not a pydantic traceback."""
    up = tmp_path / "up"
    folder = oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    manifest = folder / "OlaresManifest.yaml"
    notes = "\\n".join(f"1.0.{i}: changed the flags of build {i:04d} once more" for i in range(220))
    manifest.write_text(manifest.read_text().replace("spec:\n", f"spec:\n  upgradeDescription: \"{notes}\"\n", 1))
    code, plan, err = sync(store, capsys, str(up))
    assert code == 0 and "Traceback" not in err, err
    base = read_document(store / "sync.yaml").data["apps"]["marketqwen"]["fields"]
    assert len(base["upgrade_description"]) > 8192


def test_a_git_urls_history_shows_what_upstream_had(store, tmp_path, capsys):
    """Through a git URL (a bare partial clone), the history is read too: the dropped folder is `removed`; the
    record of a `file://` URL is the folder relative to the store, with its commit."""
    up = tmp_path / "upgit"
    oc.llamacpp_chart(up, "qwenlab", version="1.0.0")
    commit_all(up, "add qwenlab")
    shutil.rmtree(up / "qwenlab")
    oc.llamacpp_chart(up, "marketqwen", version="1.0.3")
    head = commit_all(up, "drop qwenlab")
    code, plan, err = sync(store, capsys, f"file://{up}")
    assert code == 0, err
    assert row(plan, "qwenlab")["status"] == "removed" and row(plan, "gemmalab")["status"] == "local"
    record = read_document(store / "sync.yaml").data
    assert record["upstream"] == "../upgit" and record["commit"] == head
    assert f"upstream removed it at ../upgit@{head[:12]}" in app_file(store, "qwenlab")["reason"]


def test_the_issues_case_a_fresh_store_synced_with_another_store_keeps_its_app(tmp_path, capsys):
    """Issue 38's reproduction: `catalog init s`, then `catalog sync` of another store: the store's only app stays
    (`local`), its file and chart untouched, and nothing is marked removed."""
    store = tmp_path / "s"
    capsys.readouterr()
    assert main(["init", str(store), "--owner", "tester"]) == 0
    catalog = store / "catalog"
    own = {p: p.read_bytes() for p in (catalog / "apps").iterdir()}
    other = tmp_path / "other-store"
    oc.llamacpp_chart(other, "marketqwen", version="1.0.3")
    code, plan, err = sync(catalog, capsys, str(other))
    assert code == 0, err
    assert plan["summary"]["removed"] == 0
    assert row(plan, "llamacppqwen36a3bone")["status"] == "local"
    assert {p: p.read_bytes() for p in own} == own
