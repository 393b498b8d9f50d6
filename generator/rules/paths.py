"""PATH001: no absolute path of a machine in a catalog file.

A catalog is committed and shared: a folder of the machine that wrote it (`/home/me/upstream`, `/tmp/x`,
`C:\\Users\\me`, `file:///...`) means nothing to the store's next maintainer, and names a person's machine. `catalog
sync` records its upstream portably (a URL less its credentials, a clone's remote, else a folder relative to the store:
docs/sync.md); this rule refuses what an older sync or a hand edit left.

What counts: a path under the folders that hold users' and scratch files on Linux, macOS and Windows (`/home/`,
`/Users/`, `/root/`, `/tmp/`, `/var/tmp/`, `/var/folders/`, `/private/`, `/mnt/`, `/media/`, `/work/`, `X:\\`) and any
`file:///` URL. Paths inside a container (`/models`, `/app`, `/usr/local/bin`, `/etc/...`, `/root/.cache/`, the
engine's defaults) are what a chart runs with and are not machine paths.

Each app's own file is checked with the app; every other catalog file (sync.yaml, corrections.yaml, models, stacks,
removed apps, drafts) is checked once, when the catalog's first app in name order is, so a whole `catalog check`
reports each line once. Such a finding names what it is about (`file_subject`): a draft app or a removed app by its
name, any other file by its path; `catalog check` reports it under that subject, never under the app that happened
to run the sweep (generator/check/run.py `by_subject`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from generator.catalog import display_path
from generator.core import read_regular_file
from generator.core import CatalogError
from generator.core import Finding
from generator.rules import AppContext, rule

MACHINE_PATH = re.compile(
    r"(?<![\w.~$/-])(?:file:///[^\s'\"]*"
    r"|/(?:home|Users|tmp|work|mnt|media|private|var/tmp|var/folders)/[^\s'\"]*"
    r"|/root/(?!\.cache/)[^\s'\"]*"
    r"|[A-Za-z]:\\[^\s'\"]*)")
# What every MACHINE_PATH match holds; a text without any (nearly every catalog file) is not scanned line by line.
MAY_HOLD = re.compile(r"file:///|/(?:home|Users|tmp|work|mnt|media|private|var/tmp|var/folders|root)/|:\\")
TEXT_SUFFIXES = (".yaml", ".yml", ".jinja", ".md", ".json", ".tsv", ".txt")
MAX_BYTES = 4 * 2**20
FIX = ("name it portably: a URL (without credentials), or a path relative to the store; `catalog sync` of the "
       "upstream's URL (or of a clone of it) rewrites catalog/sync.yaml and the reasons it wrote")


def machine_paths(text: str) -> Iterator[tuple[int, str]]:
    """(line, path) of each absolute machine path in `text`; the punctuation of the sentence it ends
    (`(/home/me/x.yaml:254).`) is not part of it."""
    if MAY_HOLD.search(text) is None:
        return
    for n, line in enumerate(text.splitlines(), 1):
        for match in MACHINE_PATH.finditer(line):
            yield n, match.group(0).rstrip(").,;")


def _text(path: Path) -> str | None:
    try:
        return read_regular_file(path, MAX_BYTES, "a catalog file").decode("utf-8", "replace")
    except CatalogError:
        return None


def file_subject(root: Path, path: Path) -> str:
    """What a catalog file other than a listed app's is about: the app of `apps/<name>.yaml` (a removed one) or of
    `drafts/apps/<name>.yaml` (a draft), by its name; any other file (sync.yaml, a model, a stack, a draft stack) by its
    path as shown."""
    try:
        rel = path.relative_to(root).parts
    except ValueError:
        rel = ()
    if path.suffix in (".yaml", ".yml") and rel[:-1] in (("apps",), ("drafts", "apps")):
        return path.stem
    return display_path(path)


def _findings(ctx: AppContext, path: Path, subject: str | None = None) -> Iterable[Finding]:
    text = _text(path)
    for line, found in machine_paths(text or ""):
        yield Finding(rule="PATH001", severity="error", app=subject or ctx.app.name,
                      message=f"an absolute path of a machine ({found[:80]}): nobody else can use it",
                      fix=FIX, file=display_path(path), line=line)


def _catalog_files(root: Path, own: set[Path]) -> list[Path]:
    """Every text file of the catalog but the listed apps' own files, walked iteratively, links not followed."""
    out, stack = [], [root]
    while stack:
        folder = stack.pop()
        for item in sorted(folder.iterdir()):
            if item.is_symlink():
                continue
            if item.is_dir():
                if item.name not in (".git", "__pycache__"):
                    stack.append(item)
            elif item.suffix in TEXT_SUFFIXES and item.resolve() not in own:
                out.append(item)
    return sorted(out)


@rule("PATH001", "error", "no absolute path of a machine in a catalog file",
      "a folder of the machine that wrote the catalog means nothing to its next maintainer and names a person's "
      "machine (a sync recorded as `/home/me/upstream` cannot be re-run by anyone else)",
      "docs/sync.md \"A portable record\"")
def no_machine_path(ctx: AppContext) -> Iterable[Finding]:
    cat = ctx.catalog
    yield from _findings(ctx, cat.file_of(ctx.app.name))
    listed = sorted(n for n, r in cat.apps.items() if r.app.status != "removed")
    if not listed or ctx.app.name != listed[0]:
        return
    own = {cat.file_of(n).resolve() for n in listed}
    for path in _catalog_files(cat.root, own):
        yield from _findings(ctx, path, file_subject(cat.root, path))
