"""`catalog publish --to dir:...`: a Helm repository folder the Helm engine reads over HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path

import helm_python as helm

from support.bump import run_cli
from support.catalogs import edit_app
from support.publish import static_server

APPS = {"gemma426ba4bone": "1.0.9", "gemma4e2bone": "1.0.2", "vllmqwen36turbo27bone": "2.5.6"}


def _publish(capsys, cat: Path, repo: Path, *extra: str) -> tuple[int, dict[str, str], str]:
    code, out, err = run_cli(capsys, "publish", "--to", f"dir:{repo}", "--catalog", cat, "--json", *extra)
    return code, {row["app"]: row["action"] for row in json.loads(out)}, out + err


def test_helm_reads_the_index_and_pulls_the_packages(capsys, recorded: Path, tmp_path: Path) -> None:
    repo = tmp_path / "helm-repo"
    code, actions, text = _publish(capsys, recorded, repo)
    assert code == 0 and actions == dict.fromkeys(APPS, "published"), text
    with static_server(repo) as url:
        index = helm.repo_index(url)
        assert {name: [e["version"] for e in entries] for name, entries in index["entries"].items()} == \
            {app: [version] for app, version in APPS.items()}
        dest = tmp_path / "pulled"
        dest.mkdir()
        for app, version in APPS.items():
            helm.pull(app, repo_url=url, version=version, destination=str(dest))
            assert (dest / f"{app}-{version}.tgz").read_bytes() == (repo / f"{app}-{version}.tgz").read_bytes()

    before = {p.name: p.read_bytes() for p in repo.iterdir()}
    code, actions, _ = _publish(capsys, recorded, repo)
    assert code == 0 and actions == dict.fromkeys(APPS, "skipped")
    assert {p.name: p.read_bytes() for p in repo.iterdir()} == before  # index.yaml included

    edit_app(recorded, "gemma4e2bone", context_length=65536)
    assert run_cli(capsys, "render", "--catalog", recorded)[0] == 0  # publish refuses a chart render would change
    assert run_cli(capsys, "bump", "--record", "--catalog", recorded)[0] == 0  # same version, other content
    code, actions, text = _publish(capsys, recorded, repo, "gemma4e2bone")
    assert code == 1 and actions == {"gemma4e2bone": "refused"}
    assert re.search(r"gemma4e2bone 1\.0\.2 is already published at dir:\S+ with content sha256:[0-9a-f]{64}, "
                     r"but the catalog renders sha256:[0-9a-f]{64}; run `catalog bump gemma4e2bone`", text)


def test_unbumped_change_is_refused_before_the_target_is_touched(capsys, recorded: Path, tmp_path: Path) -> None:
    edit_app(recorded, "gemma4e2bone", context_length=65536)
    code, actions, text = _publish(capsys, recorded, tmp_path / "repo", "--dry-run")
    assert code == 1 and actions == {"gemma4e2bone": "refused", "gemma426ba4bone": "would publish",
                                     "vllmqwen36turbo27bone": "would publish"}
    assert "content changed since 1.0.2 was recorded" in text and "run `catalog bump gemma4e2bone`" in text
    assert not (tmp_path / "repo").exists()


def test_a_write_failure_half_way_is_completed_by_a_rerun(capsys, recorded: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    blocker = repo / "gemma4e2bone-1.0.2.tgz"
    blocker.mkdir(parents=True)  # injected: the 2nd package cannot be written
    code, actions, text = _publish(capsys, recorded, repo)
    assert code == 1 and actions == {"gemma426ba4bone": "published", "gemma4e2bone": "failed",
                                     "vllmqwen36turbo27bone": "published"}
    blocker.rmdir()
    code, actions, _ = _publish(capsys, recorded, repo)
    assert code == 0 and actions == {"gemma426ba4bone": "skipped", "gemma4e2bone": "published",
                                     "vllmqwen36turbo27bone": "skipped"}
    index = (repo / "index.yaml").read_text()
    assert all(f"{app}-{version}.tgz" in index for app, version in APPS.items())
    assert not list(repo.glob(".catalog-publish-*"))
