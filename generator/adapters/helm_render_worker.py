"""The Helm engine's chart rendering in a process of its own, under caps: `python -m
generator.adapters.helm_render_worker DATA_BYTES CPU_SECONDS`.

A chart from a stranger is a Go template, and a template can ask for anything: `{{ repeat 400000000 "x" }}` made
4.4 GB, `range until 30000000` 3.7 GB, in-process. helm_python calls Helm's Go SDK through ctypes and cannot be
interrupted, so `generator.adapters.helm.CappedRenderer` runs it here: this process limits its own data
segment (RLIMIT_DATA, setrlimit(2): since Linux 4.7 every private writable mapping counts, so Go's heap does) and
CPU time (RLIMIT_CPU, a fresh allowance before each render), and the parent kills it at its wall-clock
deadline and reads at most a capped number of bytes of its answer. Not RLIMIT_AS: Go's runtime reserves
~1.7 GB of address space (PROT_NONE, never touched) when the library loads, and under an address-space cap its later
arena reservations fail at random ("out of memory: cannot allocate 4194304-byte block (7897088 in use)"
on a one-line chart).

Protocol: one JSON request per line on stdin (`folder`, `values`, `name`, `namespace`), one JSON answer per line
on stdout (`{"ok": {path: text}}` or `{"error": class, "code": n, "message": text}`); one worker renders the
charts of one `catalog import` run. Only the standard library and helm_python are imported here.
"""

from __future__ import annotations

import json
import resource
import sys


def main(argv: list[str]) -> int:
    memory, cpu = int(argv[0]), int(argv[1])
    resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))  # Go reports "fatal error: out of memory"
    import helm_python as helm

    for line in sys.stdin:
        request = json.loads(line)
        # CPU time is counted over the process's life: each render gets `cpu` seconds more than used so far, so a
        # long honest import is not killed by the sum of its charts (the kernel sends SIGXCPU at the soft limit)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        resource.setrlimit(resource.RLIMIT_CPU, (int(usage.ru_utime + usage.ru_stime) + 1 + cpu,
                                                 resource.RLIM_INFINITY))
        try:
            with helm.Chart.load(request["folder"]) as chart:
                out = dict(chart.render(values=request["values"], name=request["name"],
                                        namespace=request["namespace"]))
            answer: dict[str, object] = {"ok": out}
        except helm.HelmError as exc:
            answer = {"error": type(exc).__name__, "code": getattr(exc, "code", None), "message": str(exc)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
