"""`catalog doctor` against a cluster that answers nonsense (issue 22, cause 14).

No Kubernetes API server can run here: the cluster is the STAND-IN of tests/support/kube_api.py (a real HTTP
server on 127.0.0.1), reached through a real kubeconfig, the real kubernetes client and the real Kube adapter.
Here its pod list is replaced by what a hostile or broken server (a login proxy, a captive portal) sends: HTML,
200,000 nested arrays, bytes that are not UTF-8, a pod whose fields have the wrong types, an answer of 40 MB. Each
must be a RemoteError (exit 2, a message naming what was wrong), never an internal error; the big answer is
refused at the 16 MiB cap with the doctor's memory measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator.cli import main

from support.adversarial import REPO
from support.kube_api import StandInKubeApi, write_kubeconfig

APP, NS, CONTEXT = "vllmqwen36turbo27bone", "vllmqwen36turbo27bone-alice", "olares-one"


class HostileApi(StandInKubeApi):
    """The stand-in, with its pod list answered by `pods_answer` (status, body, content type)."""

    def __init__(self, pods_answer: tuple[int, object, str]):
        from test_doctor import service  # the doctor tests' Service of the app

        super().__init__([service()], [])
        self.pods_answer = pods_answer

    def answer(self, path, query):
        if path[-1:] == ["pods"]:
            return self.pods_answer
        return super().answer(path, query)


def _pod(**status: object) -> dict:
    return {"metadata": {"name": f"{APP}-0", "namespace": NS, "labels": {"app.kubernetes.io/name": APP}},
            "spec": {"containers": [{"name": "engine", "image": "x"}]}, "status": status}


ANSWERS = {
    "html": (200, "<html><body>Please log in</body></html>", "application/json"),
    "html-typed": (200, "<html><body>Please log in</body></html>", "text/html"),
    "deep": (200, "[" * 200_000 + "]" * 200_000, "application/json"),
    "not-utf8": (200, b'{"kind": "PodList", "items": [], "x": "\xff\xfe"}', "application/json"),
    "a-list": (200, [1, 2, 3], "application/json"),
    "items-not-list": (200, {"kind": "PodList", "items": "nope"}, "application/json"),
    "wrong-types": (200, {"kind": "PodList", "metadata": {}, "items": [
        _pod(phase=["Running"], containerStatuses=[{"name": "engine", "restartCount": "many", "ready": "x",
                                                     "image": 5, "imageID": {}}])]}, "application/json"),
    "item-not-object": (200, {"kind": "PodList", "metadata": {}, "items": ["a pod"]}, "application/json"),
}


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_doctor_hostile_pod_list_is_a_remote_error(kind, catalog_copy, tmp_path, monkeypatch, capsys):
    with HostileApi(ANSWERS[kind]) as api:
        monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kubeconfig", api.url, CONTEXT)))
        code = main(["doctor", APP, "--kube-context", CONTEXT, "--catalog", str(catalog_copy), "--timeout", "20"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    assert "the Kubernetes API (listing pods in" in err


def test_doctor_oversized_answer_refused_with_bounded_memory(catalog_copy, tmp_path):
    """A 40 MB pod list (the issue's 400 MB peaked at 1.25 GB): refused at the 16 MiB cap."""
    items = [_pod(phase="Running") | {"metadata": {"name": f"p{i}", "namespace": NS,
                                                   "annotations": {"x": "y" * 4000}}} for i in range(10_000)]
    body = json.dumps({"kind": "PodList", "metadata": {}, "items": items})
    assert len(body) > 40 * 10**6
    with HostileApi((200, body, "application/json")) as api:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api.url, CONTEXT)
        code = f"""
import json, resource, subprocess, sys
proc = subprocess.run([sys.executable, "-m", "generator.cli", "doctor", "{APP}", "--kube-context", "{CONTEXT}",
                       "--catalog", {str(catalog_copy)!r}, "--timeout", "30"], capture_output=True, text=True,
                      timeout=120)
print(json.dumps({{"code": proc.returncode, "err": proc.stderr[-800:],
                  "kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}}))
"""
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO), "KUBECONFIG": str(kubeconfig)})
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] == 2, result
    assert "over the cap of 16,777,216" in result["err"] or "larger than 16,777,216" in result["err"]
    assert result["kib"] < 300 * 1024, result
