"""The Kubernetes API (the official `kubernetes` client), the one place that imports it.

`Kube` wraps a CoreV1Api: read and list Services, list Pods, read a container's log, open a port-forward
stream to a pod (what `kubectl port-forward` does). Built once by the CLI from the kubeconfig
(`Kube.from_kubeconfig`) and passed in; tests pass a stand-in CoreV1Api to `Kube(api)`. The client's errors
are translated here: ApiException and transport errors become RemoteError (a 404 on a read is "absent",
None), a bad kubeconfig a UsageError. Each API call has a total deadline: the client gets it as its request
timeout, and since urllib3 applies that per socket read once the answer starts, the call also runs under
`call_with_deadline`, which stops waiting at the deadline whatever the server does. A `Deadline` given to
the adapter caps every call by the time left, so a command's several calls share one total deadline.

`pods()` returns what a pod spec and status say as typed objects (`PodView`, `ContainerView`): image and
image ID, command, args, env (literal values, and where a `valueFrom` value comes from, never its value),
the `nvidia.com/gpumem` request and limit (HAMi, docs/domain.md#hami), restart count, state and the last
termination (reason such as OOMKilled, exit code). `pod_log()` reads the last lines of a container's log,
bounded in lines and bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generator.adapters.deadline import Deadline, DeadlineExceeded, call_with_deadline
from generator.core import RemoteError, UsageError, translate_os_error
from generator.core import require
from generator.core import safe_line

DEFAULT_TIMEOUT_S = 30.0
LOG_LIMIT_BYTES = 1024 * 1024  # the most of one container log read at once (the API's limitBytes, and our read)
# The largest answer of a read or list the tool makes: a Service or the pods behind one app's Service are a few KiB
# each; a list of every Service of a big cluster (thousands) stays under a few MiB. A 400 MB answer peaked at 1.25 GB.
MAX_ANSWER_BYTES = 16 * 2**20
GPUMEM = "nvidia.com/gpumem"  # HAMi's GPU memory resource, an integer of MiB (docs/domain.md#hami)


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


@dataclass(frozen=True)
class EnvEntry:
    """One `env` entry of a container spec: a literal value, or where the kubelet takes it from."""

    name: str
    value: str | None  # the literal value; None for a valueFrom entry
    source: str = ""  # for a valueFrom entry: `secret NAME key KEY`, `configMap NAME key KEY`, `field PATH`, ...


@dataclass(frozen=True)
class Termination:
    reason: str  # OOMKilled, Error, Completed, ... (empty when the kubelet gave none)
    exit_code: int | None
    finished_at: str  # ISO 8601, empty when unknown

    def __str__(self) -> str:
        code = f" (exit {self.exit_code})" if self.exit_code is not None else ""
        when = f" at {self.finished_at}" if self.finished_at else ""
        return f"{self.reason or 'terminated'}{code}{when}"


@dataclass(frozen=True)
class ContainerView:
    """A container of a pod, spec and status together."""

    name: str
    image: str
    image_id: str  # the digest the node pulled (status.imageID), empty before the first start
    command: tuple[str, ...]
    args: tuple[str, ...]
    env: tuple[EnvEntry, ...]  # in spec order; with a repeated name the last one wins (Kubernetes)
    requests: dict[str, str]  # resource name -> quantity as the spec writes it
    limits: dict[str, str]
    ready: bool
    restart_count: int
    state: str  # `running`, `waiting: CrashLoopBackOff`, `terminated: Error (exit 1)`, `unknown`
    last_termination: Termination | None  # status.lastState.terminated: why the previous instance ended
    init: bool = False

    @property
    def gpumem_request(self) -> str | None:
        return self.requests.get(GPUMEM)

    @property
    def gpumem_limit(self) -> str | None:
        return self.limits.get(GPUMEM)

    def env_value(self, name: str) -> EnvEntry | None:
        """The entry that decides `name` (the last one of that name), or None."""
        return next((e for e in reversed(self.env) if e.name == name), None)


@dataclass(frozen=True)
class PodView:
    name: str
    namespace: str
    phase: str
    created: str  # ISO 8601
    deleting: bool  # metadata.deletionTimestamp is set
    ready: bool  # the Ready condition is True
    node: str
    containers: tuple[ContainerView, ...]
    init_containers: tuple[ContainerView, ...] = ()


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _stamp(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else _text(value)


def _env_entry(entry: Any) -> EnvEntry:
    source = entry.value_from
    if source is None:
        return EnvEntry(entry.name, _text(entry.value))
    for attr, kind in (("secret_key_ref", "secret"), ("config_map_key_ref", "configMap")):
        ref = getattr(source, attr, None)
        if ref is not None:
            return EnvEntry(entry.name, None, f"{kind} {_text(ref.name)} key {_text(ref.key)}")
    if getattr(source, "field_ref", None) is not None:
        return EnvEntry(entry.name, None, f"field {_text(source.field_ref.field_path)}")
    if getattr(source, "resource_field_ref", None) is not None:
        return EnvEntry(entry.name, None, f"resource {_text(source.resource_field_ref.resource)}")
    return EnvEntry(entry.name, None, "valueFrom")


def _state(state: Any) -> str:
    if state is None:
        return "unknown"
    if state.running is not None:
        return "running"
    if state.waiting is not None:
        return f"waiting: {_text(state.waiting.reason) or 'waiting'}"
    if state.terminated is not None:
        return f"terminated: {_termination(state.terminated)}"
    return "unknown"


def _termination(done: Any) -> Termination:
    code = done.exit_code
    return Termination(_text(done.reason), int(code) if code is not None else None, _stamp(done.finished_at))


def _quantities(values: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (values or {}).items()}


def _container_view(spec: Any, status: Any, *, init: bool) -> ContainerView:
    resources = spec.resources
    last = status.last_state.terminated if status is not None and status.last_state is not None else None
    return ContainerView(
        name=_text(spec.name), image=_text(spec.image), image_id=_text(status.image_id if status else None),
        command=tuple(_text(c) for c in spec.command or ()), args=tuple(_text(a) for a in spec.args or ()),
        env=tuple(_env_entry(e) for e in spec.env or ()),
        requests=_quantities(resources.requests if resources else None),
        limits=_quantities(resources.limits if resources else None),
        ready=bool(status.ready) if status is not None else False,
        restart_count=int(status.restart_count or 0) if status is not None else 0,
        state=_state(status.state) if status is not None else "unknown",
        last_termination=_termination(last) if last is not None else None, init=init)


def pod_view(pod: Any) -> PodView:
    """The kubernetes client's V1Pod as a typed PodView."""
    meta, spec, status = pod.metadata, pod.spec, pod.status

    def views(specs: Any, statuses: Any, *, init: bool) -> tuple[ContainerView, ...]:
        by_name = {s.name: s for s in statuses or ()}
        return tuple(_container_view(c, by_name.get(c.name), init=init) for c in specs or ())

    conditions = status.conditions if status is not None else None
    return PodView(
        name=_text(meta.name), namespace=_text(meta.namespace), phase=_text(status.phase if status else None),
        created=_stamp(meta.creation_timestamp), deleting=meta.deletion_timestamp is not None,
        ready=any(c.type == "Ready" and c.status == "True" for c in conditions or ()),
        node=_text(spec.node_name if spec else None),
        containers=views(spec.containers if spec else None, status.container_statuses if status else None,
                         init=False),
        init_containers=views(spec.init_containers if spec else None,
                              status.init_container_statuses if status else None, init=True))


def _body(response: Any, what: str) -> bytes:
    """The raw answer, at most MAX_ANSWER_BYTES (a Content-Length above it is refused before reading)."""
    length = (getattr(response, "headers", None) or {}).get("Content-Length")
    if length is not None and str(length).isdigit() and int(length) > MAX_ANSWER_BYTES:
        raise RemoteError(f"the Kubernetes API ({what}): an answer of {int(length):,} bytes, over the cap of "
                          f"{MAX_ANSWER_BYTES:,}; narrow the query (--namespace)")
    parts: list[bytes] = []
    got = 0
    while True:
        chunk = response.read(min(1 << 16, MAX_ANSWER_BYTES + 1 - got))
        if not chunk:
            return b"".join(parts)
        parts.append(bytes(chunk))
        got += len(chunk)
        if got > MAX_ANSWER_BYTES:
            raise RemoteError(f"the Kubernetes API ({what}): an answer larger than {MAX_ANSWER_BYTES:,} bytes, "
                              "the cap; narrow the query (--namespace)")


def _bad_answer(what: str, why: str) -> RemoteError:
    return RemoteError(f"the Kubernetes API ({what}): the answer is {why}; is the kubeconfig's server a "
                       "Kubernetes API server?")


def _answer(api_client: Any, body: bytes, response_type: str, what: str) -> Any:
    """The client's object (V1PodList, V1Service ...) of an answer that is UTF-8 JSON, an object, nested at most
    the JSON decoder's recursion limit, of the shape the type says; anything else is a RemoteError naming what
    was wrong (an HTML login page, a proxy's error text, 200,000 nested arrays, a string where a number goes)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad_answer(what, f"not UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise _bad_answer(what, "JSON nested too deeply") from None
    except ValueError:
        raise _bad_answer(what, f"not JSON ({safe_line(text[:60])!r}...)") from None
    if not isinstance(data, dict):
        raise _bad_answer(what, f"a JSON {type(data).__name__}, not an object")
    if response_type.endswith("List") and not isinstance(data.get("items", []), list):
        raise _bad_answer(what, "a list whose `items` is not a list")
    try:
        return api_client.deserialize(text, response_type, "application/json")
    except RecursionError:
        raise _bad_answer(what, "JSON nested too deeply") from None
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # pydantic's ValidationError is a ValueError
        raise _bad_answer(what, f"not a {response_type} ({safe_line(type(exc).__name__)}: "
                  f"{safe_line(' '.join(str(exc).split()), 160)})") from None


class Kube:
    def __init__(self, api: Any, *, timeout_s: float = DEFAULT_TIMEOUT_S, deadline: Deadline | None = None):
        self.api, self.timeout_s, self.deadline = api, timeout_s, deadline

    @classmethod
    def from_kubeconfig(cls, context: str | None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                        deadline: Deadline | None = None) -> Kube:
        """A CoreV1Api from the kubeconfig (its current context unless `context`).

        The kubeconfig is `$KUBECONFIG` (a list of files, as kubectl reads it) as set now, else
        ~/.kube/config: the client reads `$KUBECONFIG` once, when it is first imported."""
        client, config = require("kubernetes.client", "kube"), require("kubernetes.config", "kube")
        from kubernetes.config.config_exception import ConfigException
        named = f" context {context!r}" if context else ""
        try:
            config.load_kube_config(config_file=os.environ.get("KUBECONFIG") or None, context=context)
        except ConfigException as exc:
            raise UsageError(f"cannot load the kubeconfig{named}: {exc}") from None
        except OSError as exc:
            raise translate_os_error(exc, doing="read the kubeconfig") from None
        return cls(client.CoreV1Api(), timeout_s=timeout_s, deadline=deadline)

    def _seconds(self, what: str) -> float:
        """The time one call may take: the per-call timeout, capped by the shared deadline."""
        if self.deadline is None:
            return self.timeout_s
        if self.deadline.expired:
            raise DeadlineExceeded(f"the Kubernetes API ({what}): the deadline of {self.deadline.seconds:g} s "
                                   "ran out before this call")
        return self.deadline.cap(self.timeout_s)

    def _call(self, what: str, method: str, *args: Any, response_type: str, absent_on_404: bool = False,
              query: dict[str, str] | None = None) -> Any:
        """One API read whose answer is checked before the client builds objects from it (`_answer`)."""
        call = getattr(self.api, method)

        def read(seconds: float) -> Any:
            response = call(*args, _request_timeout=seconds, _preload_content=False, **(query or {}))
            try:
                body = _body(response, what)
            finally:
                response.release_conn()
            return _answer(self.api.api_client, body, response_type, what)

        return self._run(what, read, absent_on=(404,) if absent_on_404 else ())

    def _run(self, what: str, fn: Callable[[float], Any], *, absent_on: tuple[int, ...] = ()) -> Any:
        errors = _client_errors()
        seconds = self._seconds(what)
        try:
            return call_with_deadline(lambda: fn(seconds), what=f"the Kubernetes API ({what})", seconds=seconds,
                                      passes=errors)
        except DeadlineExceeded:
            if self.deadline is None or not self.deadline.expired:
                raise  # the call's own timeout: the message names it
            raise DeadlineExceeded(f"the Kubernetes API ({what}) did not answer within the deadline of "
                                   f"{self.deadline.seconds:g} s (all calls together)") from None
        except errors as exc:
            status = getattr(exc, "status", None)
            if status in absent_on:
                return None
            if status is not None:
                raise RemoteError(f"the Kubernetes API ({what}): HTTP {status} {getattr(exc, 'reason', '')}".rstrip()) \
                    from None
            raise RemoteError(f"the Kubernetes API ({what}): {type(exc).__name__}: {exc}") from None

    def read_service(self, name: str, namespace: str) -> Any | None:
        """The Service, or None when there is none of that name."""
        return self._call(f"reading Service {namespace}/{name}", "read_namespaced_service", name, namespace,
                          response_type="V1Service", absent_on_404=True)

    def list_services(self, *, namespace: str | None = None, field_selector: str | None = None,
                      label_selector: str | None = None) -> list[Any]:
        selectors = {k: v for k, v in (("field_selector", field_selector), ("label_selector", label_selector)) if v}
        if namespace is None:
            found = self._call("listing Services", "list_service_for_all_namespaces", query=selectors,
                               response_type="V1ServiceList")
        else:
            found = self._call(f"listing Services in {namespace}", "list_namespaced_service", namespace,
                               query=selectors, response_type="V1ServiceList")
        return list(found.items)

    def list_pods(self, namespace: str, label_selector: str) -> list[Any]:
        found = self._call(f"listing pods in {namespace}", "list_namespaced_pod", namespace,
                           query={"label_selector": label_selector}, response_type="V1PodList")
        return list(found.items)

    def pods(self, namespace: str, label_selector: str) -> list[PodView]:
        """The pods `label_selector` selects in `namespace`, as typed views of their spec and status."""
        pods = self.list_pods(namespace, label_selector)
        try:
            return [pod_view(p) for p in pods]
        except (TypeError, ValueError, AttributeError) as exc:  # a field of an impossible type or shape
            raise RemoteError(f"the Kubernetes API (listing pods in {namespace}): a pod the answer describes is not "
                              f"a pod ({type(exc).__name__}); is the API server a Kubernetes API?") from None

    def pod_log(self, pod: str, namespace: str, container: str, *, tail_lines: int,
                limit_bytes: int = LOG_LIMIT_BYTES, previous: bool = False) -> str | None:
        """The last `tail_lines` lines (at most `limit_bytes`) of a container's log, decoded as UTF-8 with
        replacement; with `previous`, those of the instance that ended before the current one. None when
        the API has none (no previous instance: HTTP 400; no such pod or container: 404)."""
        which = "previous log" if previous else "log"
        what = f"reading the {which} of {namespace}/{pod} container {container}"

        def read(seconds: float) -> str:
            response = self.api.read_namespaced_pod_log(
                pod, namespace, container=container, tail_lines=tail_lines, limit_bytes=limit_bytes,
                previous=previous, _preload_content=False, _request_timeout=seconds)
            try:  # the raw body: the client would json.loads() a log that happens to parse as JSON
                data = response.read(limit_bytes)
            finally:
                response.release_conn()
            return bytes(data[:limit_bytes]).decode("utf-8", "replace")

        found: str | None = self._run(what, read, absent_on=(400, 404))
        return found

    def port_forward(self, pod: str, namespace: str, port: int) -> Upstream:
        """One fresh port-forward stream to `pod:port` (needs a real API server)."""
        from kubernetes.stream import portforward

        def opened() -> Upstream:
            forward = portforward(self.api.connect_get_namespaced_pod_portforward, pod, namespace, ports=str(port))
            return Upstream(forward.socket(port), forward.close)

        errors = _client_errors()
        try:
            return call_with_deadline(opened, what=f"port-forward to {namespace}/{pod}:{port}",
                                      seconds=self._seconds(f"port-forward to {namespace}/{pod}"), passes=errors)
        except errors as exc:
            raise RemoteError(f"port-forward to {namespace}/{pod}:{port}: {getattr(exc, 'reason', exc)}") from None


__all__ = ["ContainerView", "EnvEntry", "GPUMEM", "Kube", "PodView", "Termination", "Upstream", "pod_view"]
