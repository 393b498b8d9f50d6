#!/usr/bin/env python3
"""Run llama-server on real-shape models at each llama.cpp app's configuration and keep what it reports.

  plan   (repo venv)  python scripts/fit_probe.py plan --out DIR [APP ...]
         writes DIR/<model>-<quant>[-mtp].gguf (sparse, generator/fit/realshape.py) and DIR/plan.json
  run    (stdlib only: runs where the GPU is)  python3 scripts/fit_probe.py run --server BIN --plan DIR/plan.json
         --out OUTDIR [--gpu] boots llama-server once per app (`-lv 4` so the buffer lines show, `--no-warmup`,
         `--fit off`), waits for "listening", asks for 8 tokens, and writes OUTDIR/<app>.log plus one line per app
         in OUTDIR/runs.jsonl with the process's GPU memory (nvidia-smi --query-compute-apps) at boot and after the
         request
  report (repo venv)  python scripts/fit_probe.py report --plan DIR/plan.json --runs OUTDIR [--markdown FILE]
         parses the logs (generator/fit/calibrate.py) and compares them with the fit, part by part

`run` needs nothing but the Python standard library, so it runs on a bare GPU machine next to a llama.cpp build.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _gpu_mib(pid: int) -> float | None:
    """The process's GPU memory in MiB from nvidia-smi (NVML), or None where there is no GPU."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(pid):
            return float(parts[1])
    return None


def run_one(server: str, gguf: str, args: list[str], log: Path, *, gpu: bool, timeout: float = 300,
            threads: int = 2, request: bool = True, warmup: bool = False) -> dict[str, object]:
    """Boot llama-server, wait for it to listen (or die), optionally ask for 8 tokens, stop it; return the facts.

    On a CPU, no request: generating would read every (all-zero, sparse) weight page into the page cache.
    `warmup`: leave llama-server's warmup on (the vision projector reserves its compute buffer only then:
    tools/server/server-context.cpp mparams.warmup = params_base.warmup).
    """
    port = _free_port()
    argv = [server, "-m", gguf, "--host", "127.0.0.1", "--port", str(port), *([] if warmup else ["--no-warmup"]),
            "--fit", "off", "-lv", "4", "-t", str(threads), *args]
    argv += ["-ngl", "99"] if gpu else ["--no-repack"]
    result: dict[str, object] = {"argv": argv[1:], "listening": False}
    start = time.monotonic()
    with log.open("w") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while time.monotonic() - start < timeout:
                if proc.poll() is not None:
                    break
                if "server is listening" in log.read_text(errors="replace") or \
                        "listening on http" in log.read_text(errors="replace"):
                    result["listening"] = True
                    break
                time.sleep(0.5)
            result["boot_s"] = round(time.monotonic() - start, 1)
            if result["listening"]:
                result["gpu_mib_boot"] = _gpu_mib(proc.pid) if gpu else None
                if request:
                    body = json.dumps({"prompt": "hello world", "n_predict": 8}).encode()
                    try:
                        req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body,
                                                     headers={"Content-Type": "application/json"})
                        with urllib.request.urlopen(req, timeout=120) as resp:
                            result["request_status"] = resp.status
                    except OSError as exc:
                        result["request_error"] = str(exc)
                    result["gpu_mib_after_request"] = _gpu_mib(proc.pid) if gpu else None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        result["exit"] = proc.returncode
    return result


def cmd_run(ns: argparse.Namespace) -> int:
    plan = json.loads(Path(ns.plan).read_text())
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    base = Path(ns.plan).parent
    started = time.monotonic()
    with (out / "runs.jsonl").open("a") as runs:
        for entry in plan:
            if ns.only and entry["app"] not in ns.only:
                continue
            if ns.deadline and time.monotonic() - started > ns.deadline:
                print(f"deadline: {entry['app']} not run", flush=True)
                continue
            gguf = str(base / entry["gguf"])
            facts = run_one(ns.server, gguf, entry["args"], out / f"{entry['app']}.log", gpu=ns.gpu,
                            timeout=ns.timeout, threads=ns.threads, request=ns.gpu)
            facts["app"] = entry["app"]
            runs.write(json.dumps(facts) + "\n")
            runs.flush()
            print(json.dumps({k: facts.get(k) for k in ("app", "listening", "boot_s", "gpu_mib_boot",
                                                         "gpu_mib_after_request", "exit")}), flush=True)
    return 0


def cmd_plan(ns: argparse.Namespace) -> int:
    from generator.catalog import load_catalog
    from generator.fit import realshape
    from generator.fit.probe import probe_for

    cat = load_catalog(ns.catalog)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    plan = []
    for r in cat.select(ns.apps, include_removed=True):
        probe = probe_for(r)
        if probe is None:
            continue
        name = f"{probe.model}-{probe.quant}{'-mtp' if probe.mtp else ''}.gguf"
        if not (out / name).exists():
            realshape.write(r.model, probe.quant, out / name, mtp=probe.mtp)
        spec = realshape.spec_for(r.model, probe.quant, mtp=probe.mtp)
        plan.append({"app": probe.app, "gguf": name, "args": list(probe.args), "notes": list(probe.notes),
                     "expected": dict(_summed(probe.expected)), "tensor_mib": spec.tensor_bytes / 2**20,
                     "token_embd_mib": spec.bytes_of("token_embd.") / 2**20})
        print(probe.app, name, " ".join(probe.args), flush=True)
    (out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
    return 0


def compare(plan_entry: dict, log_text: str, nvml_mib: float | None, catalog: str, *, rows: bool = True) -> dict:
    """Estimate vs measured, part by part, for one probe: the fit of today's code, weights taken as the probed file's
    tensor bytes (the real file's type mix is not the probe's), parts the probe does not load left out."""
    from dataclasses import replace

    from generator.catalog import load_catalog
    from generator.fit.calibrate import parse
    from generator.fit.probe import probe_for

    cat = load_catalog(catalog)
    r = cat.apps[plan_entry["app"]]
    if not rows:  # the formula alone: the app's calibration rows left out
        r = replace(r, app=r.app.model_copy(update={"calibration": ()}))
    probe = probe_for(r)
    assert probe is not None
    parsed = parse(log_text)
    gpu = any(x.device.startswith("CUDA") for x in parsed.readings if x.kind == "model_buffer")

    def dev_sum(kind: str, scope: int | None = None) -> float:
        return sum(x.value for x in parsed.all(kind) if (scope is None or x.scope == scope)
                   and (not x.device or (x.device.startswith("CUDA") and not x.device.startswith("CUDA_Host"))
                        or not gpu))

    file_mib = plan_entry["tensor_mib"]
    host = -probe.part("weights kept in host memory")
    rows = [
        ("weights on the GPU", file_mib - host, dev_sum("model_buffer")),
        ("KV (target)", probe.parts("KV full") + probe.parts("KV sliding") + probe.parts("KV shared"),
         sum(x.value for x in parsed.all("kv_buffer") if x.scope == 0)),
        ("KV (MTP draft context)", probe.part("KV MTP layer"),
         sum(x.value for x in parsed.all("kv_buffer") if x.scope)),
        ("recurrent state", probe.part("recurrent state"), dev_sum("recurrent_state")),
        ("compute buffer", probe.part("compute buffer"), dev_sum("compute_buffer", 0)),
        ("MTP draft compute buffer", probe.part("MTP draft compute buffer"), dev_sum("compute_buffer", 1)),
    ]
    measured_buffers = sum(m for _, _, m in rows)
    rows.append(("CUDA context", probe.part("CUDA context"), (nvml_mib - measured_buffers) if nvml_mib else 0.0))
    estimate = sum(e for _, e, _ in rows)
    return {"app": probe.app, "rows": rows, "estimate": estimate, "measured": nvml_mib or measured_buffers,
            "notes": list(probe.notes), "args": list(probe.args), "file_mib": file_mib,
            "catalog_weights_mib": probe.part("weights")}


def cmd_report(ns: argparse.Namespace) -> int:
    plan = {e["app"]: e for e in json.loads(Path(ns.plan).read_text())}
    runs = [json.loads(line) for line in (Path(ns.runs) / "runs.jsonl").read_text().splitlines() if line.strip()]
    out = []
    for run in runs:
        entry = plan[run["app"]]
        log = (Path(ns.runs) / f"{run['app']}.log").read_text(errors="replace")
        result = compare(entry, log, run.get("gpu_mib_after_request"), ns.catalog, rows=not ns.formula)
        result["gpu_mib_boot"] = run.get("gpu_mib_boot")
        out.append(result)
    Path(ns.json).write_text(json.dumps(out, indent=1) + "\n") if ns.json else None
    for result in out:
        err = (result["estimate"] - result["measured"]) / result["measured"] * 100
        print(f"{result['app']}: estimate {result['estimate']:,.0f} MiB, measured {result['measured']:,.0f} MiB "
              f"({err:+.1f} %)")
        for name, est, meas in result["rows"]:
            if est or meas:
                print(f"    {name:26s} {est:10,.1f} {meas:10,.1f}")
    return 0


def _summed(parts: tuple[tuple[str, float], ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for component, mib in parts:
        out[component] = out.get(component, 0.0) + mib
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--out", required=True)
    p.add_argument("--catalog", default="catalog")
    p.add_argument("apps", nargs="*")
    r = sub.add_parser("run")
    r.add_argument("--server", required=True)
    r.add_argument("--plan", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--gpu", action="store_true")
    r.add_argument("--timeout", type=float, default=300)
    r.add_argument("--threads", type=int, default=8)
    r.add_argument("--only", nargs="*")
    r.add_argument("--deadline", type=float, default=0, help="start no new run after this many seconds")
    c = sub.add_parser("report")
    c.add_argument("--plan", required=True)
    c.add_argument("--runs", required=True)
    c.add_argument("--catalog", default="catalog")
    c.add_argument("--json")
    c.add_argument("--formula", action="store_true", help="leave the apps' calibration rows out")
    ns = parser.parse_args(argv)
    return {"plan": cmd_plan, "run": cmd_run, "report": cmd_report}[ns.cmd](ns)


if __name__ == "__main__":
    sys.exit(main())
