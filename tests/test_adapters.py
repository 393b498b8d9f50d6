"""The adapters of generator/adapters/: each turns its tool's failures into the error tree, and every
network call ends at its total deadline. Real git, the real Helm engine, real sockets on 127.0.0.1; the
Kubernetes API and the GitHub API are stand-ins (no such server can run here), said so where used."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from support.bump import git
from support.hostile_servers import elapsed, silent_server, trickle_server

from generator.adapters.deadline import DeadlineExceeded
from generator.adapters.git import Git
from generator.adapters.github import GitHubApi
from generator.adapters.helm import Helm, HelmFailure
from generator.adapters.kube import Kube
from generator.core.errors import FileSystemError, MissingDependency, RemoteError, ToolError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "a.txt").write_text("a\n")
    git(folder, "add", "a.txt")
    git(folder, "commit", "-q", "-m", "a")
    return folder


# --- git ------------------------------------------------------------------------------------------------

def test_git_missing_ref_is_a_tool_error_with_gits_message(repo: Path) -> None:
    with pytest.raises(ToolError, match=r"git cat-file -p failed: fatal: Not a valid object name no-such-ref"):
        Git().run(repo, "cat-file", "-p", "no-such-ref")
    assert Git().run(repo, "cat-file", "-p", "no-such-ref", check=False) == b""
    assert Git().text(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_git_messages_pass_the_redactor(repo: Path) -> None:
    quiet = Git(redact=lambda text: text.replace("s3cret", "***"))
    with pytest.raises(ToolError) as caught:
        quiet.run(repo, "cat-file", "-p", "s3cret-ref")
    assert "s3cret" not in str(caught.value) and "***-ref" in str(caught.value)


def test_git_not_installed_is_a_missing_dependency(repo: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(repo))  # a PATH without git
    with pytest.raises(MissingDependency, match="git is not installed"):
        Git().run(repo, "status")


def test_git_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(FileSystemError) as caught:
        Git().run(tmp_path / "gone", "status")
    assert str(tmp_path / "gone") in str(caught.value) and "No such file or directory" in str(caught.value)


def test_git_network_call_ends_at_its_deadline_with_its_helpers(repo: Path) -> None:
    """git ls-remote against a server that accepts and never answers: git and git-remote-http are killed."""
    with silent_server() as port:
        start = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="git ls-remote did not finish within its deadline of 2 s"):
            Git(network_timeout_s=2).run(repo, "ls-remote", f"http://127.0.0.1:{port}/market.git")
        assert elapsed(start) < 6
    helpers = subprocess.run(["pgrep", "-f", f"127.0.0.1:{port}/market.git"], capture_output=True, text=True)
    assert helpers.stdout.strip() == "", "a git helper outlived the deadline"


# --- Helm -----------------------------------------------------------------------------------------------

@pytest.fixture
def broken_chart(tmp_path: Path) -> Path:
    folder = tmp_path / "broken"
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("name: [\n")
    return folder


def test_helm_broken_chart_folder_is_a_tool_error_on_render_and_package(broken_chart: Path, tmp_path: Path) -> None:
    with pytest.raises(HelmFailure) as caught:
        Helm().render(broken_chart, {}, name="broken", namespace="ns")
    assert isinstance(caught.value, ToolError)
    assert "cannot load Chart.yaml" in caught.value.detail
    assert str(caught.value).startswith("Helm engine: render broken")
    with pytest.raises(ToolError, match="Helm engine: package broken: .*Chart.yaml"):
        Helm().package(broken_chart, tmp_path)


def test_helm_lint_of_a_broken_chart_folder_is_data_not_an_error(broken_chart: Path) -> None:
    report = Helm().lint(broken_chart, {}, kube_version="v1.30.0")
    errors = [m for m in report.messages if m.severity == 3]
    assert any(m.path == "Chart.yaml" and "unable to parse YAML" in m.message for m in errors)
    assert report.errors


def test_helm_render_failure_becomes_a_helm002_finding(broken_chart: Path) -> None:
    from generator.lint.run import lint_chart

    tree = {"Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\n", "values.yaml": "",
            "templates/a.yaml": "v: {{ .Values.no.such }}\n"}
    found = lint_chart("x", tree, helm=Helm())
    assert any(f.rule == "HELM002" and "nil pointer" in f.message for f in found)


def test_helm_registry_call_ends_at_its_deadline_and_kills_its_worker() -> None:
    with silent_server() as port:
        registry = Helm().registry(plain_http=True, timeout_s=2)
        start = time.monotonic()
        with pytest.raises(DeadlineExceeded, match=r"list the tags of oci://127\.0\.0\.1:\d+/charts/x: no answer"):
            registry.tags(f"oci://127.0.0.1:{port}/charts/x")
        assert elapsed(start) < 5
        assert registry._proc is None  # the worker was killed; the next call starts a fresh one
        registry.close()


def test_helm_registry_errors_are_translated(tmp_path: Path) -> None:
    """A port with nothing listening: the engine's connection error, as a HelmFailure (a ToolError)."""
    with silent_server() as port:
        pass  # the port is free again
    registry = Helm().registry(plain_http=True, timeout_s=20)
    try:
        with pytest.raises(HelmFailure, match="connection refused") as caught:
            registry.tags(f"oci://127.0.0.1:{port}/charts/x")
        assert isinstance(caught.value, ToolError)
        with pytest.raises(HelmFailure, match="missing-1.0.0.tgz: no such file"):  # the same worker answers again
            registry.push(tmp_path / "missing-1.0.0.tgz", f"oci://127.0.0.1:{port}/charts")
    finally:
        registry.close()


# --- GitHub (the API server is a STAND-IN: tests/support/hostile_servers.py) -----------------------------

def test_github_api_trickling_headers_ends_at_the_total_deadline() -> None:
    with trickle_server() as port:
        api = GitHubApi(api=f"http://127.0.0.1:{port}", token="ghp_secretToken123", timeout_s=3)
        start = time.monotonic()
        with pytest.raises(DeadlineExceeded) as caught:
            api.request("GET", "/repos/o/r/pulls")
        assert elapsed(start) < 5
    assert "within the deadline of 3 s" in str(caught.value) and "ghp_secretToken123" not in str(caught.value)


def test_github_api_silent_server_ends_at_the_total_deadline() -> None:
    with silent_server() as port:
        start = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            GitHubApi(api=f"http://127.0.0.1:{port}", token="t", timeout_s=2).request("GET", "/x")
        assert elapsed(start) < 4


def test_github_api_transport_error_is_a_remote_error() -> None:
    with silent_server() as port:
        pass
    with pytest.raises(RemoteError, match=r"GitHub API GET http://127\.0\.0\.1:\d+/x: ConnectError") as caught:
        GitHubApi(api=f"http://127.0.0.1:{port}", timeout_s=5).request("GET", "/x")
    assert not isinstance(caught.value, DeadlineExceeded)


# --- Kubernetes (CoreV1Api is a STAND-IN: no API server can run here) -----------------------------------------

class _StandInCoreV1Api:
    """Stand-in for kubernetes.client.CoreV1Api: refuses with the client's real ApiException, or hangs."""

    def __init__(self, status: int | None = None, hang: float = 0.0):
        self.status, self.hang = status, hang

    def read_namespaced_service(self, name, namespace, _request_timeout=None, _preload_content=True):
        from kubernetes.client.exceptions import ApiException

        if self.hang:
            time.sleep(self.hang)
        raise ApiException(status=self.status, reason="Forbidden")


def test_kube_api_refusal_is_a_remote_error_and_404_is_absent() -> None:
    with pytest.raises(RemoteError, match=r"reading Service ns/app\): HTTP 403 Forbidden"):
        Kube(_StandInCoreV1Api(403)).read_service("app", "ns")
    assert Kube(_StandInCoreV1Api(404)).read_service("app", "ns") is None


def test_kube_api_call_ends_at_its_deadline() -> None:
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="within its deadline of 1 s"):
        Kube(_StandInCoreV1Api(404, hang=30), timeout_s=1).read_service("app", "ns")
    assert elapsed(start) < 3


def test_kubeconfig_problems_are_usage_errors(tmp_path: Path, monkeypatch) -> None:
    from generator.core.errors import UsageError

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    with pytest.raises(UsageError, match="cannot load the kubeconfig context 'x'"):
        Kube.from_kubeconfig("x")


def test_no_adapter_module_leaves_a_bare_except_exception() -> None:
    root = Path(__file__).resolve().parent.parent / "generator"
    files = [*(root / "publish").glob("*.py"), root / "smoke" / "kube_forward.py", *(root / "adapters").glob("*.py")]
    offenders = [f"{p.relative_to(root)}:{n}" for p in files
                 for n, line in enumerate(p.read_text().splitlines(), 1) if "except Exception" in line]
    assert offenders == []
    assert os.environ.get("PATH")  # the PATH monkeypatch above was undone


def test_only_the_adapters_reach_helm_kubernetes_git_and_github() -> None:
    root = Path(__file__).resolve().parent.parent / "generator"
    marks = ("import helm_python", "from helm_python", 'require("helm_python"', "from kubernetes import",
             "from kubernetes.", "import kubernetes", 'require("kubernetes.', 'require("kubernetes"', '"git"',
             "subprocess")
    offenders = [f"{p.relative_to(root)}: {mark}" for p in root.rglob("*.py") if p.parent.name != "adapters"
                 for mark in marks if mark in p.read_text()]
    assert offenders == []
