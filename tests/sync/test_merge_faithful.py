"""A faithful merge: the fields upstream's chart cannot express stay, upgrade notes are merged, typed values stay
typed, and the merged catalog is validated before anything is written. Upstream charts are written by the tests
(tests/importer/olares_charts.py shapes) against a copy of tests/fixtures/catalog_small; the importer, the Helm
engine and the catalog loader are real."""

from __future__ import annotations

import json
import shutil
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
from generator.core.errors import InputError  # noqa: E402
from generator.sync.apply import Write, validate  # noqa: E402
from generator.sync.plan import merge_notes  # noqa: E402
from generator.yamlio.loader import read_document  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog_small"
BENCH = ("benchmarks:\n- tokens_per_s: 120.5\n  date: 2026-05-08\n  method: llama-bench tg128\n"
         "  source: a test's own figure\n")
ROOM = "gpu_room: {mib: 3670, beside: a TTS app, source: a test}\n"
OURS_NOTES = "upgrade_description: |-\n  1.0.3: our own note, kept\n  1.0.2: an older note of ours\n"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    first = oc.llamacpp_chart(tmp_path / "first", context=65536, version="1.0.3")
    report = import_paths([first], load_catalog(dest))
    assert report.ok, report.problems
    path = dest / "apps" / "marketqwen.yaml"
    path.write_text(path.read_text() + ROOM + OURS_NOTES + BENCH)
    load_catalog(dest)
    return dest


def upstream(tmp_path: Path, notes: str | None = None, **kw: object) -> Path:
    root = tmp_path / "up"
    folder = oc.llamacpp_chart(root, **kw)  # type: ignore[arg-type]
    if notes:
        manifest = folder / "OlaresManifest.yaml"
        manifest.write_text(manifest.read_text().replace("spec:\n", f"spec:\n  upgradeDescription: {notes!r}\n", 1))
    return root


def run(catalog: Path, capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["sync", *args, "--catalog", str(catalog)])
    out = capsys.readouterr()
    return code, out.out, out.err


def app_file(catalog: Path, name: str) -> dict:
    return read_document(catalog / "apps" / f"{name}.yaml").data


def test_a_field_upstream_cannot_express_stays(catalog, tmp_path, capsys):
    code, _, _ = run(catalog, capsys, str(upstream(tmp_path, context=131072, version="1.0.4")))
    assert code == 0
    data = app_file(catalog, "marketqwen")
    assert data["context_length"] == 131072  # upstream's change lands
    assert data["gpu_room"] == {"mib": 3670, "beside": "a TTS app", "source": "a test"}  # ours stays


def test_gpu_room_is_not_reported_as_a_change(catalog, tmp_path, capsys):
    capsys.readouterr()
    main(["sync", str(upstream(tmp_path, context=131072, version="1.0.4")), "--catalog", str(catalog),
          "--dry-run", "--json"])
    plan = json.loads(capsys.readouterr().out)
    app = next(a for a in plan["apps"] if a["app"] == "marketqwen")
    assert "gpu_room" not in {c["field"] for c in app["changes"]}


def test_upstream_notes_are_merged_with_ours_never_erasing_our_history(catalog, tmp_path, capsys):
    up = upstream(tmp_path, notes="1.0.4: upstream's new note", context=131072, version="1.0.4")
    code, _, _ = run(catalog, capsys, str(up))
    assert code == 0
    notes = app_file(catalog, "marketqwen")["upgrade_description"].splitlines()
    assert notes == ["1.0.4: upstream's new note", "1.0.3: our own note, kept", "1.0.2: an older note of ours"]


def test_a_chart_without_notes_keeps_ours(catalog, tmp_path, capsys):
    code, _, _ = run(catalog, capsys, str(upstream(tmp_path, context=131072, version="1.0.4")))
    assert code == 0
    assert "1.0.2: an older note of ours" in app_file(catalog, "marketqwen")["upgrade_description"]


def test_merge_notes_adds_only_what_ours_lacks():
    assert merge_notes("b\na", "c\nb\na") == "c\nb\na"
    assert merge_notes("b\na", "b") == "b\na"
    assert merge_notes(None, "x") == "x" and merge_notes("x", None) == "x"


def test_typed_values_stay_typed_and_untouched_fields_are_byte_identical(catalog, tmp_path, capsys):
    path = catalog / "apps" / "marketqwen.yaml"
    code, _, _ = run(catalog, capsys, str(upstream(tmp_path, context=131072, version="1.0.4")))
    assert code == 0
    text = path.read_text()
    assert BENCH in text, "the benchmark block is kept as written (a date, no `runs: []` or `context:`)"
    assert "runs:" not in text and "'2026-05-08'" not in text
    load_catalog(catalog)  # the schema accepts the merged file


def test_a_removed_app_keeps_its_typed_fields(catalog, tmp_path, capsys):
    lab = catalog / "apps" / "qwenlab.yaml"
    lab.write_text(lab.read_text() + BENCH)
    listed(catalog, "qwenlab")
    code, _, _ = run(catalog, capsys, str(upstream(tmp_path, context=131072, version="1.0.4")))
    assert code == 0
    text = lab.read_text()
    assert BENCH in text and "status: removed" in text and "runs:" not in text
    load_catalog(catalog)


def test_a_replacement_removed_by_the_same_sync_is_not_left_dangling(catalog, tmp_path, capsys):
    """gemmalab (deprecated, replaced by qwenlab) and qwenlab both left upstream: qwenlab is removed; gemmalab, being
    deprecated, waits for prune's gate, and no longer names the removed qwenlab."""
    gemma = catalog / "apps" / "gemmalab.yaml"
    text = gemma.read_text().replace("status: active", "status: deprecated\nreplaced_by: qwenlab\n"
                                     "reason: superseded in a test")
    gemma.write_text(text)
    listed(catalog, "gemmalab", "qwenlab")
    load_catalog(catalog)
    code, _, err = run(catalog, capsys, str(upstream(tmp_path, context=131072, version="1.0.4")))
    assert code == 0, err
    data = app_file(catalog, "gemmalab")
    assert data["status"] == "deprecated" and "replaced_by" not in data
    assert "its replacement qwenlab was removed by upstream at" in data["reason"]
    assert app_file(catalog, "qwenlab")["status"] == "removed"
    load_catalog(catalog)


def test_writes_the_schema_refuses_are_file_line_and_nothing_is_written(catalog):
    """The gate `sync` runs before its first write: the planned texts laid over a copy of the catalog, loaded."""
    path = catalog / "apps" / "marketqwen.yaml"
    before = {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()}
    bad = path.read_text().replace("date: 2026-05-08", "date: '2026-05-08'")
    with pytest.raises(InputError) as exc:
        validate(load_catalog(catalog), [Write(path, bad, "changed")])
    problem = exc.value.problems[0]
    assert problem.file and problem.file.endswith("apps/marketqwen.yaml") and problem.line
    assert "benchmarks.0.date" in str(problem) and "nothing was written" in str(problem)
    assert {p: p.read_bytes() for p in catalog.rglob("*") if p.is_file()} == before


def test_the_version_above_upstream_is_above_both_of_its_versions(catalog, tmp_path, capsys):
    """The maintainer's Chart.yaml version can run ahead of metadata.version (1.0.18 beside 1.0.16): the merged app
    goes above the higher one, and the sync record keeps it."""
    up = upstream(tmp_path, context=131072, version="1.0.4")
    chart_yaml = up / "marketqwen" / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: '1.0.4'", "version: '1.0.9'")
                          .replace("version: 1.0.4", "version: 1.0.9"))
    code, _, err = run(catalog, capsys, str(up))
    assert code == 0, err
    assert app_file(catalog, "marketqwen")["version"] == "1.0.10"
    assert read_document(catalog / "sync.yaml").data["apps"]["marketqwen"]["version"] == "1.0.9"
