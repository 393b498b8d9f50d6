"""Helpers of the rule tests: run `catalog check` through the real CLI entry point and read its JSON.

The app names are those of the market fixture (tests/fixtures/market/catalog).
"""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from generator.cli import main

from support.catalogs import edit_app

FAST = "vllmqwen36turbo27bone"
LONG = "llamacppqwen36mtpone"
E2B = "gemma4e2bone"
G26 = "gemma426ba4bone"
E4B = "vllmgemma4e4bone"
A3B = "llamacppqwen36a3bone"
DENSE = "vllmqwen36dense27bone"


def check(capsys, catalog: Path, *apps: str, lint: bool = False) -> tuple[int, dict]:
    """Exit code and parsed `--json` output of `catalog check APP... --catalog DIR`."""
    argv = ["check", *apps, "--catalog", str(catalog), "--json"] + ([] if lint else ["--no-lint"])
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


def findings(data: dict, rule: str | None = None, app: str | None = None) -> list[dict]:
    return [f for a in data["apps"] if app in (None, a["app"]) for f in a["findings"] if rule in (None, f["rule"])]


def one(data: dict, rule: str) -> dict:
    found = findings(data, rule)
    assert found, f"{rule} did not fire; findings: {[(f['rule'], f['message']) for f in findings(data)]}"
    return found[0]


def app_doc(catalog: Path, app: str) -> dict:
    return YAML(typ="rt").load((catalog / "apps" / f"{app}.yaml").read_text(encoding="utf-8"))


def set_app(catalog: Path, app: str, **changes) -> None:
    """Round-trip edit of an app file: top-level keys (None deletes)."""
    edit_app(catalog, app, **changes)


def add_env(catalog: Path, app: str, **env: str) -> None:
    data = app_doc(catalog, app)
    merged = dict(data.get("env") or {})
    merged.update(env)
    set_app(catalog, app, env=merged)


def add_args(catalog: Path, app: str, *args: str) -> None:
    data = app_doc(catalog, app)
    set_app(catalog, app, extra_args=list(data.get("extra_args") or []) + list(args))


def line_of(catalog: Path, app: str, text: str) -> int:
    """1-based line of the first line of the app file containing `text`."""
    lines = (catalog / "apps" / f"{app}.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)
