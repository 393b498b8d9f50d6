"""`catalog doctor APP --kube-context CTX`: the running pod against its chart, and the crashes its logs show."""


import json
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core import markup, printable

if TYPE_CHECKING:
    from generator.smoke import Diagnosis


@app.command()
def doctor(
    app_name: Annotated[str, typer.Argument(help="The app to examine.", show_default=False)],
    kube_context: Annotated[str | None, typer.Option(
        "--kube-context", help="The kubeconfig context of the cluster (default: the current context).")] = None,
    namespace: Annotated[str | None, typer.Option(
        "--namespace", help="The app's namespace on the cluster (default: search every namespace).")] = None,
    logs: Annotated[int, typer.Option(
        "--logs", min=0, max=10000, help="Log lines to read from the engine (and from its previous instance).")] = 200,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, help="Seconds allowed for all the calls to the Kubernetes API together.")] = 60.0,
    as_json: JsonOpt = False,
    catalog: CatalogOpt = None,
) -> None:
    """Read the app's running pod (image, args, env, gpumem, restarts, last termination, recent logs), compare it
    with the chart and the memory fit, and name any known crash signature with its rule and fix.

    Exit 0 when the pod matches its chart and shows nothing known, 1 on drift, a signature or a crashing pod,
    2 when the cluster cannot be reached within --timeout.
    """
    from generator.adapters import Deadline
    from generator.adapters import Kube
    from generator.chart.plan import plan
    from generator.smoke import diagnose, observe

    cat = load_catalog(use_catalog(catalog, command="doctor", writes=False, quiet=as_json))
    spec = plan(cat.select([app_name])[0])
    kube = Kube.from_kubeconfig(kube_context, timeout_s=timeout, deadline=Deadline(timeout))
    found = diagnose(observe(kube, app_name, namespace, log_lines=logs), spec)
    if as_json:
        print(json.dumps(found.as_dict(), indent=2), flush=True)
    else:
        _report(found)
    raise typer.Exit(0 if found.clean else 1)


def _report(found: "Diagnosis") -> None:
    """For people. Everything read from the cluster is redacted and escaped (rich markup shown, not applied)."""
    from rich.console import Console
    from rich.table import Table

    console, obs, engine = Console(), found.observation, found.observation.engine

    def say(text: str, style: str | None = None) -> None:
        console.print(printable(found.show(text)), style=style, markup=False, highlight=False)

    say(f"{obs.app}: {obs.label} (Service {obs.service.namespace}/{obs.service.name})", "bold")
    say(f"  image {engine.image}" + (f" ({engine.image_id})" if engine.image_id else ""))
    say(f"  phase {obs.pod.phase}, ready {'yes' if engine.ready else 'no'}, state {engine.state}, "
        f"restarts {engine.restart_count}")
    if engine.last_termination is not None:
        say(f"  last termination: {engine.last_termination}")
    read = ", ".join(f"{len(t.lines)} line(s) of the {'previous' if t.previous else 'current'} log" for t in obs.logs)
    say(f"  read {read or 'no log'}", "dim")
    if found.drift:
        table = Table(title="drift: chart -> pod")
        for column in ("field", "chart", "pod", "note"):
            table.add_column(column, overflow="fold")
        for d in found.drift:
            table.add_row(*(markup(printable(found.show(v))) for v in (d.field, d.chart, d.pod, d.note)))
        console.print(table)
    for hit in found.hits:
        say(f"signature {hit.signature.id} [{hit.signature.rule}] in the {hit.where}: {hit.signature.title}", "red")
        say(f"    {hit.line}", "dim")
        say(f"    fix: {hit.signature.fix}")
    for problem in found.problems:
        say(f"pod: {problem.what}", "red")
        say(f"    fix: {problem.fix}")
    if found.clean:
        say("clean: the pod runs what the chart says, and shows no known crash", "green")
    else:
        say(f"{len(found.drift)} drift, {len(found.hits)} signature(s), {len(found.problems)} state problem(s)",
            "bold")
