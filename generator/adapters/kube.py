"""The Kubernetes API (the official `kubernetes` client), the one place that imports it.

`Kube` wraps a CoreV1Api: read and list Services, list Pods, open a port-forward stream to a pod (what
`kubectl port-forward` does). Built once by the CLI from the kubeconfig (`Kube.from_kubeconfig`) and
passed in; tests pass a stand-in CoreV1Api to `Kube(api)`. The client's errors are translated here:
ApiException and transport errors become RemoteError (a 404 on a read is "absent", None), a bad
kubeconfig a UsageError. Each API call has a total deadline: the client gets it as its request timeout,
and since urllib3 applies that per socket read once the answer starts, the call also runs under
`call_with_deadline`, which stops waiting at the deadline whatever the server does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from generator.adapters.deadline import call_with_deadline
from generator.core.errors import RemoteError, UsageError, translate_os_error
from generator.core.imports import require

DEFAULT_TIMEOUT_S = 30.0


def _client_errors() -> tuple[type[BaseException], ...]:
    """The exceptions the kubernetes client raises for a server or transport problem."""
    import urllib3
    from kubernetes.client.exceptions import OpenApiException

    errors: tuple[type[BaseException], ...] = (OpenApiException, urllib3.exceptions.HTTPError, OSError)
    try:
        from websocket import WebSocketException
    except ImportError:  # websocket-client is a kubernetes dependency; without it there is no port-forward
        return errors
    return (*errors, WebSocketException)


class Upstream:
    """One port-forward stream: a socket-like pair end plus the stream's own close."""

    def __init__(self, sock: Any, on_close: Callable[[], None]):
        self.sock, self._on_close = sock, on_close

    def recv(self, size: int) -> bytes:
        return bytes(self.sock.recv(size))

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(data)

    def shutdown(self, how: int) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(how)

    def close(self) -> None:
        self._on_close()


class Kube:
    def __init__(self, api: Any, *, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.api, self.timeout_s = api, timeout_s

    @classmethod
    def from_kubeconfig(cls, context: str | None, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> Kube:
        """A CoreV1Api from the kubeconfig (its current context unless `context`)."""
        client, config = require("kubernetes.client", "kube"), require("kubernetes.config", "kube")
        from kubernetes.config.config_exception import ConfigException
        named = f" context {context!r}" if context else ""
        try:
            config.load_kube_config(context=context)
        except ConfigException as exc:
            raise UsageError(f"cannot load the kubeconfig{named}: {exc}") from None
        except OSError as exc:
            raise translate_os_error(exc, doing="read the kubeconfig") from None
        return cls(client.CoreV1Api(), timeout_s=timeout_s)

    def _call(self, what: str, method: str, *args: Any, absent_on_404: bool = False,
              query: dict[str, str] | None = None) -> Any:
        errors = _client_errors()
        call = getattr(self.api, method)
        try:
            return call_with_deadline(lambda: call(*args, _request_timeout=self.timeout_s, **(query or {})),
                                      what=f"the Kubernetes API ({what})", seconds=self.timeout_s, passes=errors)
        except errors as exc:
            status = getattr(exc, "status", None)
            if absent_on_404 and status == 404:
                return None
            if status is not None:
                raise RemoteError(f"the Kubernetes API ({what}): HTTP {status} {getattr(exc, 'reason', '')}".rstrip()) \
                    from None
            raise RemoteError(f"the Kubernetes API ({what}): {type(exc).__name__}: {exc}") from None

    def read_service(self, name: str, namespace: str) -> Any | None:
        """The Service, or None when there is none of that name."""
        return self._call(f"reading Service {namespace}/{name}", "read_namespaced_service", name, namespace,
                          absent_on_404=True)

    def list_services(self, *, namespace: str | None = None, field_selector: str | None = None,
                      label_selector: str | None = None) -> list[Any]:
        selectors = {k: v for k, v in (("field_selector", field_selector), ("label_selector", label_selector)) if v}
        if namespace is None:
            found = self._call("listing Services", "list_service_for_all_namespaces", query=selectors)
        else:
            found = self._call(f"listing Services in {namespace}", "list_namespaced_service", namespace,
                               query=selectors)
        return list(found.items)

    def list_pods(self, namespace: str, label_selector: str) -> list[Any]:
        found = self._call(f"listing pods in {namespace}", "list_namespaced_pod", namespace,
                           query={"label_selector": label_selector})
        return list(found.items)

    def port_forward(self, pod: str, namespace: str, port: int) -> Upstream:
        """One fresh port-forward stream to `pod:port` (needs a real API server)."""
        from kubernetes.stream import portforward

        def opened() -> Upstream:
            forward = portforward(self.api.connect_get_namespaced_pod_portforward, pod, namespace, ports=str(port))
            return Upstream(forward.socket(port), forward.close)

        errors = _client_errors()
        try:
            return call_with_deadline(opened, what=f"port-forward to {namespace}/{pod}:{port}", seconds=self.timeout_s,
                                      passes=errors)
        except errors as exc:
            raise RemoteError(f"port-forward to {namespace}/{pod}:{port}: {getattr(exc, 'reason', exc)}") from None


__all__ = ["Kube", "Upstream"]
