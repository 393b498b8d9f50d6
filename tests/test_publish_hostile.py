"""`catalog publish` against hostile targets: a registry that accepts and never answers, a GitHub API
stand-in that trickles its headers, and a decompression bomb already sitting at a `dir:` target.

Each must end within its deadline (or bounded memory) with a non-zero exit and a message on the row.
The servers are real sockets on 127.0.0.1 (tests/support/hostile_servers.py); the trickling one is a STAND-IN
for the GitHub API (no GitHub can run here)."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from support.bump import run_cli
from support.hostile_servers import elapsed, silent_server, trickle_server
from support.publish import bare_market

APP, VERSION = "gemma4e2bone", "1.0.2"
APPS = ("gemma426ba4bone", "gemma4e2bone", "vllmqwen36turbo27bone")


def _rows(out: str) -> dict[str, dict]:
    return {row["app"]: row for row in json.loads(out)}


# --- deadlines ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("plain_http", [True, False], ids=["plain-http", "tls"])
def test_registry_that_never_answers_ends_within_the_deadline(capsys, recorded: Path, plain_http: bool) -> None:
    with silent_server() as port:
        ref = f"oci://127.0.0.1:{port}/charts"
        start = time.monotonic()
        code, out, err = run_cli(capsys, "publish", "--to", ref, "--catalog", recorded, "--json", "--timeout", "3",
                                 *(["--plain-http"] if plain_http else []))
        took = elapsed(start)
    assert code == 1 and took < 3 + 6, (took, out, err)
    rows = _rows(out)
    first, *rest = (rows[app] for app in APPS)
    assert first["action"] == "failed" and "no answer within the deadline of 3 s" in first["detail"]
    assert all(r["action"] == "failed" and r["detail"].startswith("not tried:") for r in rest)
    assert "not published" in err


def test_registry_login_that_never_answers_ends_within_the_deadline(capsys, recorded: Path, monkeypatch) -> None:
    monkeypatch.setenv("CATALOG_REGISTRY_USERNAME", "alice")
    monkeypatch.setenv("CATALOG_REGISTRY_PASSWORD", "pw-never-printed-42")
    with silent_server() as port:
        start = time.monotonic()
        code, out, err = run_cli(capsys, "publish", APP, "--to", f"oci://127.0.0.1:{port}/charts", "--plain-http",
                                 "--catalog", recorded, "--json", "--timeout", "2")
        took = elapsed(start)
    assert code == 1 and took < 2 + 6
    assert _rows(out)["*"]["detail"].startswith(f"login to 127.0.0.1:{port} as alice: no answer within the deadline")
    assert "pw-never-printed-42" not in out + err


def test_github_api_trickling_headers_ends_the_publish_within_the_deadline(capsys, recorded: Path, tmp_path: Path,
                                                                           monkeypatch) -> None:
    market = bare_market(tmp_path)
    monkeypatch.setenv("CATALOG_GITHUB_TOKEN", "ghp_trickleToken0123456789")
    with trickle_server() as port:
        start = time.monotonic()
        code, out, err = run_cli(capsys, "publish", "--to", f"git:{market}", "--catalog", recorded, "--json",
                                 "--pr-repo", "olares-one/market", "--github-api", f"http://127.0.0.1:{port}",
                                 "--timeout", "3")
        took = elapsed(start)
    assert code == 1 and took < 3 + 12, (took, out, err)
    rows = _rows(out)
    first, *rest = (rows[app] for app in APPS)
    assert first["action"] == "failed"
    assert first["detail"].startswith(f"GitHub API GET http://127.0.0.1:{port}/repos/olares-one/market/pulls: no "
                                      "complete answer within the deadline of 3 s")
    assert all(r["detail"].startswith("not tried:") for r in rest)
    assert "ghp_trickleToken0123456789" not in out + err


# --- a decompression bomb at the target ---------------------------------------------------------------------

def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT)


MIB_OF_ZEROS = _gz(bytes(2**20))  # ~1 KB that expands to 1 MiB; gzip members may be concatenated (RFC 1952 §2.2)


def one_huge_file() -> bytes:
    """~2 MB on disk, one 2 GiB chart file when expanded."""
    return _gz(_header(f"{APP}/templates/big.yaml", 2048 * 2**20)) + MIB_OF_ZEROS * 2048 + _gz(bytes(1024))


def many_files() -> bytes:
    """~2.5 MB on disk, 600 files of 4 MiB (each under the per-file limit): 2.4 GB when expanded."""
    files = (_gz(_header(f"{APP}/templates/f{i}.yaml", 4 * 2**20)) + MIB_OF_ZEROS * 4 for i in range(600))
    return b"".join(files) + _gz(bytes(1024))


def small_other_package() -> bytes:
    """A valid package of the same app and version with other content (the control run)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in (("Chart.yaml", f"name: {APP}\nversion: {VERSION}\n"), ("values.yaml", "x: 1\n")):
            data = text.encode()
            info = tarfile.TarInfo(f"{APP}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


MEASURE = """
import json, resource, sys, time
from generator.cli import main
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.monotonic()
code = main(sys.argv[2:])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
open(sys.argv[1], "w").write(json.dumps({"code": code, "before_kib": before, "peak_kib": peak,
                                         "seconds": time.monotonic() - start}))
"""


def _publish_measured(cat: Path, target: Path, tmp_path: Path) -> tuple[dict, list[dict]]:
    report = tmp_path / f"measure-{time.monotonic_ns()}.json"
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(report), "publish", APP, "--to", f"dir:{target}",
                           "--catalog", str(cat), "--json"], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parent.parent)
    assert report.is_file(), proc.stderr
    return json.loads(report.read_text()), json.loads(proc.stdout)


@pytest.mark.parametrize("bomb", [one_huge_file, many_files], ids=["one-2GiB-file", "600-files-of-4MiB"])
def test_decompression_bomb_at_a_dir_target_is_refused_with_bounded_memory(recorded: Path, tmp_path: Path,
                                                                          bomb) -> None:
    target = tmp_path / "repo"
    target.mkdir()
    package = target / f"{APP}-{VERSION}.tgz"
    package.write_bytes(small_other_package())
    control, rows = _publish_measured(recorded, target, tmp_path)
    assert control["code"] == 1 and rows[0]["action"] == "refused"

    data = bomb()
    assert len(data) < 3 * 2**20
    package.write_bytes(data)
    measured, rows = _publish_measured(recorded, target, tmp_path)
    assert measured["code"] == 1 and rows[0]["action"] == "failed"
    assert "not reading it: remove or replace it" in rows[0]["detail"]
    why = "above Helm's 5 MiB limit" if bomb is one_huge_file else "expands to more than 100 MiB"
    assert why in rows[0]["detail"]
    growth_mib = (measured["peak_kib"] - control["peak_kib"]) / 1024
    assert growth_mib < 300, f"reading the bomb grew the peak RSS by {growth_mib:.0f} MiB"
    assert measured["seconds"] < 60
