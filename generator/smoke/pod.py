"""What an app's running pod is, against what its chart says: the pod half of `catalog doctor` (docs/doctor.md),
usable by `catalog smoke --kube-context` to record the image and args it measured.

`observe()` finds the app's Service as the port-forward does (`kube_forward.app_service`), picks the pod behind
it (the first Running and Ready one, as the forward does, else the newest: a crash-looping pod is never Ready),
and reads its engine container through the Kube adapter: image, image ID, command, args, env, the
`nvidia.com/gpumem` request and limit, restarts, state, the last termination, and the last lines of its log
(and of the previous instance's log when it restarted: the crash is there).

`compare_pod()` lists the drift between that container and the chart's plan (`ChartSpec`): image, command,
args, env (an entry the chart does not set, such as a `CUDA_DEVICE_MEMORY_LIMIT_0` HAMi or a webhook added, is
drift too), gpumem, and the gpumem against the GPU memory the fit says the app needs. `diagnose()` adds the
known crash signatures found in the env and the logs (generator/rules/signatures.py) and the pod's own state
(OOMKilled, CrashLoopBackOff). Every value that leaves here for display passes the one redactor: an env value
whose name names a secret is never shown, and such values are masked wherever else they appear (logs).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from generator.adapters import ContainerView, EnvEntry, Kube, PodView
from generator.chart import CONTAINER, ChartSpec
from generator.core import Data
from generator.core import CatalogError, UsageError
from generator.core import MASK
from generator.core.redact import redact
from generator.core import safe_line
from generator.engines import EnvVar
from generator.engines import patch_states
from generator.rules import hami_bytes
from generator.rules import SIGNATURES, Signature
from generator.schema import GenesisRegistry
from generator.smoke.kube_forward import AppService, app_service

DEFAULT_LOG_LINES = 200
MAX_LINE_CHARS = 400  # a log line shown in a finding is cut here
# Entries the chart's deployment template adds itself, outside values.engine.env
# (templates/chart/templates/deployment.yaml.j2): HF_ENDPOINT from Olares' env, HF_TOKEN from the app's Secret.
TEMPLATE_ENV = ("HF_ENDPOINT", "HF_TOKEN")
# Waiting reasons of a container that is not running and will not by itself (kubernetes.io/docs/concepts/
# workloads/pods/pod-lifecycle/#container-state-waiting; images: .../containers/images/#imagepullbackoff).
BAD_WAITING = ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
               "CreateContainerError", "RunContainerError")
NOT_SET = "(not set)"


@dataclass(frozen=True)
class LogTail:
    container: str
    previous: bool  # the log of the instance that ended before the current one
    lines: tuple[str, ...]


@dataclass(frozen=True)
class PodObservation:
    app: str
    service: AppService
    pod: PodView
    engine: ContainerView  # the chart's engine container
    logs: tuple[LogTail, ...] = ()

    @property
    def label(self) -> str:
        """How a report names the pod (no cluster credentials in it)."""
        return f"kube:{self.pod.namespace}/pod/{self.pod.name} container {self.engine.name}"


@dataclass(frozen=True)
class Drift:
    field: str  # `image`, `args`, `env NAME`, `gpumem request`, ...
    chart: str  # what the chart's plan says (NOT_SET when it says nothing)
    pod: str  # what the pod's spec says
    note: str = ""

    def as_dict(self) -> dict[str, Data]:
        return {"field": self.field, "chart": self.chart, "pod": self.pod, "note": self.note}


@dataclass(frozen=True)
class Hit:
    """A known crash signature found in the pod."""

    signature: Signature
    where: str  # `env`, `log`, `previous log`
    line: str  # the matching line, redacted and cut

    def as_dict(self) -> dict[str, Data]:
        s = self.signature
        return {"signature": s.id, "rule": s.rule, "title": s.title, "fix": s.fix, "where": self.where,
                "line": self.line, "source": s.source}


@dataclass(frozen=True)
class StateProblem:
    what: str
    fix: str

    def as_dict(self) -> dict[str, Data]:
        return {"what": self.what, "fix": self.fix}


@dataclass(frozen=True)
class Diagnosis:
    observation: PodObservation
    drift: list[Drift]
    hits: list[Hit]
    problems: list[StateProblem]
    secrets: tuple[str, ...] = field(default=(), repr=False)  # values masked wherever they appear

    @property
    def clean(self) -> bool:
        return not (self.drift or self.hits or self.problems)

    def as_dict(self) -> dict[str, Data]:
        obs, engine = self.observation, self.observation.engine
        last = engine.last_termination
        return {
            "app": obs.app, "namespace": obs.pod.namespace, "service": obs.service.name, "pod": obs.pod.name,
            "phase": obs.pod.phase, "container": engine.name, "image": self.show(engine.image),
            "image_id": self.show(engine.image_id), "ready": engine.ready, "restarts": engine.restart_count,
            "state": self.show(engine.state),
            "last_termination": None if last is None else {
                "reason": self.show(last.reason), "exit_code": last.exit_code, "finished_at": last.finished_at},
            "drift": [{k: self.show(str(v)) for k, v in d.as_dict().items()} for d in self.drift],
            "signatures": [h.as_dict() for h in self.hits],
            "problems": [p.as_dict() for p in self.problems], "clean": self.clean,
        }

    def show(self, text: str) -> str:
        return redact(text, self.secrets)


# ---- observing -----------------------------------------------------------------------------------------------

def choose_pod(pods: list[PodView], name: str | None = None) -> PodView | None:
    """`name` if given; else the first Running and Ready pod (the one the port-forward picks), else the newest."""
    live = [p for p in pods if not p.deleting]
    if name is not None:
        return next((p for p in pods if p.name == name), None)
    ready = next((p for p in live if p.phase == "Running" and p.ready), None)
    if ready is not None:
        return ready
    return max(live, key=lambda p: p.created, default=None)


def engine_container(pod: PodView) -> ContainerView:
    """The chart's engine container: by its name, else the one asking for GPU memory, else the first."""
    by_name = next((c for c in pod.containers if c.name == CONTAINER), None)
    if by_name is not None:
        return by_name
    gpu = next((c for c in pod.containers if c.gpumem_request or c.gpumem_limit), None)
    if gpu is not None:
        return gpu
    if not pod.containers:
        raise UsageError(f"pod {pod.namespace}/{pod.name} has no containers")
    return pod.containers[0]


def observe(kube: Kube, app: str, namespace: str | None, *, log_lines: int = DEFAULT_LOG_LINES,
            pod_name: str | None = None) -> PodObservation:
    """The app's pod as its spec, status and recent logs show it (`log_lines=0`: no log read)."""
    service, _ = app_service(kube, app, namespace)
    pods = kube.pods(service.namespace, service.label_selector)
    pod = choose_pod(pods, pod_name)
    if pod is None:
        which = f"named {pod_name} " if pod_name else ""
        raise UsageError(f"no pod {which}behind Service {service.namespace}/{service.name} "
                         f"(selector {service.label_selector}); is the app running?")
    engine = engine_container(pod)
    logs: list[LogTail] = []
    if log_lines > 0:
        if engine.restart_count > 0 or engine.last_termination is not None:
            previous = kube.pod_log(pod.name, pod.namespace, engine.name, tail_lines=log_lines, previous=True)
            if previous is not None:
                logs.append(LogTail(engine.name, True, tuple(previous.splitlines())))
        current = kube.pod_log(pod.name, pod.namespace, engine.name, tail_lines=log_lines)
        if current is not None:
            logs.append(LogTail(engine.name, False, tuple(current.splitlines())))
    return PodObservation(app, service, pod, engine, tuple(logs))


# ---- comparing -----------------------------------------------------------------------------------------------

def secret_name(name: str) -> bool:
    """Whether the redactor treats `name` as the key of a secret (HF_TOKEN, API_KEY, *_PASSWORD, ...)."""
    probe = f"{name}=value"
    return redact(probe) != probe


def secret_values(container: ContainerView) -> tuple[str, ...]:
    """What in `container` must never be shown: the literal values of env entries whose name names a secret,
    and the values of flags whose name does (`--api-key VALUE`, `--hf-token=VALUE`)."""
    found = [e.value for e in container.env if e.value and secret_name(e.name)]
    args = (*container.command, *container.args)
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if secret_name(name):
            found.append(value if eq else (args[index + 1] if index + 1 < len(args) else ""))
    return tuple(v for v in found if v)


def _effective(env: tuple[EnvEntry, ...]) -> dict[str, EnvEntry]:
    out: dict[str, EnvEntry] = {}
    for entry in env:  # the last entry of a name wins (Kubernetes)
        out.pop(entry.name, None)
        out[entry.name] = entry
    return out


def _shown(name: str, entry: EnvEntry | None) -> str:
    if entry is None:
        return NOT_SET
    if entry.value is None:
        return f"(from {entry.source})"
    return MASK if secret_name(name) and entry.value else entry.value


def _words(items: tuple[str, ...] | list[str]) -> str:
    return " ".join(items) if items else "(none)"


def _seq_drift(name: str, chart: tuple[str, ...], pod: tuple[str, ...]) -> list[Drift]:
    """Each stretch where the pod's list differs from the chart's, as one Drift."""
    if chart == pod:
        return []
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=chart, b=pod, autojunk=False).get_opcodes():
        if op != "equal":
            out.append(Drift(name, _words(chart[i1:i2]), _words(pod[j1:j2]), f"{op} at position {i1}"))
    return out


def _mib(quantity: str | None) -> float | None:
    """HAMi's gpumem is a bare integer of MiB; a quantity with a unit is shown as it is (docs/domain.md#hami)."""
    if quantity is None:
        return None
    return float(quantity) if quantity.strip().isdigit() else None


def _fit_cap_mib(spec: ChartSpec) -> int | None:
    """The GPU memory the fit sizes for the app (generator/fit/sizing.py: need + margin, within the device cap)."""
    from generator.fit import size_gpu

    try:
        return size_gpu(spec.resolved).cap_mib
    except CatalogError:  # an app the fit cannot place: the gpumem is still compared with the chart
        return None


def compare_pod(observation: PodObservation, spec: ChartSpec) -> list[Drift]:
    """Where the pod's engine container differs from the chart's plan, field by field."""
    engine, values = observation.engine, spec.values.engine
    drift: list[Drift] = []
    if engine.image != values.image:
        drift.append(Drift("image", values.image, engine.image))
    drift += _seq_drift("command", values.command, engine.command)
    drift += _seq_drift("args", values.args, engine.args)
    drift += _env_drift(engine, {e.name: e.value for e in values.env})
    drift += _gpumem_drift(engine, spec)
    return drift


def _env_drift(engine: ContainerView, chart: dict[str, str]) -> list[Drift]:
    pod = _effective(engine.env)
    counts: dict[str, int] = {}
    for entry in engine.env:
        counts[entry.name] = counts.get(entry.name, 0) + 1
    out = []
    for name in [*chart, *(n for n in pod if n not in chart and n not in TEMPLATE_ENV)]:
        want, have = chart.get(name), pod.get(name)
        if have is not None and have.value is not None and have.value == want:
            continue
        notes = []
        if want is None:
            notes.append("not in the chart: added to the pod outside it (HAMi / an Olares webhook / by hand)")
        if counts.get(name, 0) > 1:
            notes.append(f"set {counts[name]} times in the pod; the last one wins")
        shown_want = NOT_SET if want is None else (MASK if secret_name(name) and want else want)
        out.append(Drift(f"env {name}", shown_want, _shown(name, have), "; ".join(notes)))
    return out


def _gpumem_drift(engine: ContainerView, spec: ChartSpec) -> list[Drift]:
    res = spec.values.engine.resources
    out = []
    for kind, want, have in (("request", res.requests.gpumem, engine.gpumem_request),
                             ("limit", res.limits.gpumem, engine.gpumem_limit)):
        if _mib(have) != float(want):
            note = "" if have is None or _mib(have) is not None else "HAMi reads gpumem as a bare integer of MiB"
            out.append(Drift(f"gpumem {kind} (MiB)", str(want), have or NOT_SET, note))
    sized = _fit_cap_mib(spec)
    held = [m for m in (_mib(engine.gpumem_limit), _mib(engine.gpumem_request)) if m is not None]
    if sized is not None and held and min(held) < sized:
        out.append(Drift("gpumem vs the fit (MiB)", f"sized {sized:,}", f"{min(held):,.0f}",
                         "below the GPU memory the fit sizes for this app: expect an OOM (FIT001)"))
    limit = _effective(engine.env).get("CUDA_DEVICE_MEMORY_LIMIT_0")
    if limit is not None and limit.value is not None and held:
        limit_mib = hami_bytes(limit.value) / 1024**2
        if limit_mib and abs(limit_mib - max(held)) > 0.5:
            out.append(Drift("HAMi limit vs gpumem (MiB)", f"{max(held):,.0f}", f"{limit_mib:,.0f}",
                             "the scheduler places the pod by gpumem, libvgpu caps it by the env (HAMI005)"))
    return out


# ---- signatures and state ------------------------------------------------------------------------------------

def _patch_on(engine: ContainerView, registry: GenesisRegistry | None, patch: str) -> bool:
    if registry is None:
        return False
    env = tuple(EnvVar(e.name, e.value, "pod") for e in _effective(engine.env).values() if e.value is not None)
    state = patch_states(registry, env).get(patch)
    return state is not None and state.on


def scan(observation: PodObservation, registry: GenesisRegistry | None = None,
         signatures: tuple[Signature, ...] = SIGNATURES) -> list[Hit]:
    """Each known signature found in the engine's env or its logs, once, with the latest line that shows it."""
    engine = observation.engine
    secrets = secret_values(engine)
    env_lines = [f"{e.name}={e.value}" for e in _effective(engine.env).values() if e.value is not None]
    hits = []
    for sig in signatures:
        if sig.needs_patch and not _patch_on(engine, registry, sig.needs_patch):
            continue
        found: tuple[str, str] | None = None
        if sig.where == "env":
            found = next((("env", line) for line in env_lines if sig.matches(line)), None)
        else:
            for tail in observation.logs:  # the previous instance's log first, so the current one's wins
                for line in tail.lines:
                    if sig.matches(line):
                        found = ("previous log" if tail.previous else "log", line)
        if found is not None:
            hits.append(Hit(sig, found[0], safe_line(redact(found[1], secrets), MAX_LINE_CHARS)))
    return hits


def state_problems(observation: PodObservation) -> list[StateProblem]:
    """What the engine container's status says is wrong, whatever its logs show."""
    engine, out = observation.engine, []
    last = engine.last_termination
    if last is not None and last.reason == "OOMKilled":
        out.append(StateProblem(
            f"the engine's previous instance was {last}: it went over its host memory limit "
            f"({engine.limits.get('memory', 'no limit')}), not the GPU's",
            "raise the app's resources.memory_limit, or lower what the engine keeps in host memory"))
    reason = engine.state.removeprefix("waiting: ") if engine.state.startswith("waiting: ") else ""
    if reason in BAD_WAITING:
        out.append(StateProblem(f"the engine is {reason} after {engine.restart_count} restart(s)",
                                "see the signatures and the last termination above; `kubectl describe pod` "
                                "shows the kubelet's events"))
    return out


def diagnose(observation: PodObservation, spec: ChartSpec) -> Diagnosis:
    """Drift, signatures and state of the pod, against the chart's plan (`spec.resolved` is the sized app)."""
    return Diagnosis(observation, compare_pod(observation, spec), scan(observation, spec.resolved.genesis),
                     state_problems(observation), secret_values(observation.engine))


__all__ = ["BAD_WAITING", "DEFAULT_LOG_LINES", "Diagnosis", "Drift", "Hit", "LogTail", "PodObservation",
           "StateProblem", "TEMPLATE_ENV", "choose_pod", "compare_pod", "diagnose", "engine_container", "observe",
           "scan", "secret_name", "secret_values", "state_problems"]
