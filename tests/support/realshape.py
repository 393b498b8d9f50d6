"""Real-shape probes for the fit tests: the market fixture's llama.cpp apps, their GGUFs, and the probe runner.

The runner is scripts/fit_probe.py's `run_one` (stdlib only, the same code that measured the GPU): it boots the
real llama-server on 127.0.0.1 at `-lv 4`, waits for it to listen, and kills its process group.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

from support.catalogs import MARKET_CATALOG, REPO

# llama.cpp apps of the market fixture (the same models as catalog/models): every one has a probe except Lucebox
# (its dflash_server is not llama-server).
LLAMA_APPS = ("dflashqwen36one", "gemma426ba4bone", "gemma4e2bone", "llamacppqwen36a3bone", "llamacppqwen36dense27bone",
              "llamacppqwen36mtpone", "qwen36a3bvisionone")
NOT_PROBED = {"lucedflashqwen36one": "Lucebox's dflash_server is its own engine, not llama-server"}


@cache
def fit_probe() -> ModuleType:
    """scripts/fit_probe.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("fit_probe", REPO / "scripts" / "fit_probe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def market():
    from generator.catalog import load_catalog

    return load_catalog(MARKET_CATALOG)


def gguf_for(folder: Path, app: str) -> tuple[Path, object, object]:
    """(path, probe, spec) of the app's real-shape model in `folder`, written once per folder."""
    from generator.fit import realshape
    from generator.fit.probe import probe_for

    r = market().apps[app]
    probe = probe_for(r)
    assert probe is not None
    spec = realshape.spec_for(r.model, probe.quant, mtp=probe.mtp)
    path = folder / f"{probe.model}-{probe.quant}{'-mtp' if probe.mtp else ''}.gguf"
    if not path.exists():
        realshape.write_spec(spec, path)
    return path, probe, spec


def boot_log(model: Path, args: list[str], folder: Path, *, warmup: bool = False):
    """llama-server ($LLAMA_SERVER, CPU) booted on `model` with `args` until it listens (scripts/fit_probe.py
    `run_one`, `-lv 4`, no request), then stopped; its log parsed (generator/fit/calibrate.py `parse`)."""
    from generator.fit.calibrate import parse

    from support.tiers import llama_server

    log_path = folder / "boot.log"
    facts = fit_probe().run_one(llama_server(), str(model), args, log_path, gpu=False, timeout=420, threads=2,
                                request=False, warmup=warmup)
    log = log_path.read_text(errors="replace")
    assert facts["listening"], log[-4000:]
    parsed = parse(log)
    assert parsed.all("kv_buffer"), log[-3000:]
    return parsed, log
