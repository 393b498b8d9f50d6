"""Reaching an app on a cluster: Service discovery through the Kubernetes API, then the same HTTP path.

No Kubernetes API server can run in the test environment. `FakeCoreV1Api` is a STAND-IN for the
cluster: it answers the four CoreV1Api calls the discovery makes with the kubernetes client's own model
objects (V1Service, V1Pod, ...) and raises its real ApiException for a missing object or a refusal; the
real Kube adapter (generator/adapters/kube.py) wraps it, so its error translation and deadlines run.
The port-forward websocket is replaced by a connector that dials a REAL llama-server, so the local
forwarder and the whole smoke HTTP path run for real through it.
"""

from __future__ import annotations

import json
import re
import socket

import pytest
from kubernetes.client import (ApiClient, V1Container, V1ContainerPort, V1ObjectMeta, V1Pod, V1PodCondition, V1PodList,
                               V1PodSpec, V1PodStatus, V1Service, V1ServiceList, V1ServicePort, V1ServiceSpec)
from kubernetes.client.exceptions import ApiException

from generator.adapters.kube import Kube
from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.core.errors import UsageError
from generator.smoke.kube_forward import find_target, forwarded

from support.smoke import llama_server, run_cli, run_json, write_models

APP, NS = "llamacppqwen36a3bone", "llamacppqwen36a3bone-alice"


def service(name: str = APP, namespace: str = NS, target="http") -> V1Service:
    return V1Service(metadata=V1ObjectMeta(name=name, namespace=namespace, labels={"app.kubernetes.io/name": name}),
                     spec=V1ServiceSpec(selector={"app.kubernetes.io/name": name},
                                        ports=[V1ServicePort(name="http", port=8000, target_port=target)]))


def pod(name: str, *, ready: bool = True, phase: str = "Running", image: str | None = None,
        command: list[str] | None = None, args: list[str] | None = None) -> V1Pod:
    return V1Pod(metadata=V1ObjectMeta(name=name, namespace=NS, labels={"app.kubernetes.io/name": APP}),
                 spec=V1PodSpec(containers=[V1Container(name="engine", image=image, command=command, args=args,
                                                        ports=[V1ContainerPort(name="http", container_port=8000)])]),
                 status=V1PodStatus(phase=phase, conditions=[V1PodCondition(type="Ready", status=str(ready))]))


class _Raw:
    """The raw answer a CoreV1Api call gives with `_preload_content=False` (what the Kube adapter asks for: it
    checks the answer before the client builds objects): the object's JSON, as the API server would send it."""

    def __init__(self, obj):
        self.body, self.headers = json.dumps(ApiClient().sanitize_for_serialization(obj)).encode(), {}

    def read(self, amount=-1):
        out, self.body = (self.body, b"") if amount < 0 else (self.body[:amount], self.body[amount:])
        return out

    def release_conn(self):
        pass


def _answer(obj, preload):
    return obj if preload else _Raw(obj)


class FakeCoreV1Api:
    """Stand-in for kubernetes.client.CoreV1Api: the calls discovery makes, over in-memory objects."""

    api_client = ApiClient()

    def __init__(self, services: list[V1Service], pods: list[V1Pod]):
        self.services, self.pods, self.calls = services, pods, []

    def read_namespaced_service(self, name, namespace, _request_timeout=None, _preload_content=True):
        self.calls.append(("read_namespaced_service", name, namespace))
        for s in self.services:
            if (s.metadata.name, s.metadata.namespace) == (name, namespace):
                return _answer(s, _preload_content)
        raise ApiException(status=404, reason="Not Found")

    def list_namespaced_service(self, namespace, label_selector=None, _request_timeout=None, _preload_content=True):
        self.calls.append(("list_namespaced_service", namespace, label_selector))
        return _answer(V1ServiceList(items=[s for s in self.services if s.metadata.namespace == namespace
                                            and _match(s.metadata.labels, label_selector)]), _preload_content)

    def list_service_for_all_namespaces(self, field_selector=None, label_selector=None, _request_timeout=None, _preload_content=True):
        self.calls.append(("list_service_for_all_namespaces", field_selector, label_selector))
        name = field_selector.split("=", 1)[1] if field_selector else None
        return _answer(V1ServiceList(items=[s for s in self.services if (name is None or s.metadata.name == name)
                                            and _match(s.metadata.labels, label_selector)]), _preload_content)

    def list_namespaced_pod(self, namespace, label_selector=None, _request_timeout=None, _preload_content=True):
        self.calls.append(("list_namespaced_pod", namespace, label_selector))
        return _answer(V1PodList(items=[p for p in self.pods if p.metadata.namespace == namespace
                                        and _match(p.metadata.labels, label_selector)]), _preload_content)


def _match(labels: dict | None, selector: str | None) -> bool:
    if not selector:
        return True
    wanted = dict(part.split("=", 1) for part in selector.split(","))
    return all((labels or {}).get(k) == v for k, v in wanted.items())


def test_discovery_finds_the_service_in_any_namespace_and_a_ready_pod():
    api = FakeCoreV1Api([service()], [pod("a-0", ready=False), pod("a-1", phase="Pending"), pod("a-2")])
    target = find_target(Kube(api), APP, None)
    assert (target.namespace, target.service, target.pod, target.port) == (NS, APP, "a-2", 8000)
    assert api.calls[0] == ("list_service_for_all_namespaces", f"metadata.name={APP}", None)
    assert api.calls[-1] == ("list_namespaced_pod", NS, f"app.kubernetes.io/name={APP}")
    assert target.label == f"kube:{NS}/svc/{APP} -> pod a-2:8000"


def test_discovery_errors_say_what_to_do():
    with pytest.raises(UsageError, match="no Service for app .* in any namespace"):
        find_target(Kube(FakeCoreV1Api([], [])), APP, None)
    two = FakeCoreV1Api([service(), service(namespace=f"{APP}-bob")], [pod("a-0")])
    with pytest.raises(UsageError, match="several Services match .* pass --namespace"):
        find_target(Kube(two), APP, None)
    assert find_target(Kube(two), APP, NS).pod == "a-0"  # --namespace settles it
    with pytest.raises(UsageError, match=r"no Running and Ready pod .*\(a-0 Pending\)"):
        find_target(Kube(FakeCoreV1Api([service()], [pod("a-0", phase="Pending")])), APP, NS)
    with pytest.raises(UsageError, match="no container port named 'metrics'"):
        find_target(Kube(FakeCoreV1Api([service(target="metrics")], [pod("a-0")])), APP, NS)


def test_numeric_target_port_and_label_fallback():
    renamed = service(name="llm")  # a Service not named after the app, found by its label
    renamed.metadata.labels = renamed.spec.selector = {"app.kubernetes.io/name": APP}
    renamed.spec.ports[0].target_port = 9000
    target = find_target(Kube(FakeCoreV1Api([renamed], [pod("a-0")])), APP, NS)
    assert (target.service, target.port) == ("llm", 9000)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama-kube")
    with llama_server(write_models(folder, context=65536, main_name="Qwen3.6-35B-A3B-UD-Q4_K_XL.gguf"),
                      aliases=["qwen3.6-35b-a3b"], context=65536, log_dir=folder) as running:
        yield running


def dialer(url: str):
    host, port = url.removeprefix("http://").split(":")
    return lambda: socket.create_connection((host, int(port)), timeout=10)


def chart_pod(catalog, name: str, **changes) -> V1Pod:
    """A pod whose engine container is the chart's (image, command, args from the real plan), with `changes`."""
    values = plan(load_catalog(catalog).apps[APP]).values.engine
    spec = {"image": values.image, "command": list(values.command), "args": list(values.args), **changes}
    return pod(name, **spec)


@pytest.mark.needs_llama_server
def test_smoke_through_the_forwarder_reaches_the_real_server(catalog_copy, server, capsys, monkeypatch):
    api = FakeCoreV1Api([service()], [chart_pod(catalog_copy, "llamacppqwen36a3bone-7d9f-0")])
    contexts = []
    monkeypatch.setattr(Kube, "from_kubeconfig", classmethod(lambda cls, context: contexts.append(context) or cls(api)))
    monkeypatch.setattr(Kube, "port_forward", lambda self, pod, namespace, port: dialer(server.url)())
    code, out = run_json(["smoke", APP, "--kube-context", "olares-one", "--catalog", str(catalog_copy),
                          "--runs", "2", "--max-tokens", "24", "--timeout", "60", "--tolerance", "0.95"], capsys)
    # through the forwarder the smoke read the real server's identity: the right GGUF, but the test build (b0)
    # is not the b8740 the stack's image pins, a failure naming both
    assert code == 1 and out["verdict"] == "fail", out
    (reason,) = out["reasons"]  # the test build's number: b0 before .ci/build-llama-server.sh set it, b11434 after
    assert re.fullmatch(r"engine version: served b\d+-\S+; the chart's image "
                        r"ghcr\.io/ggml-org/llama\.cpp:server-cuda13-b8740 carries b8740", reason), reason
    assert out["identity_matched"] == ["engine", "model", "context"]
    assert out["endpoint"] == f"kube:{NS}/svc/{APP} -> pod llamacppqwen36a3bone-7d9f-0:8000"
    assert [r["completion_tokens"] for r in out["runs"]] == [24, 24]
    assert contexts == ["olares-one"]
    assert out["image_source"] == "observed"  # read from the pod's spec, not copied from the catalog


@pytest.mark.needs_llama_server
def test_smoke_through_the_cluster_fails_on_the_pods_own_image_and_args(catalog_copy, server, capsys, monkeypatch):
    """The pod runs another image and another context than the chart (a hand-edited Deployment): the smoke fails
    naming both, and the ledger row records the image the pod runs."""
    values = plan(load_catalog(catalog_copy).apps[APP]).values.engine
    args = [a if a != "65536" else "32768" for a in values.args]
    assert args != list(values.args)
    drifted = chart_pod(catalog_copy, "llamacppqwen36a3bone-7d9f-0", image="ghcr.io/example/llama.cpp:handmade",
                        args=args)
    api = FakeCoreV1Api([service()], [drifted])
    monkeypatch.setattr(Kube, "from_kubeconfig", classmethod(lambda cls, context: cls(api)))
    monkeypatch.setattr(Kube, "port_forward", lambda self, pod, namespace, port: dialer(server.url)())
    code, out = run_json(["smoke", APP, "--kube-context", "olares-one", "--catalog", str(catalog_copy),
                          "--runs", "2", "--max-tokens", "8", "--timeout", "60"], capsys)
    assert code == 1 and out["verdict"] == "fail", out
    assert out["image"] == "ghcr.io/example/llama.cpp:handmade" and out["image_source"] == "observed"
    pod_reasons = [r for r in out["reasons"] if r.startswith("pod ")]
    assert any(r.startswith("pod image: the pod runs ghcr.io/example/llama.cpp:handmade; the chart says "
                            + values.image) for r in pod_reasons), pod_reasons
    assert any(r.startswith("pod args: the pod runs 32768; the chart says 65536") for r in pod_reasons), pod_reasons


@pytest.mark.needs_llama_server
def test_forwarder_closes_its_listener(server):
    api = FakeCoreV1Api([service()], [pod("p")])
    with forwarded(APP, Kube(api), namespace=NS, connect=dialer(server.url)) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert b'{"status":"ok"}' in conn.recv(4096)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_endpoint_and_kube_options_are_exclusive(catalog_copy, capsys):
    code, _, err = run_cli(["smoke", APP, "--endpoint", "http://127.0.0.1:9", "--namespace", NS,
                            "--catalog", str(catalog_copy)], capsys)
    assert code == 2 and "not both" in err
    code, _, err = run_cli(["smoke", APP, "--catalog", str(catalog_copy)], capsys)
    assert code == 2 and "--endpoint URL, or --kube-context/--namespace" in err
