"""`catalog publish --to oci://...` against Debian's docker-registry started by the test (docs/testing.md)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import helm_python as helm

from support.bump import run_cli
from support.catalogs import edit_app
from support.publish import docker_registry

APPS = {"gemma426ba4bone": "1.0.9", "gemma4e2bone": "1.0.2", "vllmqwen36turbo27bone": "2.5.6"}


def _publish(capsys, cat: Path, ref: str, *extra: str) -> tuple[int, str, str]:
    return run_cli(capsys, "publish", "--to", ref, "--plain-http", "--catalog", cat, "--json", *extra)


def _actions(out: str) -> dict[str, str]:
    return {row["app"]: row["action"] for row in json.loads(out)}


def _expected_package(cat: Path, app: str, tmp: Path) -> bytes:
    """The package publish builds for `app`, built again here (reproducible: same content -> same bytes)."""
    from generator.adapters.helm import Helm
    from generator.versions.bump import current
    from generator.catalog import load_catalog
    from generator.publish.package import package
    from generator.versions.releases import load_releases

    r = load_catalog(cat).apps[app]
    rec = load_releases(cat).get(app, r.app.version)
    return package(current(r).tree, app, r.app.version, rec.date, tmp, helm=Helm()).read_bytes()


def test_push_pull_back_byte_identical_then_skip_and_refuse(capsys, recorded: Path, tmp_path: Path) -> None:
    with docker_registry(tmp_path / "reg") as reg:
        code, out, err = _publish(capsys, recorded, reg.ref)
        assert code == 0, out + err
        assert _actions(out) == dict.fromkeys(APPS, "published")
        with helm.RegistryClient(plain_http=True) as client:
            for app, version in APPS.items():
                assert client.tags(f"{reg.ref}/{app}") == [version]
                dest = tmp_path / "pulled" / app
                dest.mkdir(parents=True)
                client.pull(f"{reg.ref}/{app}", version=version, destination=str(dest))
                pulled = (dest / f"{app}-{version}.tgz").read_bytes()
                assert pulled == _expected_package(recorded, app, tmp_path / "again" / app)

        code, out, _ = _publish(capsys, recorded, reg.ref)
        assert code == 0 and _actions(out) == dict.fromkeys(APPS, "skipped")

        edit_app(recorded, "gemma4e2bone", context_length=65536)
        assert run_cli(capsys, "render", "--catalog", recorded)[0] == 0  # publish refuses a drifted chart
        assert run_cli(capsys, "bump", "--record", "--catalog", recorded)[0] == 0  # same version, other content
        code, out, _ = _publish(capsys, recorded, reg.ref, "gemma4e2bone")
        assert code == 1 and _actions(out) == {"gemma4e2bone": "refused"}
        assert re.search(rf"gemma4e2bone 1\.0\.2 is already published at {re.escape(reg.ref)} with content "
                         r"sha256:[0-9a-f]{64}, but the catalog renders sha256:[0-9a-f]{64}; run `catalog bump "
                         r"gemma4e2bone`", out)


def test_htpasswd_registry_credentials_never_leak(capsys, recorded: Path, tmp_path: Path, monkeypatch) -> None:
    password = "pw-Sekr1t-0123456789"
    with docker_registry(tmp_path / "reg", user="alice", password=password) as reg:
        code, out, err = _publish(capsys, recorded, reg.ref, "gemma4e2bone")
        assert code == 1 and "basic credential not found" in out and "CATALOG_REGISTRY_USERNAME" in out

        monkeypatch.setenv("CATALOG_REGISTRY_USERNAME", "alice")
        monkeypatch.setenv("CATALOG_REGISTRY_PASSWORD", "wrong-" + password)
        code, out, err = run_cli(capsys, "publish", "gemma4e2bone", "--to", reg.ref, "--plain-http",
                                 "--catalog", recorded)
        assert code == 1 and "401" in out
        for secret in (password, "wrong-" + password, base64.b64encode(f"alice:wrong-{password}".encode()).decode()):
            assert secret not in out + err

        monkeypatch.setenv("CATALOG_REGISTRY_PASSWORD", password)
        code, out, err = _publish(capsys, recorded, reg.ref)
        assert code == 0, out + err
        assert _actions(out) == dict.fromkeys(APPS, "published") and password not in out + err

        monkeypatch.delenv("CATALOG_REGISTRY_USERNAME")
        monkeypatch.delenv("CATALOG_REGISTRY_PASSWORD")
        config = tmp_path / "docker-config.json"
        auth = base64.b64encode(f"alice:{password}".encode()).decode()
        config.write_text(json.dumps({"auths": {reg.host: {"auth": auth}}}))
        code, out, err = _publish(capsys, recorded, reg.ref, "--registry-config", config)
        assert code == 0 and _actions(out) == dict.fromkeys(APPS, "skipped")
        assert not list(Path.home().glob(".config/helm/registry/config.json")) or \
            password not in (Path.home() / ".config/helm/registry/config.json").read_text()


def test_failed_push_half_way_is_completed_by_a_rerun(capsys, recorded: Path, tmp_path: Path, monkeypatch) -> None:
    from generator.adapters.helm import HelmFailure, HelmRegistry

    real_push = HelmRegistry.push
    calls: list[str] = []

    def flaky_push(self, chart, remote):
        calls.append(chart.name)
        if len(calls) == 2:  # injected: the registry drops the 2nd app's push (as the adapter reports it)
            raise HelmFailure("push: connection reset by peer (injected)", "connection reset by peer (injected)")
        return real_push(self, chart, remote)

    with docker_registry(tmp_path / "reg") as reg:
        monkeypatch.setattr(HelmRegistry, "push", flaky_push)
        code, out, _ = _publish(capsys, recorded, reg.ref)
        assert code == 1
        assert _actions(out) == {"gemma426ba4bone": "published", "gemma4e2bone": "failed",
                                 "vllmqwen36turbo27bone": "published"}
        assert "connection reset by peer (injected)" in out
        monkeypatch.undo()
        code, out, _ = _publish(capsys, recorded, reg.ref)
        assert code == 0 and _actions(out) == {"gemma426ba4bone": "skipped", "gemma4e2bone": "published",
                                               "vllmqwen36turbo27bone": "skipped"}


def test_https_default_against_a_plain_http_registry_says_plain_http(capsys, recorded: Path, tmp_path: Path) -> None:
    with docker_registry(tmp_path / "reg") as reg:
        code, out, _ = run_cli(capsys, "publish", "gemma4e2bone", "--to", reg.ref, "--catalog", recorded, "--json")
        assert code == 1 and "add --plain-http" in out
