"""`catalog import` of a stranger's chart (issue 22, causes 1, 3, 8, 9, 10; issue 24): the chart is the attacker.

Each test writes the hostile chart here (on the shapes of tests/importer/olares_charts.py), runs the real command
(in-process `main()`, or a subprocess where memory or time is measured) and asserts the safe outcome: exit 1 with
a message naming the cap or the refusal, nothing written anywhere, no secret and no raw control character on any
output. Resource attacks measure what they bound (a child's `ru_maxrss`, the wall clock).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from generator.adapters.helm import Helm, HelmFailure, RenderLimits
from generator.cli import main

from support.adversarial import REPO, snapshot

sys.path.insert(0, str(REPO / "tests" / "importer"))
import olares_charts as oc  # noqa: E402  (the chart shapes of the import tests)

TOKEN = "hf_" + "Zq81Xw7Cv6Bn5Mm4Ll3Kk2Jj1Hh0GgFf"  # a Hugging Face token in its published format


def _import(catalog: Path, *args: str) -> int:
    return main(["import", *args, "--catalog", str(catalog)])


def _measured(code: str, timeout: float = 120) -> tuple[dict, float]:
    """Run `code` (Python, this worktree's generator) in a child; (what it printed as JSON, seconds). The child
    prints its own peak RSS (VmHWM of /proc/self/status, KiB: its own memory since exec; `ru_maxrss` would carry
    the forking test process's) and its children's peak (`ru_maxrss` of RUSAGE_CHILDREN: the Helm worker)."""
    wrapper = code + ("\nimport json, resource\n"
                      "hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
                      "print(json.dumps({**globals().get('OUT', {}), 'rss_kib': hwm, "
                      "'children_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), time.monotonic() - started


def _with_name(chart: Path, name: str) -> Path:
    manifest = chart / "OlaresManifest.yaml"
    manifest.write_text(manifest.read_text().replace("  name: marketqwen\n", f"  name: '{name}'\n", 1))
    return chart


# --- cause 1: the app name is a path -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../releases", "../../apps/gemmalab", "../../../../X", "ABS", "Upper",
                                  "a" * 31, "kube"])
def test_import_app_name_that_is_a_path_refused_nothing_written(small_catalog, tmp_path, capsys, name):
    name = str(tmp_path / "abs" / "X") if name == "ABS" else name
    chart = _with_name(oc.llamacpp_chart(tmp_path / "in"), name)
    before = snapshot(tmp_path)
    assert _import(small_catalog, str(chart), "--update") == 1
    err = capsys.readouterr().err
    assert "OlaresManifest.yaml:5: metadata.name:" in err and "is not an Olares app name" in err
    assert snapshot(tmp_path) == before  # not releases.yaml, not another app, nothing outside the catalog


def test_import_every_write_stays_in_the_catalog_even_through_a_linked_drafts_folder(small_catalog, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    (small_catalog / "drafts").symlink_to(outside, target_is_directory=True)
    chart = oc.llamacpp_chart(tmp_path / "in", extra_args=["--model", "/models/other.gguf"])  # needs a draft
    text = (chart / "templates" / "deployment.yaml").read_text().replace("unsloth/Qwen3.6-35B-A3B-GGUF",
                                                                          "someone/Unknown-9B-GGUF")
    (chart / "templates" / "deployment.yaml").write_text(text)
    assert _import(small_catalog, str(chart)) == 1
    assert "outside the catalog folder" in capsys.readouterr().err
    assert list(outside.iterdir()) == []


# --- issue 24: no path of this machine in the committed file -------------------------------------------------

def test_import_writes_the_chart_path_relative_to_the_catalog(small_catalog, tmp_path):
    chart = oc.llamacpp_chart(tmp_path / "in")
    assert _import(small_catalog, str(chart)) == 0
    written = (small_catalog / "apps" / "marketqwen.yaml").read_text()
    assert str(tmp_path) not in written
    assert "from ../in/marketqwen (olares-v2 chart)" in written and "  - '../in/marketqwen/templates/" in written


def test_import_of_a_chart_outside_the_repository_records_only_its_name(small_catalog, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("downloads")
    package = oc.package(oc.llamacpp_chart(elsewhere / "in"), elsewhere / "marketqwen-1.0.3.tgz")
    assert _import(small_catalog, str(package)) == 0
    written = (small_catalog / "apps" / "marketqwen.yaml").read_text()
    assert str(elsewhere) not in written and "/tmp" not in written
    assert "from marketqwen-1.0.3.tgz (olares-v2 chart)" in written


# --- cause 3: secrets in the chart ----------------------------------------------------------------------------

def _secret_chart(root: Path) -> Path:
    chart = oc.llamacpp_chart(root, extra_args=["--model-url",
                                                f"https://huggingface.co/x/y/resolve/main/m.gguf?token={TOKEN}"])
    deployment = chart / "templates" / "deployment.yaml"
    deployment.write_text(deployment.read_text().replace(
        "            - name: GGML_CUDA_GRAPH_OPT\n",
        f"            - name: MY_SETTING\n              value: \"{TOKEN}\"\n"
        "            - name: DOWNLOAD_PASSWORD\n              value: \"hunter2-literal\"\n"
        "            - name: GGML_CUDA_GRAPH_OPT\n"))
    return chart


@pytest.mark.parametrize("mode", [(), ("--json",), ("--dry-run",), ("--dry-run", "--json")])
def test_import_secrets_in_args_and_env_never_printed_nor_written(small_catalog, tmp_path, capsys, mode):
    chart = _secret_chart(tmp_path / "in")
    assert _import(small_catalog, str(chart), *mode) == 0
    captured = capsys.readouterr()
    files = "".join(p.read_text(errors="replace") for p in small_catalog.rglob("*") if p.is_file())
    for secret in (TOKEN, "hunter2-literal"):
        assert secret not in captured.out and secret not in captured.err and secret not in files
    if "--json" in mode:
        json.loads(captured.out)  # still JSON after redaction
    if "--dry-run" not in mode:
        written = (small_catalog / "apps" / "marketqwen.yaml").read_text()
        assert "--model-url: a Hugging Face token is not imported" in written
        assert "env MY_SETTING: a Hugging Face token is not imported" in written
        assert "--model-url" not in written.split("extra_args:")[-1].split("unmapped")[0]  # the flag went too


# --- cause 10: member names reach the terminal ------------------------------------------------------------------

def test_import_tgz_member_name_with_escape_and_workflow_command_shown_escaped(small_catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in")
    evil = "marketqwen/templates/\x1b]0;pwned\x07\x1b[31mred\n::error file=x::forged.yaml"
    package = oc.package(chart, tmp_path / "marketqwen-1.0.3.tgz", extra_members={evil: b"a: 1\n"})
    for mode in ((), ("--json",)):
        assert _import(small_catalog, str(package), *mode) == 1
        captured = capsys.readouterr()
        both = captured.out + captured.err
        assert "\x1b" not in both and "\x07" not in both
        assert not any(line.startswith("::error") for line in both.splitlines())
        assert "a name with a control character is refused" in captured.err and "\\x1b" in captured.err
    assert not (small_catalog / "apps" / "marketqwen.yaml").exists()


# --- cause 8: tar headers and members ------------------------------------------------------------------------

def _tgz(path: Path, build) -> Path:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as archive:
        build(archive)
    return path


def _member(archive: tarfile.TarFile, name: str, data: bytes = b"x", **pax: str) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.pax_headers = len(data), pax
    archive.addfile(info, io.BytesIO(data))


READ = ("from generator.importer.source import read_chart\nfrom generator.core.errors import InputError\n"
        "try:\n    read_chart(__import__('pathlib').Path({path!r}))\n    OUT = {{'error': ''}}\n"
        "except InputError as exc:\n    OUT = {{'error': str(exc)}}\n")


@pytest.mark.parametrize("kind", ["gnu-long-name", "pax-header"])
def test_import_tgz_huge_extended_header_refused_before_it_is_read(tmp_path, kind):
    size = 256 * 2**20  # a 256 MB name or PAX record; the 512 MB took 1.1-1.6 GB
    if kind == "gnu-long-name":
        package = _tgz(tmp_path / "x.tgz", lambda a: _member(a, "marketqwen/" + "a" * size))
    else:
        def pax(archive: tarfile.TarFile) -> None:
            archive.format = tarfile.PAX_FORMAT
            _member(archive, "marketqwen/Chart.yaml", b"name: x\n", comment="z" * size)
        package = _tgz(tmp_path / "x.tgz", pax)
    out, seconds = _measured(READ.format(path=str(package)))
    assert "an extended tar header" in out["error"] and "over the cap of 65,536" in out["error"]
    assert out["rss_kib"] < 150 * 1024, out  # the header is never held: the reader stays near its start size
    assert seconds < 20


def test_import_tgz_two_million_folders_refused_fast(tmp_path):
    def folders(archive: tarfile.TarFile) -> None:
        for index in range(200_000):  # 50x the cap already; the 2,000,000 took 119 s and imported
            info = tarfile.TarInfo(f"marketqwen/d{index}")
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
    package = _tgz(tmp_path / "dirs.tgz", folders)
    out, seconds = _measured(READ.format(path=str(package)))
    assert "more than 4000 entries (files and folders)" in out["error"]
    assert seconds < 10 and out["rss_kib"] < 150 * 1024


def test_import_tgz_chain_of_long_name_headers_refused(tmp_path):
    path = tmp_path / "chain.tgz"
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
        header = tarfile.TarInfo("././@LongLink")
        header.type, header.size = tarfile.GNUTYPE_LONGNAME, 512
        block = header.tobuf(format=tarfile.USTAR_FORMAT) + b"n" * 511 + b"\0"
        gz.write(block * 20_000)  # each long name extends the next header: read recursively, unbounded
    out, seconds = _measured(READ.format(path=str(path)))
    assert "more than 8 extended tar headers" in out["error"]
    assert seconds < 10


def test_import_tgz_uncompressed_stream_capped(tmp_path):
    path = tmp_path / "padding.tgz"
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
        info = tarfile.TarInfo("marketqwen/blob")
        info.type = b"Q"  # an unknown type: tarfile skips its data by reading through it
        info.size = 2**30
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        zeros = b"\0" * 2**20
        for _ in range(80):  # 80 MB of "data", over the stream cap
            gz.write(zeros)
    out, seconds = _measured(READ.format(path=str(path)))
    assert "is not a regular file" in out["error"] or "uncompressed" in out["error"]
    assert seconds < 20 and out["rss_kib"] < 150 * 1024


# --- cause 9: Helm rendering of a stranger's templates ----------------------------------------------------------

def test_import_template_asking_for_gigabytes_stops_at_the_memory_cap(small_catalog, tmp_path):
    chart = oc.llamacpp_chart(tmp_path / "in", templates={"templates/bomb.yaml": 'a: {{ repeat 400000000 "x" }}\n'})
    code = ("from generator.cli import main\n"
            f"OUT = {{'code': main(['import', {str(chart)!r}, '--catalog', {str(small_catalog)!r}])}}\n")
    out, seconds = _measured(code)
    assert out["code"] == 1
    # in-process this took 4.4 GB; the worker's data segment is capped at 512 MiB
    assert out["children_kib"] < 700 * 1024 and out["rss_kib"] < 300 * 1024, out
    assert seconds < 60
    assert not (small_catalog / "apps" / "marketqwen.yaml").exists()


def test_import_template_message_names_the_memory_cap(small_catalog, tmp_path, capsys):
    chart = oc.llamacpp_chart(tmp_path / "in",
                              templates={"templates/bomb.yaml": "a: {{ range until 30000000 }}x{{ end }}\n"})
    assert _import(small_catalog, str(chart)) == 1
    err = capsys.readouterr().err
    assert "rendering needs more than 512 MiB of memory (the cap for one chart)" in err
    assert "nothing was written" in err


def _tiny_chart(root: Path, body: str) -> Path:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: tiny\nversion: 0.1.0\n")
    (root / "templates" / "a.yaml").write_text(body)
    return root


def test_helm_render_past_its_deadline_is_killed(tmp_path):
    chart = _tiny_chart(tmp_path / "tiny", "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n")
    with Helm().capped_renderer(RenderLimits(seconds=2)) as renderer:
        started = time.monotonic()
        with pytest.raises(HelmFailure) as caught:
            renderer.render(chart, {}, name="tiny", namespace="ns")
        elapsed = time.monotonic() - started
    assert "rendering took longer than 2 s" in str(caught.value)
    # the uncapped render runs for many minutes; the slack covers the worker's start on a loaded 2-core machine
    assert elapsed < 15


def test_helm_render_output_over_the_cap_refused_and_the_worker_replaced(tmp_path):
    chart = _tiny_chart(tmp_path / "tiny", 'a: {{ repeat 20000000 "x" }}\n')
    with Helm().capped_renderer() as renderer:
        with pytest.raises(HelmFailure) as caught:
            renderer.render(chart, {}, name="tiny", namespace="ns")
        assert "larger than 16,777,216 bytes" in str(caught.value)
        (chart / "templates" / "a.yaml").write_text("a: {{ .Values.x }}\n")
        assert renderer.render(chart, {"x": 1}, name="tiny", namespace="ns") == {"tiny/templates/a.yaml": "a: 1\n"}
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 2 * 2**20  # this process never held the output
