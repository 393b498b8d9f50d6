"""`catalog check` reports a finding under what it is about (issue 38 item 4, found importing
github.com/coynntis/olares-one-market@cb991c8f): PATH001 sweeps every catalog file that is not an app's own once,
while checking the first app, and its findings in a draft app, a draft stack or a removed app were shown under that
first app, which they are not about. Real catalog files, the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.check.run import AppResult, by_subject
from generator.catalog import load_catalog
from generator.cli import main
from generator.core.findings import Finding

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "catalog_small"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dest = tmp_path / "catalog"
    shutil.copytree(FIXTURE, dest)
    (dest / "drafts" / "apps").mkdir(parents=True)
    (dest / "drafts" / "stacks").mkdir(parents=True)
    (dest / "drafts" / "apps" / "zzdraft.yaml").write_text(
        "# [draft] app written by `catalog import` from zzdraft\n"
        "# [draft] missing: extra_args: --x /models/t.jinja (/home/someone/store/zzdraft/templates/a.yaml:9) reads\n"
        "name: zzdraft\n")
    (dest / "drafts" / "stacks" / "sdraft.yaml").write_text("id: sdraft\nnote: built in /tmp/build/sdraft\n")
    return dest


def _check(store: Path, capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["check", "--catalog", str(store), "--no-lint", "--no-drift", *args])
    return code, capsys.readouterr().out


def test_a_machine_path_in_a_draft_is_reported_against_the_draft(store, capsys):
    code, out = _check(store, capsys, "--json")
    results = {r["app"]: r for r in json.loads(out)["apps"]}
    assert code == 1
    first = sorted(n for n in results if n in ("gemmalab", "qwenlab", "qwenvisionlab"))[0]
    assert not [f for f in results[first]["findings"] if f["rule"] == "PATH001"], "not the first app's finding"
    draft = results["zzdraft"]
    assert draft["status"] == "draft" and not draft["ok"]
    (found,) = draft["findings"]
    assert found["rule"] == "PATH001" and found["app"] == "zzdraft" and found["line"] == 2
    assert found["file"].endswith("drafts/apps/zzdraft.yaml")
    stack = next(r for name, r in results.items() if name.endswith("drafts/stacks/sdraft.yaml"))
    assert stack["status"] == "catalog file" and [f["line"] for f in stack["findings"]] == [2]
    assert [n for n in results if n in ("gemmalab", "qwenlab", "qwenvisionlab")] == ["gemmalab", "qwenlab",
                                                                                    "qwenvisionlab"]


def test_the_table_names_the_draft(store, capsys):
    code, out = _check(store, capsys)
    assert code == 1
    assert "✖ zzdraft (draft)  1 error" in out and out.count("PATH001") == 2
    assert "(catalog file)  1 error" in out


def test_a_finding_about_an_app_that_has_a_result_joins_it_once(store):
    """A removed app is not checked by default, so its file is swept with the others; when its own result is there
    (`catalog check` names it), the finding joins that result, once."""
    cat = load_catalog(store)
    swept = Finding("PATH001", "error", "qwenlab", "a machine path", file="catalog/apps/qwenlab.yaml", line=3)
    results = [AppResult("gemmalab", "active", [swept]), AppResult("qwenlab", "removed", [swept])]
    out = by_subject(results, cat)
    assert [(r.app, r.status, r.findings) for r in out] == [("gemmalab", "active", []),
                                                            ("qwenlab", "removed", [swept])]


def test_the_path_shown_leaves_out_the_sentences_punctuation():
    from generator.rules.paths import machine_paths

    text = "x: --f /models/t (/home/me/s/a/templates/b.yaml:254)), then /tmp/y.\n"
    assert list(machine_paths(text)) == [(1, "/home/me/s/a/templates/b.yaml:254"), (1, "/tmp/y")]
