"""The Helm engine (helm-python-sdk: Helm's v4 Go SDK through ctypes), the one place that imports helm_python.

`Helm` lints, renders and packages chart folders and writes repository indexes, in-process (a chart
lint takes ~20 ms); `capped_renderer()` renders a stranger's chart in a capped, killable worker process
(`helm_render_worker.py`: memory, time, output). `Helm.registry(...)` is the OCI registry client; its calls
run in a worker process (`helm_registry_worker.py`) that is killed at each call's deadline, because the
SDK's registry calls cannot be cancelled. Like chart-testing's `pkg/tool` (github.com/helm/chart-testing), it
is built once by the CLI and passed in.

Errors: helm_python.HelmError is translated here into `HelmFailure` (a ToolError) carrying the engine's
own message in `detail`; lint problems are data (`LintReport`), not errors. helm_python missing is a
MissingDependency with the pip command.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.adapters.deadline import Deadline, DeadlineExceeded, kill_group
from generator.core import ToolError
from generator.core import require

DEFAULT_REGISTRY_TIMEOUT_S = 120.0


class HelmFailure(ToolError):
    """The Helm engine refused or failed; `detail` is its own message, `code` its helm_error_code."""

    def __init__(self, message: str, detail: str, code: int | None = None):
        super().__init__(message)
        self.detail, self.code = detail, code


@dataclass(frozen=True)
class LintMessage:
    severity: int  # 0 unknown, 1 info, 2 warning, 3 error (helm_python.lint)
    path: str
    message: str


@dataclass(frozen=True)
class LintReport:
    messages: tuple[LintMessage, ...]
    errors: tuple[str, ...]  # what Helm could not even check (a folder without Chart.yaml)


def _engine(extra: str = "lint") -> Any:
    return require("helm_python", extra)


@contextlib.contextmanager
def _translated(doing: str, extra: str = "lint") -> Iterator[Any]:
    """helm_python with its errors turned into HelmFailure naming what was being done."""
    helm = _engine(extra)
    try:
        yield helm
    except helm.HelmError as exc:
        detail = str(exc)
        raise HelmFailure(f"Helm engine: {doing}: {' '.join(detail.split())}", detail,
                          getattr(exc, "code", None)) from None


class Helm:
    """The in-process Helm engine operations the tool uses."""

    def lint(self, folder: Path, values: dict[str, Any], *, kube_version: str, strict: bool = True) -> LintReport:
        with _translated(f"lint {folder.name}") as helm:
            report = helm.lint(str(folder), values=values, strict=strict, kube_version=kube_version)
        messages = tuple(LintMessage(int(m.get("severity", 0)), str(m.get("path", "")), str(m.get("error", "")))
                         for m in report.get("messages", []))
        return LintReport(messages, tuple(str(e) for e in report.get("errors", [])))

    def render(self, folder: Path, values: dict[str, Any], *, name: str, namespace: str) -> dict[str, str]:
        """{template path as Helm names it (`<chart>/templates/x.yaml`): text}; HelmFailure when it cannot."""
        with _translated(f"render {folder.name}") as helm, helm.Chart.load(str(folder)) as chart:
            return dict(chart.render(values=values, name=name, namespace=namespace))

    def capped_renderer(self, limits: RenderLimits | None = None) -> CappedRenderer:
        """The renderer of charts nobody vouches for (`catalog import`): see `CappedRenderer`."""
        _engine()  # a missing helm_python is reported here, not as a dead worker
        return CappedRenderer(limits or RenderLimits())

    def package(self, folder: Path, destination: Path) -> Path:
        """`destination/<name>-<version>.tgz` packaged from the chart folder."""
        with _translated(f"package {folder.name}", "publish") as helm:
            return Path(helm.package(str(folder), destination=str(destination)))

    def repo_index(self, folder: Path, *, merge: Path | None = None) -> None:
        """Write `folder/index.yaml` for the packages in `folder` (`helm repo index [--merge]`)."""
        with _translated(f"index {folder}", "publish") as helm:
            helm.repo_index_generate(str(folder), merge=str(merge) if merge else None)

    def registry(self, *, plain_http: bool = False, credentials_file: Path | None = None,
                 timeout_s: float = DEFAULT_REGISTRY_TIMEOUT_S,
                 redact: Callable[[str], str] = lambda text: text) -> HelmRegistry:
        _engine("publish")  # a missing helm_python is reported here, not as a dead worker
        return HelmRegistry(plain_http=plain_http, credentials_file=credentials_file, timeout_s=timeout_s,
                            redact=redact)


@dataclass(frozen=True)
class RenderLimits:
    """The caps of `Helm.capped_renderer` (docs/security.md, "Import"). A real chart renders in well under a second,
    in the worker's ~0.3 GB, into a few hundred KiB."""

    # The worker's data segment (RLIMIT_DATA: Go's heap and Python's). A render of a real chart takes ~70 MB; the
    # `{{ repeat 400000000 "x" }}` that took 4.4 GB in-process stops at ~0.5 GB.
    memory_bytes: int = 512 * 2**20
    seconds: float = 60.0  # wall clock, start of the worker to its answer (and its CPU time, RLIMIT_CPU)
    output_bytes: int = 16 * 2**20  # the rendered manifests, as the worker's JSON answer


class CappedRenderer:
    """`Helm.render()` for a stranger's chart, in a worker process (helm_render_worker.py) whose memory (RLIMIT_DATA)
    and CPU time are capped, killed when one render passes its wall-clock deadline, its answer read up to a byte
    cap. A chart over a cap is a HelmFailure naming the cap, never a gigabyte-sized process or a hang. One worker
    serves a whole import run (a render costs ~10 ms, the worker's start ~0.3 s); a killed one is started again for
    the next chart. Use as a context manager, or `close()` it."""

    def __init__(self, limits: RenderLimits):
        self.limits = limits
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None

    def __enter__(self) -> CappedRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self.close()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the worker; closed in close())
        self._proc = subprocess.Popen([sys.executable, "-m", "generator.adapters.helm_render_worker",
                                       str(self.limits.memory_bytes), str(max(1, int(self.limits.seconds)))],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                      env={**_worker_env(), "GOMAXPROCS": "2"}, start_new_session=True)
        return self._proc

    def render(self, folder: Path, values: dict[str, Any], *, name: str, namespace: str) -> dict[str, str]:
        """{template path as Helm names it: text}, as `Helm.render`; HelmFailure when Helm refuses or a cap is hit."""
        try:
            request = json.dumps({"folder": str(folder), "values": values, "name": name, "namespace": namespace})
        except (TypeError, ValueError) as exc:
            raise HelmFailure(f"Helm engine: render {folder.name}: the values are not JSON ({exc})",
                              f"the values are not JSON: {exc}") from None
        proc = self._start()
        answer, over = _capped_exchange(proc, request.encode() + b"\n", Deadline(self.limits.seconds),
                                        self.limits.output_bytes)
        if answer is None:  # a cap was hit or the worker died: it is not reused
            if proc.poll() is None:
                kill_group(proc)
            proc.wait()
        return _render_answer(folder, answer, over, proc.poll(), self._stderr_text() if answer is None else "",
                              self.limits)

    def _stderr_text(self) -> str:
        handle = self._stderr
        if handle is None:
            return ""
        handle.seek(0)
        head = handle.read(4096)  # Go's `fatal error: ...` comes first, then every goroutine's stack
        handle.seek(max(handle.seek(0, os.SEEK_END) - 1024, len(head)))
        return str((head + b"\n" + handle.read(1024)).decode("utf-8", "replace"))

    def close(self) -> None:
        proc = self._proc
        if proc is not None:
            if proc.poll() is None and proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            if proc.poll() is None:
                kill_group(proc)
                proc.wait()
            _close_pipes(proc)
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close a stopped worker's stdin and stdout (the renderer's and the registry client's)."""
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _capped_exchange(proc: subprocess.Popen[bytes], request: bytes, deadline: Deadline,
                     limit: int) -> tuple[bytes | None, str]:
    """Send one request, read its one-line answer: (answer or None, "" or the cap it crossed: `time`, `output`,
    or `exit` when the worker ended without an answer)."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(request)
        proc.stdin.flush()
    except BrokenPipeError:  # a worker that died: its exit code and stderr say why
        return None, "exit"
    fd, parts, got = proc.stdout.fileno(), [], 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            if deadline.expired or not selector.select(deadline.left):
                return None, "time"
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None, "exit"
            parts.append(chunk)
            got += len(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(parts), ""
            if got > limit:
                return None, "output"


def _render_answer(folder: Path, answer: bytes | None, over: str, code: int | None, tail: str,
                   limits: RenderLimits) -> dict[str, str]:
    doing = f"Helm engine: render {folder.name}"
    if over == "time":
        detail = f"rendering took longer than {limits.seconds:g} s (the cap for one chart); stopped"
    elif over == "output":
        detail = f"the rendered manifests are larger than {limits.output_bytes:,} bytes (the cap for one chart)"
    elif any(sign in tail for sign in ("out of memory", "MemoryError", "annot allocate memory", "failed to reserve")):
        detail = f"rendering needs more than {limits.memory_bytes // 2**20} MiB of memory (the cap for one chart)"
    elif code == -signal.SIGXCPU:
        detail = f"rendering took longer than {limits.seconds:g} s of CPU time (the cap for one chart); stopped"
    elif code == -9 or code == 137 or (code is not None and code < 0):
        detail = f"the renderer was stopped by signal {-code if code < 0 else 9} (its CPU time or memory cap)"
    elif answer is None:
        raise ToolError(f"{doing}: the renderer exited (code {code}) without an answer: "
                        f"{' '.join(tail.split())[-300:]}")
    else:
        detail = ""
    if detail:
        raise HelmFailure(f"{doing}: {detail}", detail)
    try:
        data = json.loads(answer or b"")
    except ValueError:
        raise ToolError(f"{doing}: the renderer answered something that is not JSON") from None
    if isinstance(data, dict) and isinstance(data.get("ok"), dict):
        return {str(k): str(v) for k, v in data["ok"].items()}
    message = str(data.get("message", "")) if isinstance(data, dict) else repr(data)[:300]
    code_ = data.get("code") if isinstance(data, dict) else None
    raise HelmFailure(f"{doing}: {' '.join(message.split())}", message, code_ if isinstance(code_, int) else None)


def _worker_env() -> dict[str, str]:
    """The environment of the worker: this process's, with this copy of `generator` first on the path."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


@dataclass
class HelmRegistry:
    """Helm's OCI registry client (login, tags, pull, push); each call ends at its deadline."""

    plain_http: bool
    credentials_file: Path | None
    timeout_s: float
    redact: Callable[[str], str]
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _stderr: Any = field(default=None, repr=False)
    _buffer: bytes = field(default=b"", repr=False)

    # -- the worker -------------------------------------------------------------------------------
    def _start(self, deadline: Deadline) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the worker; closed in _stop)
        self._proc = subprocess.Popen([sys.executable, "-m", "generator.adapters.helm_registry_worker"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                      env=_worker_env(), start_new_session=True)
        self._buffer = b""
        self._send({"op": "open", "plain_http": self.plain_http,
                    "credentials_file": str(self.credentials_file) if self.credentials_file else None})
        self._check(self._answer(deadline, "start the Helm registry client"), "start the Helm registry client")

    def _send(self, request: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise self._died() from None

    def _died(self) -> ToolError:
        tail = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            tail = " ".join(self._stderr.read()[-400:].decode("utf-8", "replace").split())
        code = self._proc.poll() if self._proc is not None else None
        self._stop()
        return ToolError(self.redact(f"the Helm registry client exited (code {code}){': ' + tail if tail else ''}"))

    def _answer(self, deadline: Deadline, what: str) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if deadline.expired or not selector.select(deadline.left):
                    self._stop()
                    raise DeadlineExceeded(self.redact(f"{what}: no answer within the deadline of "
                                                       f"{deadline.seconds:g} s; stopped waiting"))
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise self._died()
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            self._stop()
            raise ToolError(self.redact(f"{what}: the Helm registry client answered {line[:200]!r}")) from None
        return answer if isinstance(answer, dict) else {"error": "answer", "message": repr(answer)}

    def _call(self, what: str, request: dict[str, Any]) -> Any:
        deadline = Deadline(self.timeout_s)
        self._start(deadline)
        self._send(request)
        return self._check(self._answer(deadline, what), what)

    def _check(self, answer: dict[str, Any], what: str) -> Any:
        if "error" in answer:
            detail = str(answer.get("message", ""))
            raise HelmFailure(self.redact(f"{what}: {' '.join(detail.split())}"), self.redact(detail),
                              answer.get("code"))
        return answer.get("ok")

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                kill_group(self._proc)
            _close_pipes(self._proc)
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- operations -------------------------------------------------------------------------------
    def login(self, host: str, user: str, password: str) -> None:
        self._call(f"login to {host} as {user}", {"op": "login", "host": host, "user": user, "password": password,
                                                  "plain_http": self.plain_http})

    def tags(self, ref: str) -> list[str]:
        return [str(t) for t in self._call(f"list the tags of {ref}", {"op": "tags", "ref": ref}) or []]

    def pull(self, ref: str, version: str, destination: Path) -> None:
        self._call(f"pull {ref}:{version}", {"op": "pull", "ref": ref, "version": version,
                                              "destination": str(destination)})

    def push(self, chart: Path, remote: str) -> None:
        self._call(f"push {chart.name} to {remote}", {"op": "push", "chart": str(chart), "remote": remote})

    def close(self) -> None:
        """End the worker: EOF on its stdin, then a kill if it does not exit promptly."""
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self._stop()


__all__ = ["CappedRenderer", "Helm", "HelmFailure", "HelmRegistry", "LintMessage", "LintReport", "RenderLimits"]
