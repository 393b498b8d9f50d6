"""`catalog publish --to git:...`: one branch and one commit per app in a real bare market repository."""

from __future__ import annotations

import datetime as dt
import re
import stat
from pathlib import Path

import pytest

from support.bump import git, run_cli
from support.catalogs import edit_app
from support.github_standin import GitHubStandIn
from support.publish import bare_market, merge_branch

GITBOT_TITLE = re.compile(r"^\[(NEW|UPDATE|SUSPEND|REMOVE)\]\[([a-z0-9]{1,30})\]\[(\d+\.\d+\.\d+)\].*$")
APPS = {"gemma426ba4bone": "1.0.9", "gemma4e2bone": "1.0.2", "vllmqwen36turbo27bone": "2.5.6"}


@pytest.fixture
def market(tmp_path: Path) -> Path:
    return bare_market(tmp_path)


def _git(bare: Path, *args: str) -> str:
    return git(bare.parent, "--git-dir", str(bare), *args)


def _refs(bare: Path) -> str:
    return _git(bare, "for-each-ref", "--format=%(refname) %(objectname)")


def _publish(capsys, cat: Path, target: str, *extra: str) -> tuple[int, str, str]:
    return run_cli(capsys, "publish", "--to", target, "--catalog", cat, "--json", *extra)


def test_one_branch_one_commit_per_app_titled_for_gitbot_and_idempotent(capsys, recorded: Path, market: Path) -> None:
    code, out, err = _publish(capsys, recorded, f"git:{market}")
    assert code == 0, out + err
    for app, version in APPS.items():
        branch = f"catalog/{app}"
        subject = _git(market, "log", "-1", "--format=%s", branch).strip()
        assert subject == f"[NEW][{app}][{version}]" and GITBOT_TITLE.match(subject)
        assert _git(market, "rev-list", "--count", f"main..{branch}").strip() == "1"
        touched = _git(market, "diff", "--name-only", "main", branch).split()
        assert touched and all(path.startswith(f"{app}/") for path in touched)
        assert {"Chart.yaml", "OlaresManifest.yaml", "values.yaml", "owners"} <= {p.split("/", 1)[1] for p in touched}
        assert "aamsellem" in _git(market, "show", f"{branch}:{app}/owners")
        assert f"version: {version}" in _git(market, "show", f"{branch}:{app}/Chart.yaml")
        chart = (recorded.parent / "charts" / app / "values.yaml").read_text()
        assert _git(market, "show", f"{branch}:{app}/values.yaml") == chart

    before = _refs(market)
    code, out, _ = _publish(capsys, recorded, f"git:{market}")
    assert code == 0 and out.count('"action": "skipped"') == 3
    assert _refs(market) == before


def test_update_suspend_remove_and_refusals_after_merge(capsys, recorded: Path, market: Path) -> None:
    assert _publish(capsys, recorded, f"git:{market}")[0] == 0
    for app in APPS:
        merge_branch(market, f"catalog/{app}")  # main now holds every app
    code, out, _ = _publish(capsys, recorded, f"git:{market}")
    assert code == 0 and out.count("is already on main") == 3

    # the same version with other content is refused, naming app, version and both hashes
    edit_app(recorded, "gemma4e2bone", context_length=65536)
    assert run_cli(capsys, "render", "--catalog", recorded)[0] == 0  # publish refuses a chart render would change
    assert run_cli(capsys, "bump", "--record", "--catalog", recorded)[0] == 0  # misuse: records 1.0.2 again
    code, out, err = _publish(capsys, recorded, f"git:{market}", "gemma4e2bone")
    assert code == 1
    assert re.search(r"gemma4e2bone 1\.0\.2 is already on main with content sha256:[0-9a-f]{64}, but the catalog "
                     r"wants sha256:[0-9a-f]{64}; run `catalog bump gemma4e2bone`", out)

    edit_app(recorded, "gemma4e2bone", version="1.0.3")  # a proper bump: UPDATE
    assert run_cli(capsys, "bump", "--catalog", recorded)[0] == 0
    from generator.versions.bump import bump_for_suspend

    edit_app(recorded, "gemma426ba4bone", status="deprecated", reason="superseded by gemma4e2bone")
    bump_for_suspend(recorded, "gemma426ba4bone", "superseded by gemma4e2bone")
    edit_app(recorded, "vllmqwen36turbo27bone", status="removed", reason="gone", removed_on=dt.date(2026, 11, 29))
    # a removed app is not sent as an irreversible REMOVE unless asked for and confirmed
    code, out, err = _publish(capsys, recorded, f"git:{market}", "vllmqwen36turbo27bone")
    assert code == 0 and "REMOVE" not in out, out + err
    assert not _git(market, "log", "-1", "--format=%s", "catalog/vllmqwen36turbo27bone").startswith("[REMOVE]")
    code, out, err = _publish(capsys, recorded, f"git:{market}", "--remove")
    assert code == 2 and "--yes" in err
    code, out, err = _publish(capsys, recorded, f"git:{market}", "--remove", "--yes")
    assert code == 0, out + err
    log = {app: _git(market, "log", "-1", "--format=%s", f"catalog/{app}").strip() for app in APPS}
    assert log == {"gemma4e2bone": "[UPDATE][gemma4e2bone][1.0.3]",
                   "gemma426ba4bone": "[SUSPEND][gemma426ba4bone][1.0.10]",
                   "vllmqwen36turbo27bone": "[REMOVE][vllmqwen36turbo27bone][2.5.6]"}
    assert _git(market, "show", "catalog/gemma426ba4bone:gemma426ba4bone/.suspend") == ""
    assert _git(market, "ls-tree", "-r", "--name-only", "catalog/vllmqwen36turbo27bone", "--",
                "vllmqwen36turbo27bone/").split() == ["vllmqwen36turbo27bone/.remove"]
    body = _git(market, "log", "-1", "--format=%b", "catalog/gemma4e2bone")
    assert body.startswith("1.0.3: Re-released without a chart change.")  # 1.0.2 was re-recorded above

    # the market's version is above the catalog's: refused
    merge_branch(market, "catalog/gemma4e2bone")
    edit_app(recorded, "gemma4e2bone", version="1.0.2")
    assert run_cli(capsys, "render", "--catalog", recorded)[0] == 0
    code, out, _ = _publish(capsys, recorded, f"git:{market}", "gemma4e2bone")
    assert code == 1 and "versions never go down" in (out + _)


def test_a_failed_push_half_way_is_completed_by_a_second_run(capsys, recorded: Path, market: Path) -> None:
    marker = market.parent / "reject-gemma4e2bone"
    marker.write_text("")
    hook = market / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/catalog/gemma4e2bone ] "
                    f"&& [ -e {marker} ]; then echo 'injected failure' >&2; exit 1; fi\ndone\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    code, out, err = _publish(capsys, recorded, f"git:{market}")
    assert code == 1
    assert out.count('"action": "published"') == 2 and out.count('"action": "failed"') == 1
    assert "injected failure" in out
    marker.unlink()
    code, out, _ = _publish(capsys, recorded, f"git:{market}")
    assert code == 0
    assert out.count('"action": "skipped"') == 2 and out.count('"action": "published"') == 1
    assert _git(market, "log", "-1", "--format=%s", "catalog/gemma4e2bone").strip() == "[NEW][gemma4e2bone][1.0.2]"


def test_pull_requests_through_the_github_api_stand_in(capsys, recorded: Path, market: Path, monkeypatch) -> None:
    token = "ghp_standInToken0123456789abcdef"
    with GitHubStandIn(token) as gh:
        monkeypatch.setenv("CATALOG_GITHUB_TOKEN", token)
        args = ("--pr-repo", "olares-one/market", "--github-api", gh.url)
        code, out, err = _publish(capsys, recorded, f"git:{market}", *args)
        assert code == 0, out + err
        assert sorted(p["title"] for p in gh.pulls) == sorted(f"[NEW][{a}][{v}]" for a, v in APPS.items())
        assert all(p["draft"] and p["base"] == "main" and p["head_label"].endswith(p["title"].split("]")[1][1:])
                   for p in gh.pulls)
        assert "opened PR #" in out

        code, out, _ = _publish(capsys, recorded, f"git:{market}", *args)
        assert code == 0 and out.count("pull request already open") == 3 and len(gh.pulls) == 3

        gh.pulls[:] = [p for p in gh.pulls if "gemma4e2bone" not in p["title"]]  # the PR step failed last time
        code, out, _ = _publish(capsys, recorded, f"git:{market}", *args)
        assert code == 0 and out.count('"action": "published"') == 1 and "opened PR #" in out

        monkeypatch.setenv("CATALOG_GITHUB_TOKEN", "ghp_wrongToken9876543210")
        gh.pulls.clear()
        code, out, err = _publish(capsys, recorded, f"git:{market}", "gemma4e2bone", *args)
        assert code == 1 and "HTTP 401 Bad credentials" in out
        assert "ghp_wrongToken9876543210" not in out + err
    history = _git(market, "log", "--all", "-p")
    assert token not in history and "ghp_wrongToken" not in history
