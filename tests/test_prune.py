"""`catalog prune --deprecated` on a copy of the market fixture and its rendered charts.

The gate: the four deprecated Qwen3.6 27B apps go only once their replacements ("Fast"
vllmqwen36turbo27bone 2.5.6 and "Long" llamacppqwen36mtpone) have a passing smoke for their current
chart version. The passing smokes are written to the ledger through its own writer
(`generator.smoke.ledger.append`), as `catalog smoke` writes them; that `catalog smoke` records what a real
server answered is proven against a real llama-server in test_smoke_llama.py.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.prune.gate import plan
from generator.smoke.identity import ServedIdentity, chart_content
from generator.smoke.ledger import SmokeRecord, append, history

from support.catalogs import MARKET_CATALOG
from support.smoke import run_cli

DEPRECATED = {"dflashqwen36one", "llamacppqwen36dense27bone", "lucedflashqwen36one", "vllmqwen36dense27bone"}
FAST, LONG = "vllmqwen36turbo27bone", "llamacppqwen36mtpone"


@pytest.fixture
def workspace(rendered_copy: Path) -> Path:
    """catalog/ and its rendered charts/ side by side, as in a store repository."""
    return rendered_copy


def snapshot(*folders: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


CONTENT = {FAST: "sha256:" + "f" * 64, LONG: "sha256:" + "1" * 64}  # the pure plan's stand-in content hashes
REASONS = {"fail": "run 1: degenerate output", "regression": "60.0 t/s is 31.0% below the baseline",
           "suspect": "181.6 t/s is above 70.0 t/s, the fastest this app can decode",
           "error": "could not measure: GET /health: ConnectError: [Errno 111] Connection refused"}


def row(app: str, version: str, verdict: str = "pass", date: str = "2026-11-29T12:00:00Z", *,
        content: str | None = None, matched: tuple[str, ...] = ("engine", "model", "context")) -> SmokeRecord:
    """A ledger row as `catalog smoke` writes it: the chart's content hash and the identity fields that matched."""
    return SmokeRecord(app=app, endpoint="http://127.0.0.1:8000", chart_version=version, image="img", date=date,
                       runs=(), tokens_per_s=90.0, acceptance=0.6, baseline_tokens_per_s=88.0, verdict=verdict,
                       reasons=() if verdict == "pass" else (REASONS[verdict],),
                       chart_content=content or CONTENT[app], identity_matched=matched,
                       identity=ServedIdentity(engine="vllm" if app == FAST else "llamacpp"))


def pure_plan(ledgers):
    return {i.app: i for i in plan(load_catalog(MARKET_CATALOG), ledgers, lambda r: CONTENT[r.app.name])}


# --- the plan (pure) ---------------------------------------------------------------------------

def test_plan_needs_a_pass_for_the_current_chart_version():
    ledgers = {FAST: [row(FAST, "2.5.5")], LONG: [row(LONG, "1.0.4"), row(LONG, "1.0.4", "fail")]}
    items = pure_plan(ledgers)
    assert set(items) == DEPRECATED and not any(i.pruned for i in items.values())
    assert "no smoke for its current chart version 2.5.6" in items["lucedflashqwen36one"].reason
    assert "is a fail: run 1: degenerate output" in items["llamacppqwen36dense27bone"].reason
    ledgers = {FAST: [row(FAST, "2.5.6", "fail"), row(FAST, "2.5.6")], LONG: [row(LONG, "1.0.4")]}
    assert all(i.pruned for i in pure_plan(ledgers).values())


def test_a_suspect_pass_does_not_unblock_and_says_what_would():
    """A figure above the roofline (the tiny CPU model at 181.6 t/s under Long's alias) is not the app's."""
    items = pure_plan({FAST: [row(FAST, "2.5.6")], LONG: [row(LONG, "1.0.4"), row(LONG, "1.0.4", "suspect")]})
    dense = items["llamacppqwen36dense27bone"]
    assert not dense.pruned and "is a suspect: 181.6 t/s is above 70.0 t/s" in dense.reason
    assert dense.unblock == (f"a passing `catalog smoke {LONG}` at 1.0.4 (content {CONTENT[LONG]}) whose served "
                             "identity matches the chart; last smoke: suspect at 1.0.4 on 2026-11-29T12:00:00Z, 90.0 t/s")
    assert all(items[n].pruned for n in DEPRECATED - {"llamacppqwen36dense27bone"})


def test_error_rows_are_ignored_by_the_gate():
    """A mistyped port recorded with --record-errors neither blocks nor unblocks."""
    items = pure_plan({FAST: [row(FAST, "2.5.6"), row(FAST, "2.5.6", "error", "2026-12-01T00:00:00Z")],
                       LONG: [row(LONG, "1.0.4", "error")]})
    assert items["lucedflashqwen36one"].pruned
    assert "last smoke: error at 1.0.4" in items["llamacppqwen36dense27bone"].unblock
    assert "has no smoke for its current chart version 1.0.4" in items["llamacppqwen36dense27bone"].reason


def test_a_pass_of_another_chart_content_or_without_a_matched_model_blocks():
    stale = "sha256:" + "0" * 64
    items = pure_plan({FAST: [row(FAST, "2.5.6", content=stale)], LONG: [row(LONG, "1.0.4", matched=("context",))]})
    assert f"smoked chart content {stale}, but {FAST} 2.5.6 now renders {CONTENT[FAST]}" in \
        items["lucedflashqwen36one"].reason
    assert "did not confirm it serves the chart's model" in items["llamacppqwen36dense27bone"].reason
    old = SmokeRecord.model_validate(row(LONG, "1.0.4").model_dump() | {"chart_content": None, "identity": None})
    assert "does not record its chart's content hash" in pure_plan({LONG: [old]})["llamacppqwen36dense27bone"].reason


# --- end to end --------------------------------------------------------------------------------

def record_passing_smokes(catalog: Path) -> None:
    """A passing smoke of each replacement at its current chart version, appended to catalog/ledger/."""
    cat = load_catalog(catalog)
    for app in (FAST, LONG):
        append(catalog, row(app, cat.apps[app].app.version, content=chart_content(cat.apps[app])))
        assert history(catalog, app)[-1].verdict == "pass"  # read back as the gate reads it


def prune(catalog: Path, capsys, *extra: str) -> tuple[int, list[dict]]:
    code, out, err = run_cli(["prune", "--deprecated", "--catalog", str(catalog), "--json", *extra], capsys)
    return code, json.loads(out) if out.strip() else err


def test_without_passing_smokes_it_refuses_and_changes_nothing(workspace, capsys):
    before = snapshot(workspace, workspace.parent / "charts")
    code, items = prune(workspace, capsys)
    assert code == 1 and {i["app"] for i in items} == DEPRECATED
    assert all(i["action"] == "blocked" and not i["applied"] for i in items)
    long_content = chart_content(load_catalog(workspace).apps[LONG])
    assert {i["app"]: i["unblock"] for i in items}["llamacppqwen36dense27bone"] == (
        f"a passing `catalog smoke {LONG}` at 1.0.4 (content {long_content}) whose served identity matches the "
        "chart; last smoke: none")
    assert snapshot(workspace, workspace.parent / "charts") == before


def test_dry_run_table_says_what_would_unblock_each_app(workspace, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    code, out, _ = run_cli(["prune", "--deprecated", "--dry-run", "--catalog", str(workspace)], capsys)
    assert code == 1
    assert f"llamacppqwen36dense27bone: would be unblocked by a passing `catalog smoke {LONG}` at 1.0.4 (content " \
           "sha256:" in out and "last smoke: none" in out


def test_after_passing_smokes_exactly_the_four_27b_apps_go(workspace, capsys):
    record_passing_smokes(workspace)
    charts = workspace.parent / "charts"
    before = snapshot(workspace, charts)
    code, items = prune(workspace, capsys, "--dry-run")
    assert code == 0 and all(i["action"] == "prune" and not i["applied"] for i in items)
    assert snapshot(workspace, charts) == before  # --dry-run writes nothing

    code, items = prune(workspace, capsys)
    assert code == 0 and {i["app"] for i in items if i["applied"]} == DEPRECATED
    cat = load_catalog(workspace)
    assert {n for n, r in cat.apps.items() if r.app.status == "removed"} == DEPRECATED
    assert {p.name for p in charts.iterdir() if p.name != ".catalog-render"} == {n for n in cat.apps if n not in DEPRECATED}
    for kept in ("llamacppqwen36a3bone", "qwen36a3bvisionone", FAST, LONG):  # the 35B-A3B apps and replacements
        assert cat.apps[kept].app.status == "active"
    after = snapshot(workspace, charts)
    changed = {Path(p).name for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert {n for n in changed if n.endswith(".yaml") and n[:-5] in cat.apps} == {f"{n}.yaml" for n in DEPRECATED}
    code, out, err = run_cli(["render", "--check", "--catalog", str(workspace)], capsys)
    assert code == 0, out + err  # charts/ agrees with the pruned catalog


def test_the_app_file_keeps_every_untouched_line(workspace, capsys):
    record_passing_smokes(workspace)
    path = workspace / "apps" / "vllmqwen36dense27bone.yaml"
    old = path.read_text().splitlines()
    assert prune(workspace, capsys)[0] == 0
    new = path.read_text().splitlines()
    assert [line for line in old if not line.startswith(("status:", "reason:"))] == \
        [line for line in new if not line.startswith(("status:", "reason:", "removed_on:"))]
    app = load_catalog(workspace).apps["vllmqwen36dense27bone"].app
    original = load_catalog(MARKET_CATALOG).apps["vllmqwen36dense27bone"].app.reason
    assert app.removed_on is not None and app.reason.startswith(original)
    assert f"Pruned {app.removed_on.isoformat()}: {FAST} 2.5.6 passed its smoke on" in app.reason


def test_market_suspend_bumps_and_marks(workspace, tmp_path, capsys):
    record_passing_smokes(workspace)
    market = tmp_path / "market"
    shutil.copytree(workspace.parent / "charts", market)  # beclab/apps layout: <market>/<app>/
    untouched = snapshot(*(market / n for n in ("llamacppqwen36a3bone", FAST)))
    code, items = prune(workspace, capsys, "--market", str(market))
    assert code == 0
    assert {i["app"]: i["market"] for i in items}["lucedflashqwen36one"] == "[SUSPEND][lucedflashqwen36one][1.4.5]"
    for name in DEPRECATED:
        folder = market / name
        assert (folder / ".suspend").read_text() == "" and not (folder / ".remove").exists()
        version = load_catalog(workspace).apps[name].app.version
        assert f"\nversion: {version}\n" in (folder / "Chart.yaml").read_text()
        assert f"\n  version: {version}\n" in (folder / "OlaresManifest.yaml").read_text()
    assert load_catalog(workspace).apps["lucedflashqwen36one"].app.version == "1.4.5"
    changelog = (workspace.parent / "CHANGELOG.md").read_text()  # the bump went through `catalog bump`
    assert "### lucedflashqwen36one 1.4.5 — " in changelog
    assert f"- Suspended: superseded by {FAST} ({FAST} 2.5.6 passed its smoke on" in changelog
    assert snapshot(*(market / n for n in ("llamacppqwen36a3bone", FAST))) == untouched


def test_remove_needs_yes_then_leaves_only_the_marker(workspace, tmp_path, capsys):
    record_passing_smokes(workspace)
    market = tmp_path / "market"
    shutil.copytree(workspace.parent / "charts", market)
    before = snapshot(workspace, workspace.parent / "charts", market)
    code, _, err = run_cli(["prune", "--deprecated", "--remove", "--market", str(market),
                            "--catalog", str(workspace)], capsys)
    assert code == 2 and "irreversible" in err and "--yes" in err
    code, _, err = run_cli(["prune", "--deprecated", "--remove", "--yes", "--catalog", str(workspace)], capsys)
    assert code == 2 and "--market DIR" in err
    assert snapshot(workspace, workspace.parent / "charts", market) == before
    code, items = prune(workspace, capsys, "--remove", "--yes", "--market", str(market))
    assert code == 0 and {i["market"] for i in items} == {f"[REMOVE][{n}][{load_catalog(workspace).apps[n].app.version}]"
                                                          for n in DEPRECATED}
    for name in DEPRECATED:
        assert [p.name for p in (market / name).iterdir()] == [".remove"]


def test_a_failed_latest_smoke_of_the_replacement_blocks(workspace, capsys):
    record_passing_smokes(workspace)
    content = chart_content(load_catalog(workspace).apps[FAST])
    append(workspace, row(FAST, "2.5.6", "regression", date="2026-12-01T00:00:00Z", content=content))
    code, items = prune(workspace, capsys)
    assert code == 1
    assert {i["app"] for i in items if i["applied"]} == {"llamacppqwen36dense27bone"}
    assert all("is a regression" in i["reason"] for i in items if i["replaced_by"] == FAST)
