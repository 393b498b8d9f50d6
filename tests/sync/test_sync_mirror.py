"""`catalog sync` onto a mirror of the maintainer's market (issue 23): renamed upstream names, per-app commits from
the mirror's SOURCES.tsv, charts that need drafts (merged when corrections keep the drafted fields, else kept above
upstream's version) and charts that differ at the same version. Upstream charts are written by the tests
(tests/importer/olares_charts.py shapes) against a copy of tests/fixtures/catalog_small; the importer and the Helm
engine are real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_sync import FIXTURE, app_file, app_of, oc, sync, upstream

from generator.catalog import load_catalog
from generator.cli import main
from generator.importer import import_paths
from generator.yamlio.loader import read_document

LONG_NAME = "marketqwenlongcontextvariantone"  # 31 characters: over Olares' 30 (OLARES003)
LONG_TITLE = "Qwen36 A3B Market Long Context Edition"  # 38 characters: over the schema's 30
COMMIT = "b41af142d2f6a087e1a36d659b15c3664c8f4823"
TITLE_ROW = ("corrections:\n- {app: marketqwen, field: title, ours: Qwen36 A3B Market, reason: upstream's title is over "
             "the 30 characters an Olares title holds, source: generator/schema/common.py Title}\n")


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """catalog_small plus `marketqwen`, imported from an upstream chart at 1.0.3 (as tests/sync/test_sync.py)."""
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    report = import_paths([oc.llamacpp_chart(tmp_path / "first", context=65536, version="1.0.3")], load_catalog(dest))
    assert report.ok, report.problems
    return dest


def _retitle(chart: Path, title: str) -> None:
    manifest = chart / "OlaresManifest.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("Qwen36 A3B Market", title), encoding="utf-8")


def test_an_upstream_name_the_catalog_renames_is_imported_under_the_catalogs_name(catalog, tmp_path, capsys):
    (catalog / "corrections.yaml").write_text(f"renamed:\n  {LONG_NAME}: marketqwen\n")
    up = tmp_path / "up"
    oc.llamacpp_chart(up, LONG_NAME, context=131072, version="1.0.4")
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    qwen = app_of(plan, "marketqwen")
    assert qwen["status"] == "bumped" and qwen["upstream_name"] == LONG_NAME and qwen["new_version"] == "1.0.5"
    assert app_file(catalog, "marketqwen")["context_length"] == 131072
    assert read_document(catalog / "sync.yaml").data["apps"]["marketqwen"]["upstream_name"] == LONG_NAME
    assert not any(a["app"] == LONG_NAME for a in plan["apps"])


def test_without_the_rename_the_long_name_is_an_error_naming_the_limit(catalog, tmp_path, capsys):
    up = tmp_path / "up"
    oc.llamacpp_chart(up, LONG_NAME, context=131072, version="1.0.4")
    code, plan = sync(catalog, capsys, str(up), "--dry-run")
    assert code == 0
    row = app_of(plan, LONG_NAME)
    assert row["status"] == "error" and "is not an Olares app name" in row["detail"]


def test_a_mirrors_sources_tsv_gives_each_app_the_commit_of_its_manifest(catalog, tmp_path, capsys):
    up = upstream(tmp_path, context=131072, version="1.0.4")
    (tmp_path / "SOURCES.tsv").write_text(f"marketqwen/Chart.yaml\t{'0' * 40}\n"
                                          f"marketqwen/OlaresManifest.yaml\t{COMMIT}\n")
    assert sync(catalog, capsys, str(up))[0] == 0
    assert read_document(catalog / "sync.yaml").data["apps"]["marketqwen"]["commit"] == COMMIT


def test_a_bad_sources_line_is_file_line_and_nothing_is_written(catalog, tmp_path, capsys):
    up = upstream(tmp_path, context=131072, version="1.0.4")
    (up / "SOURCES.tsv").write_text(f"marketqwen/Chart.yaml\t{COMMIT}\n"
                                    "marketqwen/OlaresManifest.yaml not-a-commit\n")
    before = {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()}
    code = main(["sync", str(up), "--catalog", str(catalog)])
    assert code == 1
    assert "SOURCES.tsv:2" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()} == before


def test_a_title_over_30_characters_kept_by_a_correction_lets_the_rest_merge(catalog, tmp_path, capsys):
    (catalog / "corrections.yaml").write_text(TITLE_ROW)
    up = upstream(tmp_path, context=131072, version="1.0.4")
    _retitle(up / "marketqwen", LONG_TITLE)
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    qwen = app_of(plan, "marketqwen")
    assert qwen["status"] == "bumped" and qwen["new_version"] == "1.0.5"
    title = next(c for c in qwen["changes"] if c["field"] == "title")
    assert title["kind"] == "conflict" and title["theirs"] == LONG_TITLE
    data = app_file(catalog, "marketqwen")
    assert data["context_length"] == 131072 and data["title"] == "Qwen36 A3B Market" and data["version"] == "1.0.5"
    assert read_document(catalog / "sync.yaml").data["apps"]["marketqwen"]["chart"].startswith("sha256:")
    load_catalog(catalog)


def test_a_chart_needing_drafts_no_correction_keeps_out_leaves_the_content_above_upstream(catalog, tmp_path, capsys):
    """Without the title row the import would point the app at a draft: the app keeps its content, only its
    version goes above upstream's, and sync.yaml records upstream's version with no digest (planned again)."""
    up = upstream(tmp_path, context=131072, version="1.0.4")
    _retitle(up / "marketqwen", LONG_TITLE)
    before = app_file(catalog, "marketqwen")
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    qwen = app_of(plan, "marketqwen")
    assert qwen["status"] == "held" and qwen["new_version"] == "1.0.5" and "title" in qwen["detail"]
    after = app_file(catalog, "marketqwen")
    assert after["version"] == "1.0.5"
    assert {k: v for k, v in after.items() if k != "version"} == {k: v for k, v in before.items() if k != "version"}
    record = read_document(catalog / "sync.yaml").data["apps"]["marketqwen"]
    assert record["version"] == "1.0.4" and record["chart"] is None


def test_a_chart_that_differs_only_by_the_catalogs_rendering_goes_above_upstreams_version(catalog, tmp_path, capsys):
    """Nothing to merge (the catalog's app is upstream's 1.0.3 import), but the catalog's rendered chart is not
    upstream's: at the same version it is `changed` and goes above it (MKT002), at a version above it is
    unchanged."""
    up = upstream(tmp_path, context=65536, version="1.0.3")
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    qwen = app_of(plan, "marketqwen")
    assert qwen["status"] == "changed" and qwen["new_version"] == "1.0.4"
    assert app_file(catalog, "marketqwen")["version"] == "1.0.4"
    code, plan = sync(catalog, capsys, str(up), "--dry-run")
    assert app_of(plan, "marketqwen")["status"] == "unchanged"


def test_a_draft_a_person_completed_is_kept_by_the_next_sync_of_the_same_upstream_version(catalog, tmp_path, capsys):
    """Drafts extend, never overwrite: a new upstream app that needs drafts (its title is over 30 characters) is
    written as a draft once; what a person then completes in it stays through a re-sync of the same upstream version,
    and the sync writes no second copy of its draft files. A new upstream version is drafted again."""
    up = tmp_path / "up"
    _retitle(oc.llamacpp_chart(up, "marketnew", context=65536, version="1.0.0"), LONG_TITLE)
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0 and app_of(plan, "marketnew")["status"] == "new"
    draft = catalog / "drafts" / "apps" / "marketnew.yaml"
    assert draft.is_file()
    edited = draft.read_text(encoding="utf-8") + "# completed by hand: the title is being shortened upstream\n"
    draft.write_text(edited, encoding="utf-8")
    before = sorted(p.relative_to(catalog) for p in (catalog / "drafts").rglob("*") if p.is_file())

    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    assert draft.read_text(encoding="utf-8") == edited
    assert sorted(p.relative_to(catalog) for p in (catalog / "drafts").rglob("*") if p.is_file()) == before

    shutil.rmtree(up)
    _retitle(oc.llamacpp_chart(up, "marketnew", context=65536, version="1.0.1"), LONG_TITLE)
    code, plan = sync(catalog, capsys, str(up))
    assert code == 0
    assert "completed by hand" not in draft.read_text(encoding="utf-8")
    assert "1.0.1" in draft.read_text(encoding="utf-8")


def test_a_mirror_that_names_its_origin_is_recorded_as_that_url(catalog, tmp_path, capsys):
    """A mirror's SOURCES.tsv `# origin: URL` (credentials stripped): the record names the repository the mirror
    copies, which anyone can sync from, not the folder of this machine; no warning. An origin that is a local path
    is `file:line`, nothing written."""
    up = upstream(tmp_path, context=131072, version="1.0.4")
    (tmp_path / "SOURCES.tsv").write_text("# origin: https://bot:ghp_PLANTED0secret@example.org/market/store.git\n"
                                          f"marketqwen/OlaresManifest.yaml\t{COMMIT}\n")
    code = main(["sync", str(up), "--catalog", str(catalog)])
    out, err = capsys.readouterr()
    assert code == 0 and "nobody else can re-run" not in err
    record = read_document(catalog / "sync.yaml").data
    assert record["upstream"] == "https://example.org/market/store.git"
    assert record["apps"]["marketqwen"]["commit"] == COMMIT
    assert "ghp_PLANTED0secret" not in out + err + (catalog / "sync.yaml").read_text()
    (tmp_path / "SOURCES.tsv").write_text("# origin: /home/me/market\n")
    before = {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()}
    assert main(["sync", str(up), "--catalog", str(catalog)]) == 1
    assert "SOURCES.tsv:1: `# origin:` names no URL another machine can reach" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()} == before


def test_a_draft_the_store_wrote_itself_is_never_overwritten_by_a_sync(catalog, tmp_path, capsys):
    """A draft no sync wrote (by hand, or `catalog new`), of an app upstream now has at another version: the sync
    keeps the store's draft byte for byte and writes none of its draft files (issue 38: a sync never loses a store's
    own work), and so does the next sync: the record does not take the store's draft for upstream's."""
    draft = catalog / "drafts" / "apps" / "marketnew.yaml"
    draft.parent.mkdir(parents=True, exist_ok=True)
    own = ("# [draft] written by hand: the model's header is not readable here yet\nname: marketnew\n"
           "title: Market New\nversion: 1.0.0\n")
    draft.write_text(own, encoding="utf-8")
    up = tmp_path / "up"
    _retitle(oc.llamacpp_chart(up, "marketnew", context=65536, version="1.0.4"), LONG_TITLE)
    for _ in range(2):  # and again: the store's draft is not recorded as upstream's, so the next sync keeps it too
        code, plan = sync(catalog, capsys, str(up))
        assert code == 0 and app_of(plan, "marketnew")["status"] == "new"
        assert draft.read_text(encoding="utf-8") == own
