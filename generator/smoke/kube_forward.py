"""Reach an app on a cluster: find its Service through the Kubernetes API and port-forward to it.

The chart's Service is named after the app and selects `app.kubernetes.io/name=<app>`
(templates/service.yaml); its port `http` targets the engine container's port. We read the Service,
pick a Running and Ready pod it selects, resolve the target port on that pod, and open a local
listener on 127.0.0.1 whose every connection is a fresh `kubernetes.stream.portforward` stream to
the pod — what `kubectl port-forward svc/<app>` does. The smoke then runs its normal HTTP path
against `http://127.0.0.1:<port>`.

The Kubernetes API is reached only through the Kube adapter (generator/adapters/kube.py), built by the
CLI and passed in; it translates the client's errors into the error tree and puts a deadline on each call.

Testing: no Kubernetes API server can run in the test environment. The discovery logic is tested
against a stand-in CoreV1Api (wrapped in the real Kube adapter) that returns the kubernetes client's own
model objects, and the forwarder against a stand-in connector that dials a real llama-server; the
`portforward` websocket itself is only exercised against a real cluster.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterator

from generator.adapters import Kube
from generator.core import CatalogError, UsageError

NAME_LABEL = "app.kubernetes.io/name"
CHUNK = 65536


@dataclass(frozen=True)
class PodPort:
    namespace: str
    service: str
    pod: str
    port: int  # the container port on the pod

    @property
    def label(self) -> str:
        """How the ledger names this endpoint (no cluster credentials in it)."""
        return f"kube:{self.namespace}/svc/{self.service} -> pod {self.pod}:{self.port}"


@dataclass(frozen=True)
class AppService:
    """The Service of an app and how to list the pods behind it."""

    namespace: str
    name: str
    label_selector: str  # its spec.selector, as a label selector


def app_service(kube: Kube, app: str, namespace: str | None) -> tuple[AppService, Any]:
    """The Service of `app` (found as `find_target` finds it) and the client's Service object."""
    service = _service(kube, app, namespace)
    ns = str(service.metadata.namespace or namespace or "default")
    selector = service.spec.selector or {}
    if not selector:
        raise UsageError(f"Service {ns}/{service.metadata.name} has no selector; cannot find its pods")
    label_selector = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return AppService(ns, str(service.metadata.name), label_selector), service


def find_target(kube: Kube, app: str, namespace: str | None) -> PodPort:
    """The Service of `app` and a ready pod behind it, through the Kube adapter's read/list calls."""
    found, service = app_service(kube, app, namespace)
    ns = found.namespace
    port = _service_port(service)
    pods = kube.list_pods(ns, found.label_selector)
    pod = next((p for p in pods if _ready(p)), None)
    if pod is None:
        states = ", ".join(f"{p.metadata.name} {p.status.phase}" for p in pods) or "no pods"
        raise UsageError(f"no Running and Ready pod behind Service {ns}/{service.metadata.name} ({states})")
    return PodPort(ns, service.metadata.name, pod.metadata.name, _container_port(pod, port.target_port or port.port))


def _service(kube: Kube, app: str, namespace: str | None) -> Any:
    if namespace is None:
        found = kube.list_services(field_selector=f"metadata.name={app}")
        if not found:
            found = kube.list_services(label_selector=f"{NAME_LABEL}={app}")
    else:
        found = [s for s in [kube.read_service(app, namespace)] if s is not None]
        if not found:
            found = kube.list_services(namespace=namespace, label_selector=f"{NAME_LABEL}={app}")
    where = f"namespace {namespace}" if namespace else "any namespace"
    if not found:
        raise UsageError(f"no Service for app {app!r} in {where}; is the app installed? (--namespace, --kube-context)")
    if len(found) > 1:
        names = ", ".join(sorted(f"{s.metadata.namespace}/{s.metadata.name}" for s in found))
        raise UsageError(f"several Services match app {app!r} ({names}); pass --namespace")
    return found[0]


def _service_port(service: Any) -> Any:
    ports = service.spec.ports or []
    named = [p for p in ports if p.name == "http"]
    if named or len(ports) == 1:
        return (named or ports)[0]
    raise UsageError(f"Service {service.metadata.namespace}/{service.metadata.name} has {len(ports)} ports "
                     "and none is named http")


def _ready(pod: Any) -> bool:
    status = pod.status
    if status is None or status.phase != "Running" or pod.metadata.deletion_timestamp is not None:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])


def _container_port(pod: Any, target: int | str) -> int:
    if isinstance(target, int) or str(target).isdigit():
        return int(target)
    for container in pod.spec.containers:
        for port in container.ports or []:
            if port.name == target:
                return int(port.container_port)
    raise UsageError(f"pod {pod.metadata.name} has no container port named {target!r}")


def portforward_connector(kube: Kube, target: PodPort) -> Callable[[], Any]:
    """A function opening one port-forward stream to the pod (needs a real API server)."""
    return lambda: kube.port_forward(target.pod, target.namespace, target.port)


class LocalForward:
    """A listener on 127.0.0.1 piping each accepted connection to a fresh upstream from `connect`."""

    def __init__(self, connect: Callable[[], Any]):
        self._connect = connect
        self._server = socket.create_server(("127.0.0.1", 0))
        self._open: list[Any] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="kube-forward", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = self._connect()
        except (CatalogError, OSError):  # the adapter translated a failed stream; the client sees a closed socket
            client.close()
            return
        with self._lock:
            self._open += [client, upstream]
        back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        for end in (client, upstream):
            end.close()

    def close(self) -> None:
        _shutdown(self._server)  # wakes the blocked accept() (a bare close() would not, on Linux)
        self._server.close()
        self._thread.join(timeout=5)
        with self._lock:
            for end in self._open:
                _shutdown(end)

    def __enter__(self) -> LocalForward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pump(source: Any, sink: Any) -> None:
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    _shutdown(sink, socket.SHUT_WR)


def _shutdown(end: Any, how: int = socket.SHUT_RDWR) -> None:
    with contextlib.suppress(OSError):
        end.shutdown(how)


@contextmanager
def forwarded(app: str, kube: Kube, *, namespace: str | None,
              connect: Callable[[], Any] | None = None) -> Iterator[tuple[str, str]]:
    """(local URL, ledger label) of the app's Service, for the duration of the block."""
    target = find_target(kube, app, namespace)
    with LocalForward(connect or portforward_connector(kube, target)) as forward:
        yield forward.url, target.label
