"""`catalog sync`: upstream charts written by the tests (tests/importer/olares_charts.py shapes) against a copy of
tests/fixtures/catalog_small; the importer and the Helm engine are real, git is real (file:// URLs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importer"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import olares_charts as oc  # noqa: E402
from stores import listed  # noqa: E402

from generator.catalog import load_catalog  # noqa: E402
from generator.cli import main  # noqa: E402
from generator.importer import import_paths  # noqa: E402
from generator.yamlio.loader import read_document  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """catalog_small plus `marketqwen`, imported from an upstream chart at 1.0.3 (65,536 tokens)."""
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    first = oc.llamacpp_chart(tmp_path / "first", context=65536, version="1.0.3")
    report = import_paths([first], load_catalog(dest))
    assert report.ok, report.problems
    return dest


def upstream(tmp_path: Path, **kw: object) -> Path:
    root = tmp_path / "up"
    oc.llamacpp_chart(root, **kw)  # type: ignore[arg-type]
    return root


def sync(catalog: Path, capsys, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["sync", *args, "--catalog", str(catalog), "--json"])
    return code, json.loads(capsys.readouterr().out)


def app_of(plan: dict, name: str) -> dict:
    return next(a for a in plan["apps"] if a["app"] == name)


def app_file(catalog: Path, name: str) -> dict:
    return read_document(catalog / "apps" / f"{name}.yaml").data


def test_dry_run_reports_a_bump_per_field_and_writes_nothing(catalog, tmp_path, capsys):
    listed(catalog, "gemmalab", "qwenlab", "qwenvisionlab")
    up = upstream(tmp_path, context=131072, version="1.0.4")
    before = {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()}
    code, plan = sync(catalog, capsys, str(up), "--dry-run")
    assert code == 0
    qwen = app_of(plan, "marketqwen")
    assert qwen["status"] == "bumped" and qwen["upstream_version"] == "1.0.4" and qwen["new_version"] == "1.0.5"
    changed = {c["field"]: c for c in qwen["changes"]}
    assert changed["context_length"]["ours"] == 65536 and changed["context_length"]["theirs"] == 131072
    assert changed["context_length"]["kind"] == "lands" and changed["context_length"]["facet"] == "context"
    assert {a["app"] for a in plan["apps"] if a["status"] == "removed"} == {"gemmalab", "qwenlab"}
    assert app_of(plan, "qwenvisionlab")["status"] == "dropped", "a deprecated app leaves through prune's gate"
    assert plan["summary"]["bumped"] == 1 and plan["summary"]["removed"] == 2
    assert {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()} == before


def test_the_table_names_status_versions_and_facets(catalog, tmp_path, capsys):
    listed(catalog, "gemmalab", "qwenlab", "qwenvisionlab")
    up = upstream(tmp_path, context=131072, version="1.0.4")
    capsys.readouterr()
    assert main(["sync", str(up), "--catalog", str(catalog), "--dry-run"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("marketqwen"))
    assert row.split()[:5] == ["marketqwen", "bumped", "1.0.4", "1.0.3", "1.0.5"] and "context" in row
    assert "1 bumped" in out and "2 removed" in out and "1 dropped" in out and "dry run:" in out


def test_apply_merges_records_and_a_second_sync_is_unchanged(catalog, tmp_path, capsys):
    listed(catalog, "gemmalab", "qwenlab", "qwenvisionlab")
    up = upstream(tmp_path, context=131072, version="1.0.4")
    code, _ = sync(catalog, capsys, str(up))
    assert code == 0
    data = app_file(catalog, "marketqwen")
    assert data["context_length"] == 131072 and data["version"] == "1.0.5"
    assert app_file(catalog, "qwenlab")["status"] == "removed"
    record = read_document(catalog / "sync.yaml").data
    assert record["apps"]["marketqwen"]["version"] == "1.0.4"
    assert record["apps"]["marketqwen"]["chart"].startswith("sha256:")
    assert record["apps"]["qwenlab"]["status"] == "removed"
    load_catalog(catalog)  # the merged catalog still loads
    code, plan = sync(catalog, capsys, str(up), "--dry-run")
    assert app_of(plan, "marketqwen")["status"] == "unchanged"
    assert not [a for a in plan["apps"] if a["status"] == "removed"], "removed apps are not removed twice"


def test_a_deliberate_correction_is_kept_and_reported_as_a_conflict(catalog, tmp_path, capsys):
    (catalog / "corrections.yaml").write_text(
        "corrections:\n- {app: marketqwen, field: context_length, ours: '65536', reason: our fit says so, "
        "source: docs/fidelity.md}\n")
    up = upstream(tmp_path, context=131072, version="1.0.4")
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    change = next(c for c in app_of(plan, "marketqwen")["changes"] if c["field"] == "context_length")
    assert change["kind"] == "conflict" and change["ours"] == 65536 and change["theirs"] == 131072
    assert change["reason"] == "our fit says so"
    assert app_file(catalog, "marketqwen")["context_length"] == 65536


def test_a_measured_value_beats_a_correction_and_is_recorded_on_the_app(catalog, tmp_path, capsys):
    (catalog / "corrections.yaml").write_text(
        "corrections:\n- {app: '*', field: context_length, ours: fit, reason: modeled, source: docs/fidelity.md}\n"
        "measured:\n- {app: marketqwen, field: context_length, value: '131072', note: 131072 tokens booted and "
        "served at 240 t/s, source: a test}\n")
    up = upstream(tmp_path, context=131072, version="1.0.4")
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    change = next(c for c in app_of(plan, "marketqwen")["changes"] if c["field"] == "context_length")
    assert change["kind"] == "measured"
    data = app_file(catalog, "marketqwen")
    assert data["context_length"] == 131072
    assert data["measured"][0]["field"] == "context_length" and data["measured"][0]["value"] == "131072"


def test_a_new_upstream_app_is_planned_from_the_import(catalog, tmp_path, capsys):
    up = upstream(tmp_path, context=65536, version="1.0.3")
    oc.llamacpp_chart(up, "marketqwenlong", context=131072, version="1.0.0")
    code, plan = sync(catalog, capsys, str(up), "--dry-run")
    assert code == 0
    assert app_of(plan, "marketqwenlong")["status"] == "new"
    assert any(w["path"].endswith("apps/marketqwenlong.yaml") for w in plan["writes"])


def test_packages_and_a_git_url(catalog, tmp_path, capsys):
    up = upstream(tmp_path, context=131072, version="1.0.4")
    tgz = oc.package(up / "marketqwen", tmp_path / "marketqwen-1.0.4.tgz")
    code, plan = sync(catalog, capsys, str(tgz), "--dry-run")
    assert code == 0 and app_of(plan, "marketqwen")["status"] == "bumped"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(up)], check=True)
    subprocess.run([*git, "-C", str(up), "add", "."], check=True)
    subprocess.run([*git, "-C", str(up), "commit", "-qm", "upstream"], check=True)
    head = subprocess.run(["git", "-C", str(up), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    code, plan = sync(catalog, capsys, f"file://{up}")
    assert code == 0 and plan["commit"] == head
    assert read_document(catalog / "sync.yaml").data["apps"]["marketqwen"]["commit"] == head


def test_an_unreachable_git_url_is_an_error_and_nothing_is_written(catalog, tmp_path, capsys):
    before = {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()}
    capsys.readouterr()
    code = main(["sync", f"file://{tmp_path}/nowhere.git", "--catalog", str(catalog)])
    assert code == 2
    assert "git clone" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()} == before


def test_a_bad_corrections_file_is_file_line_and_nothing_is_written(catalog, tmp_path, capsys):
    (catalog / "corrections.yaml").write_text("corrections:\n- {app: marketqwen, field: context_length}\n")
    up = upstream(tmp_path, context=131072, version="1.0.4")
    capsys.readouterr()
    assert main(["sync", str(up), "--catalog", str(catalog)]) == 1
    assert "corrections.yaml:2" in capsys.readouterr().err
    assert not (catalog / "sync.yaml").exists()


def test_an_app_added_after_the_first_sync_is_the_catalogs_own_and_never_marked_removed(catalog, tmp_path, capsys):
    """Once catalog/sync.yaml exists, an app with no record there was never upstream's (an SGLang app written here):
    the next sync reports it `local` and leaves its file alone."""
    up = upstream(tmp_path, context=131072, version="1.0.4")
    assert sync(catalog, capsys, str(up))[0] == 0
    shutil.copy(catalog / "apps" / "marketqwen.yaml", catalog / "apps" / "ourownapp.yaml")
    own = catalog / "apps" / "ourownapp.yaml"
    own.write_text(own.read_text(encoding="utf-8").replace("name: marketqwen", "name: ourownapp"), encoding="utf-8")
    before = own.read_bytes()
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    assert app_of(plan, "ourownapp")["status"] == "local"
    assert own.read_bytes() == before
    assert "ourownapp" not in read_document(catalog / "sync.yaml").data["apps"]


def test_a_chart_that_needed_drafts_is_planned_again_by_the_next_sync(catalog, tmp_path, capsys, monkeypatch):
    """A merge that came back as a draft import records no chart digest, so the next sync plans the app again
    instead of calling it unchanged (the b11046 apps were stuck so)."""
    from generator.sync import apply as sync_apply
    from generator.sync.plan import AppPlan

    class Draft:
        status = "draft"

    plan = AppPlan("marketqwen", None, "changed", upstream_version="1.0.4", digest="sha256:" + "0" * 64,
                   imported=Draft())  # type: ignore[arg-type]
    done = AppPlan("otherapp", None, "changed", upstream_version="1.0.4", digest="sha256:" + "1" * 64)

    class Plan:
        apps = [plan, done]
        upstream, commit, subdir = "up", None, None

    record = sync_apply._record(Plan(), None)  # type: ignore[arg-type]
    assert record.apps["marketqwen"].chart is None and record.apps["otherapp"].chart == "sha256:" + "1" * 64
