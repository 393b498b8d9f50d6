"""Real parts for the market tests: a store repository in git, `catalog serve` in a subprocess on 127.0.0.1
(stopped by its PID), and a re-implementation of the maintainer's build rules to check entries against.

`reference_entry` is written from the rules of
github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 `scripts/build-catalog.js`
(docs/market-source.md lists them), independently of generator/publish/market_entry.py: it shares no code
with it, so a wrong rule there makes the comparison fail.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.bump import git
from support.catalogs import REPO
from ruamel.yaml import YAML

SERVE_START_S = 120.0  # first build: packaging, fits and plots on a loaded 2-core machine


def chart_dirs(charts: Path) -> list[Path]:
    """The chart folders of a charts/ folder (render also keeps its list there, `.catalog-render`)."""
    return sorted(p for p in charts.iterdir() if (p / "Chart.yaml").is_file())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_store(root: Path, rendered: Path) -> Path:
    """root/{catalog, charts, CHANGELOG.md}: a copy of the rendered market fixture (tests/conftest.py
    `rendered_market`: the frozen catalog, its releases.yaml and its charts), committed in git."""
    shutil.copytree(rendered / "catalog", root / "catalog", ignore=shutil.ignore_patterns("ledger"))
    shutil.copytree(rendered / "charts", root / "charts")
    shutil.copy(rendered / "CHANGELOG.md", root / "CHANGELOG.md")
    record_formats(root / "catalog")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "store")
    return root


def record_formats(catalog: Path) -> None:
    """`catalog bump` on an unchanged catalog: each recorded version gains the content of its other manifest
    format (releases.yaml `formats:`, generator/versions/formats.py), so the store serves both formats."""
    from generator.cli import main

    assert main(["bump", "--catalog", str(catalog)]) == 0


@dataclass
class Served:
    url: str
    pid: int
    log: Path
    proc: subprocess.Popen

    def get(self, path: str, **kw) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30.0, **kw)

    def post(self, path: str, **kw) -> httpx.Response:
        return httpx.post(self.url + path, timeout=30.0, **kw)

    def health(self) -> dict:
        return self.get("/health").json()


@contextmanager
def serve(catalog: Path, log_dir: Path, *extra: str, poll: float = 0.2) -> Iterator[Served]:
    """`catalog serve --catalog CATALOG` on a free loopback port; killed by PID on exit."""
    port = free_port()
    log = log_dir / f"serve-{port}.log"
    argv = [sys.executable, "-m", "generator.cli", "serve", "--catalog", str(catalog), "--port", str(port),
            "--poll", str(poll), "--no-access-log", *extra]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    served = Served(f"http://127.0.0.1:{port}", proc.pid, log, proc)
    try:
        deadline = time.monotonic() + SERVE_START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"catalog serve exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            try:
                answer = httpx.get(served.url + "/health", timeout=1.0)
                # the whole market: the first seconds serve charts/ alone while git history is read ("starting")
                if answer.status_code == 200 and answer.json().get("status") != "starting":
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"catalog serve not up after {SERVE_START_S}s:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        yield served
    finally:
        proc.kill()
        proc.wait(timeout=10)


def package_tree(data: bytes) -> dict[str, str]:
    """The chart files of a downloaded Helm package, read by publish/package.py's bounded reader."""
    import tempfile

    from generator.publish.package import tree_of_package

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chart.tgz"
        path.write_bytes(data)
        return tree_of_package(path)


def png(colour: tuple[int, int, int]) -> bytes:
    """A real 8x8 PNG (Pillow, installed with matplotlib)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(out, format="PNG")
    return out.getvalue()


def wait_for(predicate, seconds: float = 90.0, step: float = 0.2):
    """Poll `predicate()` until it returns a true value; that value, or a failure after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    pytest.fail(f"condition not met within {seconds}s")


def ids_in_batches(ids: list[str], size: int = 10) -> list[list[str]]:
    """Olares asks for details in batches of 10 (beclab/market detail_fetch_step.go BatchSize)."""
    return [ids[i:i + size] for i in range(0, len(ids), size)]


# ---- the maintainer's build rules, re-implemented for the tests ------------------------------------------

_YAML = YAML(typ="safe")


def _truthy(v: Any) -> bool:
    return not (v is None or v is False or v == "" or (type(v) in (int, float) and v == 0))


def _or(*vals: Any) -> Any:
    return next((v for v in vals[:-1] if _truthy(v)), vals[-1])


def ref_cpu(v: Any) -> str:
    """parseCpu: `m` suffix -> parseInt / 1000; else String(v); "0" when empty."""
    if not _truthy(v):
        return "0"
    s = str(v)
    if s.endswith("m"):
        n = int(re.match(r"\s*(\d+)", s).group(1)) / 1000
        return str(int(n)) if n == int(n) else str(n)
    return s


def ref_bytes(v: Any) -> str:
    """parseBytes: Ki/Mi/Gi/Ti suffix -> parseInt x 1024^k; else String(v); "0" when empty."""
    if not _truthy(v):
        return "0"
    s = str(v)
    for k, suffix in enumerate(("Ki", "Mi", "Gi", "Ti"), start=1):
        if s.endswith(suffix):
            return str(int(re.match(r"\s*(\d+)", s).group(1)) * 1024 ** k)
    return s


def ref_strip(text: str) -> str:
    out, skip = [], False
    for line in text.split("\n"):
        t = line.strip()
        if re.match(r"\{\{-?\s*if\b", t):
            continue
        if re.match(r"\{\{-?\s*else\b", t):
            skip = True
            continue
        if re.match(r"\{\{-?\s*end\b", t):
            skip = False
            continue
        if not skip:
            out.append(re.sub(r"\{\{.*?\}\}", "", line))
    return "\n".join(out)


def ref_id(name: str) -> str:
    return hashlib.md5(name.encode()).hexdigest()[:8]


def _load(path: Path, strip: bool) -> Any:
    text = path.read_text(encoding="utf-8")
    return _YAML.load(ref_strip(text) if strip else text)


def reference_entry(chart_dir: Path, date: str) -> tuple[dict, dict]:
    """(summary, detail) as build-catalog.js would write them for `chart_dir`, stamped with `date` (the one
    documented change: the script stamps the build time). An olares-v3 manifest's first `spec.accelerator`
    entry stands for the v2 flat fields."""
    chart = _load(chart_dir / "Chart.yaml", False)
    manifest = _load(chart_dir / "OlaresManifest.yaml", True)
    meta, spec = manifest.get("metadata") or {}, manifest.get("spec") or {}
    flat = {k: spec.get(k) for k in ("requiredCpu", "requiredMemory", "requiredDisk", "requiredGpu")}
    if not any(_truthy(v) for v in flat.values()) and spec.get("accelerator"):
        acc = spec["accelerator"][0]
        flat = {"requiredCpu": acc.get("requiredCpu"), "requiredMemory": acc.get("requiredMemory"),
                "requiredDisk": acc.get("requiredDisk"), "requiredGpu": acc.get("requiredGPUMemory")}
    name = _or(chart.get("name"), meta.get("name"), chart_dir.name)
    ident = ref_id(name)
    stamp = f"{date}T00:00:00.000Z"
    i18n = {}
    if (chart_dir / "i18n").is_dir():
        locales = (p.name for p in (chart_dir / "i18n").iterdir() if (p / "OlaresManifest.yaml").is_file())
        for loc in sorted(locales):
            lm = _load(chart_dir / "i18n" / loc / "OlaresManifest.yaml", True)
            i18n[loc] = {"metadata": {"title": _or((lm.get("metadata") or {}).get("title"), ""),
                                      "description": _or((lm.get("metadata") or {}).get("description"), "")},
                         "entrances": None,
                         "spec": {"fullDescription": _or((lm.get("spec") or {}).get("fullDescription"), ""),
                                  "upgradeDescription": _or((lm.get("spec") or {}).get("upgradeDescription"), "")}}
    categories = _or(meta.get("categories"), [])
    version = _or(meta.get("version"), chart.get("version"))
    summary = {"id": ident, "name": name, "version": version,
               "category": _or(categories[0] if categories else None, ""),
               "description": _or(meta.get("description"), ""), "icon": _or(meta.get("icon"), ""),
               "screenshots": None, "tags": None, "metadata": None, "source": 1, "updated_at": stamp}
    detail = {
        "id": ident, "name": name, "cfgType": _or(manifest.get("olaresManifest.type"), "app"),
        "chartName": f"{name}-{chart['version']}.tgz", "icon": _or(meta.get("icon"), ""),
        "description": _or(meta.get("description"), ""), "appID": ident, "title": _or(meta.get("title"), name),
        "version": version, "categories": categories,
        "versionName": _or(spec.get("versionName"), chart.get("appVersion"), meta.get("version"), ""),
        "fullDescription": _or(spec.get("fullDescription"), meta.get("description"), ""),
        "upgradeDescription": _or(spec.get("upgradeDescription"), ""),
        "promoteImage": _or(spec.get("promoteImage"), None),
        "promoteVideo": _or(spec.get("promoteVideo"), ""), "subCategory": _or(spec.get("subCategory"), ""),
        "locale": ["en-US", *[k for k in i18n if k != "en-US"]] if i18n else _or(spec.get("locale"), ["en-US"]),
        "developer": _or(spec.get("developer"), ""), "requiredMemory": ref_bytes(flat["requiredMemory"]),
        "requiredDisk": ref_bytes(flat["requiredDisk"]), "supportClient": _or(spec.get("supportClient"), {}),
        "supportArch": _or(spec.get("supportArch"), []), "requiredGPU": ref_bytes(flat["requiredGpu"]),
        "requiredCPU": ref_cpu(flat["requiredCpu"]), "rating": 0, "target": _or(spec.get("target"), ""),
        "permission": _or(manifest.get("permission"), {}),
        "entrances": [{"name": _or(e.get("name"), ""), "host": _or(e.get("host"), ""), "port": _or(e.get("port"), 0),
                       "title": _or(e.get("title"), ""), "icon": _or(e.get("icon"), ""),
                       "authLevel": _or(e.get("authLevel"), "private"), "invisible": _or(e.get("invisible"), False),
                       "openMethod": _or(e.get("openMethod"), ""),
                       "disablePreload": _or(e.get("disablePreload"), False)}
                      for e in manifest.get("entrances") or []],
        "middleware": _or(manifest.get("middleware"), None), "options": _or(manifest.get("options"), {}),
        "submitter": _or(spec.get("submitter"), "orales-market"), "doc": _or(spec.get("doc"), ""),
        "website": _or(spec.get("website"), ""), "featuredImage": _or(spec.get("featuredImage"), ""),
        "sourceCode": _or(spec.get("sourceCode"), ""), "license": _or(spec.get("license"), []),
        "legal": _or(spec.get("legal"), None), "i18n": i18n, "namespace": "",
        "onlyAdmin": _or(spec.get("onlyAdmin"), False),
        "lastCommitHash": "", "createTime": 0, "updateTime": 0, "count": None,
        "versionHistory": [{"appName": name, "version": version, "versionName": _or(chart.get("appVersion"), ""),
                            "mergedAt": stamp, "upgradeDescription": ""}],
        "screenshots": None, "tags": None, "metadata": None, "updated_at": stamp,
    }
    return summary, detail


def to_v2(chart_dir: Path) -> None:
    """Rewrite a rendered olares-v3 manifest in the olares-v2 form (olaresManifest 0.10.0, apiVersion v2, the
    figures of `spec.accelerator` as the flat `requiredCpu/Memory/Disk/Gpu` of beclab/api AppSpec)."""
    yaml = YAML(typ="rt")
    path = chart_dir / "OlaresManifest.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["olaresManifest.version"] = "0.10.0"
    data["apiVersion"] = "v2"
    acc = data["spec"].pop("accelerator")[0]
    for src, dst in (("requiredCpu", "requiredCpu"), ("limitedCpu", "limitedCpu"),
                     ("requiredMemory", "requiredMemory"), ("limitedMemory", "limitedMemory"),
                     ("requiredDisk", "requiredDisk"), ("limitedDisk", "limitedDisk"),
                     ("requiredGPUMemory", "requiredGpu"), ("limitedGPUMemory", "limitedGpu")):
        if src in acc:
            data["spec"][dst] = acc[src]
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)


def node_with_js_yaml(checkout: Path) -> str | None:
    """`node` when it and js-yaml (in the checkout's node_modules or on NODE_PATH) can run the real script."""
    node = shutil.which("node")
    if node is None:
        return None
    env = {**os.environ, "NODE_PATH": os.pathsep.join(filter(None, [str(checkout / "node_modules"),
                                                                     os.environ.get("NODE_PATH")]))}
    probe = subprocess.run([node, "-e", "require('js-yaml')"], check=False, env=env, capture_output=True, timeout=60)
    return node if probe.returncode == 0 else None
