"""Where the tool's own data is, and which catalog a command works on (the way git finds its repository).

Data. `catalog/` (the embedded catalog) and `templates/` stay at the repository's top level; the build
(setup.py) maps them into the wheel as `generator/_data/catalog` and `generator/_data/templates`.
`importlib.resources` finds them there in an installed package, and beside the package in a source checkout
or an editable install, so the same call works everywhere.

Which catalog. `--catalog DIR`, else the `CATALOG_DIR` environment variable, else the nearest `catalog/`
folder with an `apps/` folder, walking up from the current folder, else the embedded catalog. The embedded
catalog, and anything inside the installed package, is read-only: a command that writes refuses it (the CLI
says how to start a store of your own with `catalog init`). Outputs (charts/, CHANGELOG.md, releases,
the smoke ledger) always go beside or inside the catalog used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from generator.core.errors import UsageError

PACKAGE = "generator"
ENV = "CATALOG_DIR"


def package_dir() -> Path:
    """The folder of the installed (or checked-out) `generator` package."""
    return Path(str(resources.files(PACKAGE))).resolve()


def _data(name: str) -> Path:
    packaged = resources.files(PACKAGE).joinpath("_data", name)
    if packaged.is_dir():  # a wheel, `pip install .`, pipx
        return Path(str(packaged))
    return package_dir().parent / name  # a source checkout or an editable install: the repository's folder


def build_script() -> Path:
    """.ci/build-llama-server.sh, shipped in the wheel as generator/_data/ci/ (setup.py); the clone's own file in a
    source checkout or an editable install."""
    packaged = resources.files(PACKAGE).joinpath("_data", "ci", "build-llama-server.sh")
    if packaged.is_file():
        return Path(str(packaged))
    return package_dir().parent / ".ci" / "build-llama-server.sh"


def embedded_catalog() -> Path:
    """The catalog shipped with the tool."""
    return _data("catalog")


def templates_dir() -> Path:
    """The chart (and store scaffold) templates shipped with the tool."""
    return _data("templates")


def inside_package(path: Path) -> bool:
    """True when `path` is inside the installed package (never a place to write)."""
    return path.resolve().is_relative_to(package_dir())


def is_catalog(path: Path) -> bool:
    return (path / "apps").is_dir()


@dataclass(frozen=True)
class CatalogChoice:
    """The catalog a command uses and how it was chosen: `--catalog`, `CATALOG_DIR`, `found` or `embedded`."""

    root: Path
    how: str

    @property
    def read_only(self) -> bool:
        return self.how == "embedded" or inside_package(self.root)

    def describe(self) -> str:
        why = {"--catalog": "from --catalog", ENV: f"from ${ENV}", "found": "found from the current folder",
               "embedded": "the embedded catalog, read-only; `catalog init DIR` starts your own"}[self.how]
        return f"{_shown(self.root)} ({why})"


def _shown(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def find_upward(start: Path) -> Path | None:
    """The nearest `catalog/` with an `apps/` folder in `start` or one of its parents."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / "catalog"
        if is_catalog(candidate):
            return candidate
    return None


def choose_catalog(option: Path | None, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> CatalogChoice:
    """`--catalog`, else $CATALOG_DIR, else the nearest catalog/ upward from `cwd`, else the embedded one."""
    env = os.environ if env is None else env
    if option is not None:
        if not is_catalog(option):
            raise UsageError(f"--catalog {option}: not a catalog (no apps/ folder); give the folder that holds "
                             "apps/, models/, stacks/ and devices/")
        return CatalogChoice(option, "--catalog")
    named = env.get(ENV, "")
    if named:
        path = Path(named).expanduser()
        if not is_catalog(path):
            raise UsageError(f"{ENV}={named}: not a catalog (no apps/ folder); point {ENV} at a catalog folder "
                             f"or unset it")
        return CatalogChoice(path, ENV)
    found = find_upward(cwd or Path.cwd())
    if found is not None:
        return CatalogChoice(found, "found")
    return CatalogChoice(embedded_catalog(), "embedded")
