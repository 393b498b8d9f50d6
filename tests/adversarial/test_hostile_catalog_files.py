"""Hostile catalog files: an alias bomb, huge or binary files, a FIFO, deep nesting, a broken releases.yaml,
unbounded numbers and strings, values aimed at the init container, newlines aimed at the CI log
(failures 4, 9, 13 (catalog half), 18, 19 of the issue)."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.adversarial import REPO, assert_clean_failure, cli, snapshot


APP = "qwenlab"  # a llama.cpp app of the fixture: it has an init container


def _app(catalog: Path, name: str = APP) -> Path:
    return catalog / "apps" / f"{name}.yaml"


def _set(catalog: Path, key: str, value_yaml: str, name: str = APP) -> None:
    """Replace (or add) one top-level key of an app file, as text."""
    path = _app(catalog, name)
    lines = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
             if not line.startswith(f"{key}:")]
    path.write_text("".join(lines) + f"{key}: {value_yaml}\n", encoding="utf-8")


def _limited(*args: str | Path, memory: int = 2 * 2**30, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI under an address-space cap: an expansion that runs away dies (MemoryError) instead of
    taking the machine."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "generator.cli", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=cap)


# ---- YAML limits (failures 9, 18) ----------------------------------------------------------------------

BOMB = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 12))


def test_yaml_alias_bomb_refused_fast(small_catalog: Path):
    """Failure 9: eleven lines of nested aliases (10^11 leaves when expanded) ran the loader past 1.5 GB."""
    path = _app(small_catalog)
    path.write_text(path.read_text(encoding="utf-8") + "l0: &l0 x\n" + BOMB, encoding="utf-8")
    started = time.monotonic()
    proc = _limited("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert re.search(r"qwenlab\.yaml:\d+: .*alias \*l0 is not supported", proc.stderr), proc.stderr
    assert time.monotonic() - started < 30


def test_yaml_oversized_catalog_file_refused(small_catalog: Path):
    """A 3 MiB app file (a long description) stops at the 1 MiB cap with file:line, before parsing."""
    _set(small_catalog, "full_description", "'" + "x" * (3 * 2**20) + "'")
    proc = _limited("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert "qwenlab.yaml:1: the file is larger than 1 MiB" in proc.stderr
    assert len(proc.stderr) < 2000  # the value is not echoed


def test_yaml_nul_byte_reported_with_file_line(small_catalog: Path):
    """Failure 18: a NUL byte gave `YAML error: unacceptable character` with no line."""
    path = _app(small_catalog)
    text = path.read_text(encoding="utf-8").replace("title: Qwen36", "title: Qwen\x0036")
    path.write_text(text, encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "\x00" in row)
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert f"qwenlab.yaml:{line}: control character 0x00 at column" in proc.stderr


def test_yaml_binary_garbage_reported_with_file_line(small_catalog: Path):
    _app(small_catalog).write_bytes(b"name: qwenlab\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert re.search(r"qwenlab\.yaml:\d+: ", proc.stderr), proc.stderr


def test_yaml_fifo_catalog_file_does_not_hang(small_catalog: Path):
    """A FIFO named like an app file would block the reader forever; it is not a regular file."""
    os.mkfifo(small_catalog / "apps" / "pipe.yaml")
    started = time.monotonic()
    proc = cli("check", "--no-lint", "--catalog", small_catalog, timeout=60)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr
    assert time.monotonic() - started < 60


def test_yaml_deep_nesting_refused(small_catalog: Path):
    _set(small_catalog, "env", "[" * 900 + "]" * 900)
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert "nested more than 64 levels" in proc.stderr


def test_releases_yaml_malformed_reported_with_file_line(small_catalog: Path):
    """Failure 18: a malformed releases.yaml gave `releases.yaml: not valid YAML (...)` without a line."""
    (small_catalog / "releases.yaml").write_text("apps:\n  qwenlab:\n    1.0.0: {content: sha256:ab, date: [\n",
                                                 encoding="utf-8")
    proc = cli("bump", "--check", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert re.search(r"releases\.yaml:\d+: YAML syntax error", proc.stderr), proc.stderr
    (small_catalog / "releases.yaml").write_text("apps:\n  qwenlab:\n    - 1.0.0\n", encoding="utf-8")
    proc = cli("bump", "--check", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert "releases.yaml:2: apps.qwenlab: expected a mapping of versions" in proc.stderr


# ---- schema bounds (failure 19) ------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, expected", [
    ("env", "{BIG: '" + "v" * 200_000 + "'}", "env.BIG: String should have at most 8192 characters"),
    ("extra_args", "['" + "a" * 10_000 + "']", "extra_args.0: String should have at most 8192 characters"),
    ("context_length", "99999999999999999999", "context_length: Input should be less than or equal to 16777216"),
    ("gpu_memory_mib", "4294967296", "gpu_memory_mib: Input should be less than or equal to 1048576"),
    ("description", "'" + "d" * 5000 + "'", "description: String should have at most 4000 characters"),
    ("extra_args", "[" + ", ".join(["x"] * 300) + "]", "extra_args: Tuple should have at most 256 items"),
])
def test_schema_bounds_refuse_unbounded_values(small_catalog: Path, tmp_path: Path, key, value, expected):
    """Failure 19: a 5 MB env value rendered and passed `check`; integers had no upper bound."""
    _set(small_catalog, key, value)
    line = _app(small_catalog).read_text(encoding="utf-8").count("\n")
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert f"qwenlab.yaml:{line}: {expected}" in proc.stderr
    assert len(proc.stderr) < 4000  # the huge value is not echoed back
    proc = cli("render", "--catalog", small_catalog, "--out", tmp_path / "charts")
    assert proc.returncode == 1 and not (tmp_path / "charts").exists()


def test_schema_bounds_refuse_a_port_out_of_range(small_catalog: Path):
    path = small_catalog / "stacks" / "llamacpp-b8740.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"^port: \d+$", "port: 70000", text, flags=re.MULTILINE), encoding="utf-8")
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert "llamacpp-b8740.yaml" in proc.stderr and "port: Input should be less than or equal to 65535" in proc.stderr


# ---- values aimed at the init container (failure 4) ----------------------------------------------------

MODEL = "qwen36-35b-a3b"


def _set_weight(catalog: Path, field: str, value: str) -> int:
    """Set `field` of the model's ud-q4kxl weight (the file qwenlab fetches); returns its line."""
    path = catalog / "models" / f"{MODEL}.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "quant: ud-q4kxl" in line)
    indent = " " * (len(lines[start]) - len(lines[start].lstrip(" -")))
    for i in range(start, len(lines)):
        if lines[i].lstrip().startswith(f"{field}:"):
            lines[i] = f"{indent}{field}: {value}\n"
            break
    else:
        i = start + 1
        lines.insert(i, f"{indent}{field}: {value}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return i + 1


@pytest.mark.parametrize("field, value", [
    ("file", "'x.gguf?leak=$(HF_TOKEN)'"),
    ("file", "../../etc/profile.d/evil.sh"),
    ("file", "/etc/passwd"),
    ("file", "a/../../b.gguf"),
    ("repo", "unsloth/../../x"),
    ("repo", "'unsloth/x$(HF_TOKEN)'"),
    ("revision", "../main"),
    ("revision", "'$(HF_TOKEN)'"),
])
def test_init_container_env_refuses_dollar_and_dotdot(small_catalog: Path, tmp_path: Path, field, value):
    """Failure 4: `file: "x.gguf?leak=$(HF_TOKEN)"` let Kubernetes expand the token into the download URL
    and `../` moved the target; `check` passed both. Now the schema refuses them with file:line."""
    line = _set_weight(small_catalog, field, value)
    proc = cli("check", "--no-lint", "--catalog", small_catalog)
    assert_clean_failure(proc, 1)
    assert f"{MODEL}.yaml:{line}: weights.0.{field}:" in proc.stderr, proc.stderr
    proc = cli("render", "--catalog", small_catalog, "--out", tmp_path / "charts")
    assert proc.returncode == 1 and not (tmp_path / "charts").exists()


def test_init_container_env_dollar_doubled_where_kubernetes_expands(small_catalog: Path):
    """Where a `$` can reach what Kubernetes expands (a stack's command; a fetched file, were the schema to
    let one through), the rendered Deployment (through the real Helm engine) carries `$$`, which Kubernetes
    turns back into one `$` instead of expanding `$(VAR)`. Charts without a `$` keep their bytes
    (tests/test_render_golden.py)."""
    import dataclasses

    import yaml

    from generator.catalog import load_catalog
    from generator.chart.plan import plan
    from generator.chart.render import render
    from generator.chart.parts import FetchFile
    from generator.engines.base import Download
    from generator.lint import helm

    stack = small_catalog / "stacks" / "llamacpp-b8740.yaml"
    text = stack.read_text(encoding="utf-8").replace("command: [/app/llama-server]", "command: [/bin/run-$(HF_TOKEN)]")
    stack.write_text(text, encoding="utf-8")
    spec = plan(load_catalog(small_catalog).apps[APP])
    hostile = Download(repo="unsloth/x", revision="main", file="x.gguf?leak=$(HF_TOKEN)")
    fetch = dataclasses.replace(spec.values.model_fetch,
                                files=(FetchFile(hostile.repo, hostile.revision, hostile.file, hostile.path),))
    values = dataclasses.replace(spec.values, model_fetch=fetch)
    tree = render(dataclasses.replace(spec, values=values))
    with helm.chart_folder(APP, tree) as folder:
        rendered = helm.render(folder, {}, name=APP, namespace="default")
    deployment = next(d for d in yaml.safe_load_all(rendered["templates/deployment.yaml"]) if d)
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["initContainers"][0]["env"]}
    assert env["FILE_0_SRC"] == "unsloth/x/resolve/main/x.gguf?leak=$$(HF_TOKEN)"
    assert env["FILE_0_DST"].endswith("/x.gguf?leak=$$(HF_TOKEN)")
    assert pod["containers"][0]["command"] == ["/bin/run-$$(HF_TOKEN)"]


# ---- newlines aimed at the CI log (failure 13, catalog half) --------------------------------------------

INJECTED = "::warning file=README.md,line=1::INJECTED"


def _no_workflow_command(proc: subprocess.CompletedProcess[str]) -> None:
    for stream in (proc.stdout, proc.stderr):
        for line in stream.splitlines():
            assert not line.lstrip().startswith("::"), f"a raw workflow command reached the log: {line!r}"


def test_ci_log_injection_through_an_extra_args_value(catalog_copy: Path):
    """A newline inside an extra_args value is echoed by the flag check; it must stay on its line."""
    path = catalog_copy / "apps" / "gemma4e2bone.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("extra_args: [", f'extra_args: ["--bogus\\n{INJECTED}", ', 1), encoding="utf-8")
    proc = cli("check", "--no-lint", "--catalog", catalog_copy, "gemma4e2bone")
    assert proc.returncode == 1 and "INJECTED" in proc.stdout  # reported, escaped
    assert "\\n::warning" in proc.stdout
    _no_workflow_command(proc)


def test_ci_log_injection_through_a_yaml_key(small_catalog: Path, tmp_path: Path):
    """A YAML key holding a newline is echoed as an unknown key; check and render keep it on one line."""
    path = _app(small_catalog)
    path.write_text(path.read_text(encoding="utf-8") + f'"evil\\n{INJECTED.replace("warning", "error")}": 1\n',
                    encoding="utf-8")
    for args in (("check", "--no-lint"), ("render", "--out", tmp_path / "charts")):
        proc = cli(*args, "--catalog", small_catalog)
        assert_clean_failure(proc, 1)
        assert "unknown key" in proc.stderr and "evil\\n::error" in proc.stderr
        _no_workflow_command(proc)


def test_ci_log_injection_through_bump(recorded: Path):
    """`bump --check` names the changed argument; `bump` writes it to CHANGELOG.md and the app's
    upgrade_description: each stays one line."""
    path = recorded / "apps" / "gemma4e2bone.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("extra_args: [", f'extra_args: ["--bogus\\n{INJECTED}", ', 1), encoding="utf-8")
    proc = cli("bump", "--check", "--catalog", recorded)
    assert proc.returncode == 1 and "INJECTED" in proc.stderr
    _no_workflow_command(proc)
    proc = cli("bump", "--catalog", recorded)  # the check gate refuses it (FLAG001), naming it on one line
    assert proc.returncode == 1 and "INJECTED" in proc.stderr
    _no_workflow_command(proc)
    proc = cli("bump", "--force", "--catalog", recorded)
    assert proc.returncode == 0, proc.stderr
    _no_workflow_command(proc)
    for written in (recorded.parent / "CHANGELOG.md", path):
        assert "INJECTED" in written.read_text(encoding="utf-8")
        assert not any(line.lstrip().startswith("::") for line in written.read_text(encoding="utf-8").splitlines())


def test_ci_log_injection_through_an_output_folder_name(small_catalog: Path, tmp_path: Path):
    """A foreign entry whose name holds a newline is named, escaped, in the refusal."""
    out = tmp_path / "charts"
    out.mkdir()
    (out / f"x\n{INJECTED}").mkdir()
    before = snapshot(out)
    proc = cli("render", "--catalog", small_catalog, "--out", out)
    assert_clean_failure(proc, 2)
    _no_workflow_command(proc)
    assert snapshot(out) == before


def test_flag_table_alias_bomb_refused_fast(catalog_copy: Path):
    """Flag tables (catalog/flags/) are read by a faster parser: it must not expand an alias bomb either."""
    table = catalog_copy / "flags" / "atomic-mtp.yaml"
    table.write_text(table.read_text(encoding="utf-8") + "l0: &l0 x\n" + BOMB, encoding="utf-8")
    started = time.monotonic()
    proc = _limited("check", "--no-lint", "--catalog", catalog_copy, "gemma4e2bone")
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert re.search(r"atomic-mtp\.yaml:\d+: .*alias \*l0 is not supported", proc.stdout + proc.stderr)
    assert time.monotonic() - started < 60


def test_flag_table_symlink_outside_refused(catalog_copy: Path, tmp_path: Path):
    table = catalog_copy / "flags" / "atomic-mtp.yaml"
    outside = tmp_path / "atomic-mtp.yaml"
    outside.write_text(table.read_text(encoding="utf-8"), encoding="utf-8")
    table.unlink()
    table.symlink_to(outside)
    proc = cli("check", "--no-lint", "--catalog", catalog_copy, "gemma4e2bone")
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert "symbolic link to a file outside the catalog" in proc.stdout + proc.stderr
