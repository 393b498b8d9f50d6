"""Benchmark, not a test: `catalog serve` against a static file server serving the same JSON, 200 clients.

Both servers run on 127.0.0.1 in subprocesses, started and killed by this script (by PID), in the same run:
- `catalog serve` on the embedded catalog (uvicorn + Starlette, the answers prepared at start);
- Python's `http.server` (ThreadingHTTPServer, HTTP/1.1 keep-alive) serving files holding the bytes
  `catalog serve` answered: hash, info, and the details of one batch of 10 apps.
For each route, rounds alternate between the two servers; each round is 200 concurrent keep-alive clients
(asyncio streams and a minimal HTTP/1.1 client, spread over client processes; httpx's connection
pool cost more than the servers at 200 connections) sending requests for a fixed time. The figures are the
medians over the rounds: requests/s and the 99th percentile latency. The static server cannot answer a
POST: its details file is fetched with a GET (the same bytes).

    .venv/bin/python bench/serve_bench.py [--clients 200] [--seconds 5] [--rounds 3] [--procs 2] [--json]

Bounded: at most rounds x seconds per route and server, every request with a 30 s timeout; the servers are
killed at the end whatever happens. Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
STATIC_SERVER = r"""
import functools, sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn
    def log_message(self, *args):
        pass

ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 1024
server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), functools.partial(Handler, directory=sys.argv[1]))
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_up(url: str, proc: subprocess.Popen, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} not up after {seconds}s")


async def _one_client(host: str, port: int, request: bytes, stop: float, latencies: list[float],
                      interval: float, offset: float) -> int:
    """One keep-alive connection sending `request` until `stop`; a minimal HTTP/1.1 client (Content-Length
    bodies), so that the load generator costs little next to the servers. `interval` 0: the next request as
    soon as the answer is read (closed loop); else one request every `interval` seconds from `offset` on
    (paced: latency is measured from the request's scheduled time, so a late server is not excused).
    Returns the errors."""
    errors = 0
    reader, writer = await asyncio.open_connection(host, port)
    slot = time.perf_counter() + offset
    try:
        while time.perf_counter() < stop:
            if interval:
                await asyncio.sleep(max(0.0, slot - time.perf_counter()))
                start, slot = slot, slot + interval
            else:
                start = time.perf_counter()
            writer.write(request)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            status = int(head.split(b" ", 2)[1])
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await asyncio.wait_for(reader.readexactly(length), 30)
            if status != 200:
                errors += 1
                continue
            latencies.append(time.perf_counter() - start)
            if b"connection: close" in head.lower():
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
    except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        errors += 1
    finally:
        writer.close()
    return errors


async def _clients(method: str, url: str, body: bytes | None, clients: int, seconds: float,
                   interval: float = 0.0) -> tuple[list[float], int]:
    parts = httpx.URL(url)
    request = (f"{method} {parts.raw_path.decode()} HTTP/1.1\r\nHost: {parts.host}:{parts.port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body or b'')}\r\n\r\n").encode() + (body or b"")
    latencies: list[float] = []
    stop = time.perf_counter() + seconds
    errors = await asyncio.gather(*(_one_client(parts.host, parts.port, request, stop, latencies, interval,
                                                interval * i / clients) for i in range(clients)))
    return latencies, sum(errors)


def _proc_main(args: tuple) -> tuple[list[float], int]:
    return asyncio.run(_clients(*args))


def load(method: str, url: str, body: bytes | None, clients: int, seconds: float, procs: int, pool,
         interval: float = 0.0) -> dict:
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    start = time.perf_counter()
    results = pool.map(_proc_main, [(method, url, body, n, seconds, interval) for n in per])
    wall = time.perf_counter() - start
    latencies = sorted(x for lat, _ in results for x in lat)
    errors = sum(e for _, e in results)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan")
    return {"requests": len(latencies), "errors": errors, "rps": len(latencies) / seconds, "wall_s": wall,
            "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"), "p99_ms": 1000 * p99}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--procs", type=int, default=2, help="client processes (the clients are spread over them)")
    parser.add_argument("--paced-rps", type=float, default=1000.0,
                        help="offered load of the paced rounds (each client sends every clients/rps seconds)")
    parser.add_argument("--access-log", action="store_true", help="run catalog serve with its access log on")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    procs: list[subprocess.Popen] = []
    work = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    try:
        port = free_port()
        serve = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port),
                                  "--access-log" if args.access_log else "--no-access-log"], cwd=REPO,
                                 stdout=subprocess.DEVNULL, stderr=(work / "serve.log").open("wb"))
        procs.append(serve)
        ours = f"http://127.0.0.1:{port}"
        wait_up(ours + "/health", serve)
        # every request as a device of the committed charts' format asks (docs/market-source.md "One catalog,
        # two formats"): olares-v2 charts for an Olares 1.12.3 device, olares-v3 ones for 1.12.6
        from generator.catalog import EMBEDDED, load_catalog

        device = {"olares-v2": "1.12.3", "olares-v3": "1.12.6"}[load_catalog(EMBEDDED).market.profile]
        query = f"?version={device}"
        ids = list(httpx.get(ours + "/api/v1/appstore/info" + query).json()["data"]["apps"])[:10]
        body = json.dumps({"app_ids": ids, "version": device}).encode()
        static_dir = work / "static"
        static_dir.mkdir()
        (static_dir / "hash.json").write_bytes(httpx.get(ours + "/api/v1/appstore/hash" + query).content)
        (static_dir / "info.json").write_bytes(httpx.get(ours + "/api/v1/appstore/info" + query).content)
        (static_dir / "details.json").write_bytes(httpx.post(ours + "/api/v1/applications/info", content=body).content)
        sport = free_port()
        static = subprocess.Popen([sys.executable, "-c", STATIC_SERVER, str(static_dir), str(sport)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(static)
        theirs = f"http://127.0.0.1:{sport}"
        wait_up(theirs + "/hash.json", static)
        routes = {
            "hash": (("GET", ours + "/api/v1/appstore/hash" + query, None), ("GET", theirs + "/hash.json", None)),
            "info": (("GET", ours + "/api/v1/appstore/info" + query, None), ("GET", theirs + "/info.json", None)),
            "details (10 apps)": (("POST", ours + "/api/v1/applications/info", body),
                                  ("GET", theirs + "/details.json", None)),
        }
        sizes = {name: len((static_dir / f).read_bytes()) for name, f in
                 (("hash", "hash.json"), ("info", "info.json"), ("details (10 apps)", "details.json"))}
        report = {"load_before": os.getloadavg(), "cpus": os.cpu_count(), "clients": args.clients,
                  "seconds": args.seconds, "rounds": args.rounds, "procs": args.procs, "routes": {}}
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(args.procs) as pool:
            for name, (mine, static_route) in routes.items():
                load(*mine, args.clients, 1.0, args.procs, pool)  # warm-up
                load(*static_route, args.clients, 1.0, args.procs, pool)
                rounds: dict[str, list[dict]] = {"serve": [], "static": [], "serve paced": [], "static paced": []}
                interval = args.clients / args.paced_rps
                for _ in range(args.rounds):
                    rounds["serve"].append(load(*mine, args.clients, args.seconds, args.procs, pool))
                    rounds["static"].append(load(*static_route, args.clients, args.seconds, args.procs, pool))
                    rounds["serve paced"].append(load(*mine, args.clients, args.seconds, args.procs, pool, interval))
                    rounds["static paced"].append(load(*static_route, args.clients, args.seconds, args.procs, pool,
                                                       interval))
                med = {k: {m: statistics.median(r[m] for r in v) for m in ("rps", "p50_ms", "p99_ms")}
                       for k, v in rounds.items()}
                report["routes"][name] = {"bytes": sizes[name], "median": med, "rounds": rounds,
                                          "rps_ratio": med["serve"]["rps"] / med["static"]["rps"],
                                          "errors": sum(r["errors"] for v in rounds.values() for r in v)}
        report["load_after"] = os.getloadavg()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.clients} clients over {args.procs} processes, {args.rounds} x {args.seconds:g} s rounds per server; "
          f"load average before {report['load_before'][0]:.2f}, after {report['load_after'][0]:.2f}")
    print(f"closed loop: each client sends its next request when the answer arrives; paced: {args.paced_rps:g} "
          f"requests/s offered in all")
    print(f"{'route':<18} {'bytes':>6} | {'serve rps':>9} {'p99 ms':>7} | {'static rps':>10} {'p99 ms':>7} | "
          f"{'ratio':>5} | {'paced p50/p99 ms: serve':>24} {'static':>12} | {'errors':>6}")
    for name, r in report["routes"].items():
        m = r["median"]
        s, t, sp, tp = m["serve"], m["static"], m["serve paced"], m["static paced"]
        print(f"{name:<18} {r['bytes']:>6} | {s['rps']:>9.0f} {s['p99_ms']:>7.1f} |"
              f" {t['rps']:>10.0f} {t['p99_ms']:>7.1f} | {r['rps_ratio']:>5.2f} |"
              f" {sp['p50_ms']:>11.1f} / {sp['p99_ms']:>6.1f} {tp['p50_ms']:>5.1f} / {tp['p99_ms']:>5.1f}"
              f" | {r['errors']:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
