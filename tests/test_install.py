"""The README's install gives the README's commands: the wheel, installed with only its core dependencies into a
fresh virtualenv, runs every command of the README's table from a store folder outside the repository.

Built and installed once for the module (about a minute: the wheel, then the dependencies from PyPI). The
commands run with HOME and TMPDIR inside the test's folder, so what they write anywhere is seen: nothing may
land inside the installed package, and nothing outside the store but the publish targets. The smoke runs
against a real llama-server (tiny GGUF) and against the vLLM STAND-IN of tests/support/vllm_standin.py (vLLM cannot run
here), whose /metrics is parsed with prometheus_client.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.catalogs import REPO

pytestmark = pytest.mark.slow
STORE_APP = "llamacppqwen36a3bone"


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def tree_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under `folder` with its size and modification time (a write anywhere changes it)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


class Venv:
    def __init__(self, root: Path):
        self.root = root
        self.work = root / "work"
        self.home = root / "home"
        self.tmp = root / "tmp"
        for folder in (self.work, self.home, self.tmp):
            folder.mkdir()
        self.bin = root / "venv" / "bin"
        self.package = Path()
        self.package_before: dict[str, tuple[int, int]] = {}

    @property
    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k not in ("CATALOG_DIR", "PYTHONPATH", "VIRTUAL_ENV",
                                                                 "COLUMNS")}
        return {**keep, "HOME": str(self.home), "TMPDIR": str(self.tmp), "COLUMNS": "200",
                "PATH": f"{self.bin}{os.pathsep}{keep.get('PATH', '')}"}

    def catalog(self, *args: str, cwd: Path | None = None, code: int | None = 0) -> subprocess.CompletedProcess:
        done = run([str(self.bin / "catalog"), *args], cwd=cwd or self.work / "store", env=self.env)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
        if code is not None:
            assert done.returncode == code, f"catalog {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert list(self.tmp.iterdir()) == [], f"left in TMPDIR: {list(self.tmp.iterdir())}"
        return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Venv:
    root = tmp_path_factory.mktemp("install")
    wheels = root / "wheel"
    built = run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--quiet", "-w", str(wheels)],
                cwd=root, env=dict(os.environ), timeout=300)
    assert built.returncode == 0, built.stderr
    created = run([sys.executable, "-m", "venv", str(root / "venv")], cwd=root, env=dict(os.environ), timeout=120)
    assert created.returncode == 0, created.stderr
    v = Venv(root)
    installed = run([str(v.bin / "python"), "-m", "pip", "install", "--quiet", *map(str, wheels.glob("*.whl"))],
                    cwd=root, env=dict(os.environ), timeout=600)
    assert installed.returncode == 0, installed.stderr
    where = run([str(v.bin / "python"), "-c", "import generator, os; print(os.path.dirname(generator.__file__))"],
                cwd=root, env=v.env)
    v.package = Path(where.stdout.strip())
    assert v.package.is_relative_to(root / "venv"), v.package
    v.package_before = tree_state(v.package)  # before any command runs
    return v


@pytest.fixture(scope="module")
def store(venv) -> Path:
    done = venv.catalog("init", "--owner", "tester", "--all", "store", cwd=venv.work)
    assert "git: first commit" in done.stdout
    return venv.work / "store"


def test_only_the_cluster_client_is_optional(venv):
    pip = run([str(venv.bin / "python"), "-m", "pip", "list", "--format=freeze"], cwd=venv.root, env=venv.env)
    have = {line.split("==")[0].lower().replace("_", "-") for line in pip.stdout.split()}
    assert {"helm-python-sdk", "kubernetes-validate", "prometheus-client"} <= have
    assert "kubernetes" not in have  # the [kube] extra


def test_the_wheel_carries_the_templates_and_the_embedded_catalog(venv):
    data = venv.package / "_data"
    assert (data / "templates" / "Chart.yaml.j2").is_file() and (data / "templates" / "store" / "README.md").is_file()
    assert (data / "catalog" / "apps" / f"{STORE_APP}.yaml").is_file()


def test_reading_commands_work_on_the_embedded_catalog(venv):
    done = venv.catalog("list", cwd=venv.work)
    assert "read-only" in done.stderr and STORE_APP in done.stdout
    done = venv.catalog("render", cwd=venv.work, code=2)
    assert "catalog init" in done.stderr
    assert list(venv.work.iterdir()) == []


def test_render_and_list(venv, store):
    done = venv.catalog("render")
    charts = len([p for p in (store / "charts").iterdir() if p.is_dir()])  # not its .catalog-render list
    assert "(found from the current folder)" in done.stderr and f"rendered {charts} chart(s)" in done.stdout
    done = venv.catalog("list")
    assert all(app in done.stdout for app in (STORE_APP, "vllmqwen36turbo27bone", "gemma4e2bone"))


def test_check_runs_the_helm_engine_and_the_kubernetes_schemas(venv, store):
    done = venv.catalog("check", STORE_APP, "vllmqwen36turbo27bone", "--json")  # lint on: Helm, schemas
    report = json.loads(done.stdout)
    assert [a["ok"] for a in report["apps"]] == [True, True] and report["errors"] == 0
    done = venv.catalog("check", STORE_APP)
    assert f"✔ {STORE_APP}" in done.stdout


def test_explain(venv, store):
    done = venv.catalog("explain", STORE_APP)
    assert "--ctx-size" in done.stdout


def test_bump_after_a_change(venv, store):
    app = store / "catalog" / "apps" / f"{STORE_APP}.yaml"
    text = app.read_text()
    major, minor, patch = re.search(r"^version: (\d+)\.(\d+)\.(\d+)$", text, re.MULTILINE).groups()
    # the context and the description that states it (bump refuses what `catalog check` fails: CON003)
    text = re.sub(r"^context_length: \d+$", "context_length: 32768", text, flags=re.MULTILINE)
    app.write_text(text.replace("@ FULL 262K context", "@ 32K context"))
    done = venv.catalog("bump", "--check", code=1)
    assert "1 app needs `catalog bump`" in done.stderr
    venv.catalog("bump")
    after = f"{major}.{minor}.{int(patch) + 1}"
    assert re.search(rf"^version: {re.escape(after)}$", app.read_text(), re.MULTILINE)
    assert f"### {STORE_APP} {after} — " in (store / "CHANGELOG.md").read_text()
    venv.catalog("bump", "--check")
    venv.catalog("render", "--check")


def test_publish_to_a_helm_repository_folder_and_an_empty_git_market(venv, store):
    target = venv.work / "helm-repo"
    done = venv.catalog("publish", STORE_APP, "--to", f"dir:{target}")
    version = re.search(r"^version: (\S+)$", (store / "catalog" / "apps" / f"{STORE_APP}.yaml").read_text(),
                        re.MULTILINE).group(1)
    assert (target / f"{STORE_APP}-{version}.tgz").is_file() and (target / "index.yaml").is_file(), done.stdout
    market = venv.work / "market.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(market)], check=True, timeout=60)
    venv.catalog("publish", STORE_APP, "--to", f"git:{market}")
    log = subprocess.run(["git", "-C", str(market), "log", "--format=%s", "--all"], capture_output=True, text=True,
                         check=True, timeout=60).stdout.splitlines()
    assert log == [f"[NEW][{STORE_APP}][{version}]", "Start the market on main"]


def test_smoke_a_llama_server(venv, store, tmp_path):
    """The installed tool smokes a real llama-server that serves a tiny model under the store app's name and file:
    the identity matches (engine, model file, context), and the tiny random drafter's acceptance, far under the
    app's stack floor, makes it a measured regression (recorded), not a pass (or a suspect, on a CPU fast enough to
    beat the app's roofline with the tiny model)."""
    from generator.catalog import load_catalog
    from generator.chart.plan import plan

    from support.smoke import llama_server, write_models

    r = load_catalog(store / "catalog").apps[STORE_APP]
    argv = list(plan(r).engine.argv)
    model_file = Path(argv[argv.index("--model") + 1]).name
    context = r.app.context_length
    models = write_models(tmp_path, context=context, main_name=model_file)
    with llama_server(models, aliases=[r.app.served_name], context=context, log_dir=tmp_path) as server:
        done = venv.catalog("smoke", STORE_APP, "--endpoint", server.url, "--runs", "2", "--max-tokens", "24",
                            "--timeout", "120", "--json", code=1)
    row = json.loads(done.stdout)
    assert row["identity_matched"][:2] == ["engine", "model"] and "context" in row["identity_matched"], row
    # regression, or suspect when this machine's CPU decodes the tiny model faster than the app's roofline
    assert row["verdict"] in ("regression", "suspect") and row["acceptance_floor"] == r.stack.acceptance_floor, row
    assert any("below the floor" in reason for reason in row["reasons"]), row
    assert (store / "catalog" / "ledger" / f"{STORE_APP}.yaml").is_file()


@pytest.mark.needs_llama_server
def test_smoke_local_passes_from_the_installed_tool(venv, store):
    """`catalog smoke --local` from the wheel: its own GGUF writer (no numpy, no gguf in the venv), a real
    llama-server, a PASS, and no ledger row."""
    ledger = store / "catalog" / "ledger" / f"{STORE_APP}.yaml"
    before = ledger.read_bytes() if ledger.exists() else None
    done = venv.catalog("smoke", STORE_APP, "--local", "--runs", "2", "--max-tokens", "32", "--timeout", "120",
                        "--json")
    assert json.loads(done.stdout)["verdict"] == "pass"
    assert (ledger.read_bytes() if ledger.exists() else None) == before


def test_smoke_local_without_a_server_prints_the_one_command_that_makes_it_pass(venv, store, tmp_path):
    """Issue 42: outside the repository, no LLAMA_SERVER, no build in the cache, none on PATH: `smoke --local` prints
    the one command to run; that command (the build script shipped in the wheel) then gives the server and the smoke
    passes. The build itself takes 20 minutes: the cache holds a copy of the test build, which the script reuses."""
    import shutil

    path = os.pathsep.join(p for p in venv.env["PATH"].split(os.pathsep)
                           if p and not (Path(p) / "llama-server").exists())
    cache = tmp_path / "cache"
    env = {k: v for k, v in venv.env.items() if k != "LLAMA_SERVER"} | {"PATH": path, "CATALOG_CACHE": str(cache)}
    smoke = [str(venv.bin / "catalog"), "smoke", STORE_APP, "--local", "--runs", "2", "--max-tokens", "32",
             "--timeout", "120", "--json"]
    done = run(smoke, cwd=store, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    commands = re.findall(r"`(catalog [^`]*)`", done.stderr)
    assert commands == ["catalog smoke --build-llama-server"] and "about 20 minutes" in done.stderr, done.stderr
    assert (venv.package / "_data" / "ci" / "build-llama-server.sh").is_file()
    if not os.environ.get("LLAMA_SERVER"):
        pytest.skip("no LLAMA_SERVER to stand for the 20-minute build (scripts/test.sh builds it)")
    build = cache / f"llama-server-11434.0.0-b11434-{os.uname().machine}" / "bin"
    shutil.copytree(Path(os.environ["LLAMA_SERVER"]).parent, build, symlinks=True)
    built = run([str(venv.bin / "catalog"), "smoke", "--build-llama-server"], cwd=store, env=env)
    assert built.returncode == 0 and built.stdout.strip() == str(build / "llama-server"), built.stderr
    done = run(smoke, cwd=store, env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["verdict"] == "pass", done.stderr


def test_smoke_a_vllm_app_parses_prometheus_metrics(venv, store):
    from support.vllm_standin import vllm_stand_in

    with vllm_stand_in(max_model_len=131072, drafted_per_request=90, accepted_per_request=54,
                       model="qwen3.6-27b") as url:
        done = venv.catalog("smoke", "vllmqwen36turbo27bone", "--endpoint", url, "--runs", "2", "--max-tokens",
                            "48", "--timeout", "30", "--no-record", "--json", code=None)
    assert done.returncode in (0, 1), done.stderr
    assert '"acceptance": 0.6' in done.stdout, done.stdout


def test_prune_and_the_missing_cluster_client(venv, store):
    done = venv.catalog("prune", "--deprecated", "--dry-run", code=None)
    # the embedded catalog's deprecated apps were removed upstream (catalog sync): nothing is left to prune
    assert done.returncode in (0, 1) and ("dry run" in done.stdout or "nothing to prune" in done.stdout), done.stdout
    done = venv.catalog("smoke", STORE_APP, "--kube-context", "nowhere", code=2)
    assert "pip install 'olares-llm-catalog[kube]'" in done.stderr


def test_nothing_was_written_in_the_package_or_outside_the_store(venv, store):
    assert tree_state(venv.package) == venv.package_before
    assert sorted(p.name for p in venv.work.iterdir()) == ["helm-repo", "market.git", "store"]
    assert list(venv.tmp.iterdir()) == [] and list(venv.home.iterdir()) == []  # no cache, no config
    leftovers = [p.relative_to(store) for p in store.iterdir() if p.name.startswith(".") and p.name not in (
        ".git", ".github", ".gitignore", ".pre-commit-config.yaml")]
    assert leftovers == []
