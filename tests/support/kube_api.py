"""A STAND-IN Kubernetes API server for tests: a real HTTP server on 127.0.0.1 that answers the few core/v1 paths
the catalog reads, and a kubeconfig that points at it.

No Kubernetes API server can run in the test environment. This is not one: it serves, from in-memory objects,

- GET /api/v1/services (fieldSelector metadata.name=..., labelSelector)          list_service_for_all_namespaces
- GET /api/v1/namespaces/{ns}/services[/{name}] (labelSelector)                  list/read_namespaced_service
- GET /api/v1/namespaces/{ns}/pods (labelSelector)                               list_namespaced_pod
- GET /api/v1/namespaces/{ns}/pods/{name}/log (container, previous, tailLines, limitBytes)  read_namespaced_pod_log

with JSON written by the kubernetes client's own serializer from its model objects (V1Service, V1Pod, ...), a
404 `Status` for a missing object and a 400 `Status` for a previous log of a container that never restarted,
as the API server answers (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/
#read-log-of-the-specified-pod). The code under test reaches it through a real kubeconfig, the real kubernetes
client and the real Kube adapter (generator/adapters/kube.py), so requests, deserialization, error translation
and deadlines all run for real. Every request is recorded (`requests`) for assertions.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kubernetes.client import ApiClient

SERIALIZER = ApiClient()


def _match(labels: dict | None, selector: str | None) -> bool:
    if not selector:
        return True
    wanted = dict(part.split("=", 1) for part in selector.split(","))
    return all((labels or {}).get(k) == v for k, v in wanted.items())


class StandInKubeApi:
    """STAND-IN for a Kubernetes API server (see the module docstring). Use as a context manager."""

    def __init__(self, services: list[Any], pods: list[Any], logs: dict[tuple[str, str, bool], str] | None = None):
        self.services, self.pods = services, pods
        self.logs = logs or {}  # (pod, container, previous) -> text
        self.requests: list[tuple[str, dict[str, str]]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                stand_in.requests.append((parts.path, query))
                status, body, kind = stand_in.answer(parts.path.strip("/").split("/"), query)
                data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) \
                    else json.dumps(body).encode()  # bytes: a hostile answer sent as it is
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StandInKubeApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    @staticmethod
    def _status(code: int, reason: str, message: str) -> tuple[int, dict, str]:
        return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                      "reason": reason, "code": code}, "application/json"

    def _list(self, kind: str, items: list[Any]) -> tuple[int, dict, str]:
        return 200, {"kind": kind, "apiVersion": "v1", "metadata": {},
                     "items": [SERIALIZER.sanitize_for_serialization(i) for i in items]}, "application/json"

    def answer(self, path: list[str], query: dict[str, str]) -> tuple[int, Any, str]:
        labels = query.get("labelSelector")
        if path == ["api", "v1", "services"]:
            name = query.get("fieldSelector", "=").split("=", 1)[1] or None
            return self._list("ServiceList", [s for s in self.services if (name is None or s.metadata.name == name)
                                              and _match(s.metadata.labels, labels)])
        if path[:3] != ["api", "v1", "namespaces"] or len(path) < 5:
            return self._status(404, "NotFound", f"the stand-in does not serve /{'/'.join(path)}")
        ns, kind, rest = path[3], path[4], path[5:]
        if kind == "services" and not rest:
            return self._list("ServiceList", [s for s in self.services if s.metadata.namespace == ns
                                              and _match(s.metadata.labels, labels)])
        if kind == "services" and len(rest) == 1:
            found = [s for s in self.services if (s.metadata.namespace, s.metadata.name) == (ns, rest[0])]
            if not found:
                return self._status(404, "NotFound", f'services "{rest[0]}" not found')
            return 200, SERIALIZER.sanitize_for_serialization(found[0]), "application/json"
        if kind == "pods" and not rest:
            return self._list("PodList", [p for p in self.pods if p.metadata.namespace == ns
                                          and _match(p.metadata.labels, labels)])
        if kind == "pods" and len(rest) == 2 and rest[1] == "log":
            return self._log(ns, rest[0], query)
        return self._status(404, "NotFound", f"the stand-in does not serve /{'/'.join(path)}")

    def _log(self, ns: str, pod: str, query: dict[str, str]) -> tuple[int, Any, str]:
        if not any((p.metadata.namespace, p.metadata.name) == (ns, pod) for p in self.pods):
            return self._status(404, "NotFound", f'pods "{pod}" not found')
        container, previous = query.get("container", ""), query.get("previous") == "true"
        text = self.logs.get((pod, container, previous))
        if text is None and previous:
            return self._status(400, "BadRequest",
                                f'previous terminated container "{container}" in pod "{pod}" not found')
        lines = (text or "").splitlines(keepends=True)
        if "tailLines" in query:
            lines = lines[-int(query["tailLines"]):] if int(query["tailLines"]) else []
        body = "".join(lines)
        if "limitBytes" in query:
            body = body.encode()[:int(query["limitBytes"])].decode("utf-8", "ignore")
        return 200, body, "text/plain"


def write_kubeconfig(path: Path, server: str, context: str = "olares-one") -> Path:
    """A kubeconfig whose `context` points at `server` with a bearer token (never sent anywhere else)."""
    path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster:
    server: {server}
users:
- name: stand-in
  user:
    token: stand-in-token
contexts:
- name: {context}
  context:
    cluster: stand-in
    user: stand-in
current-context: {context}
""")
    return path


class Blackhole:
    """A listener that accepts connections and never answers: a cluster that hangs."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=5)
        for conn in self.held:
            conn.close()
