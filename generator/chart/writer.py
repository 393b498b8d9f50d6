"""Write rendered charts atomically, delete stale files, and diff against what is on disk."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from pathlib import Path

from generator.core.errors import translate_os_error

Tree = dict[str, str]  # relative path -> text


def read_tree(folder: Path) -> Tree:
    """Every file under `folder` by its relative POSIX path, in path order (os.walk: one scandir a folder)."""
    out = {}
    for top, _dirs, files in os.walk(folder):
        rel_top = os.path.relpath(top, folder).replace(os.sep, "/")
        for name in files:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            path = os.path.join(top, name)
            try:
                with open(path, encoding="utf-8") as fh:
                    out[rel] = fh.read()
            except UnicodeDecodeError:
                out[rel] = "<binary>"
            except OSError as exc:
                raise translate_os_error(exc, path, "read") from exc
    return dict(sorted(out.items()))


def diff_tree(label: str, old: Tree, new: Tree) -> list[str]:
    """Unified diffs of every missing, extra or changed file; empty when identical."""
    lines: list[str] = []
    for rel in sorted(set(old) | set(new)):
        before, after = old.get(rel), new.get(rel)
        if before == after:
            continue
        lines += difflib.unified_diff(
            (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
            fromfile=f"a/{label}/{rel}" if before is not None else "/dev/null",
            tofile=f"b/{label}/{rel}" if after is not None else "/dev/null",
        )
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    return lines


def _write(folder: Path, tree: Tree) -> None:
    for rel, text in tree.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)


def write_charts(out: Path, charts: dict[str, Tree], *, prune_others: bool) -> list[str]:
    """Replace `out/<name>/` for every chart that differs from its tree on disk; with prune_others, delete
    chart folders not in `charts`.

    Everything is first written to a temporary folder beside `out`; the live folders are swapped
    only once all charts are on disk, so a failure leaves the previous charts intact.
    Returns the names of the folders removed as stale. An OSError becomes a FileSystemError naming the path.
    """
    try:
        return _write_charts(out, charts, prune_others=prune_others)
    except OSError as exc:
        raise translate_os_error(exc, exc.filename or out, "write") from exc


def _write_charts(out: Path, charts: dict[str, Tree], *, prune_others: bool) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".render-", dir=out.parent))
    try:
        changed = [name for name, tree in charts.items() if read_tree(out / name) != tree]  # unchanged: untouched
        for name in changed:
            _write(staging / name, charts[name])
        stale = sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")
                       and p.name not in charts) if prune_others else []
        trash = Path(tempfile.mkdtemp(prefix=".old-", dir=out.parent))
        _swap(out, staging, trash, changed, stale)
        shutil.rmtree(trash, ignore_errors=True)
        return stale
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _swap(out: Path, staging: Path, trash: Path, names: list[str], stale: list[str]) -> None:
    """Move the live folders to `trash` and the staged ones in; on any failure put the old ones back.

    If even the roll-back fails, `trash` (a `.old-*` folder beside `out`) keeps the previous charts.
    """
    parked: list[str] = []  # live folders moved to trash
    placed: list[str] = []  # staged folders now live
    try:
        for name in names:
            if (out / name).exists():
                os.replace(out / name, trash / name)
                parked.append(name)
            os.replace(staging / name, out / name)
            placed.append(name)
        for name in stale:
            os.replace(out / name, trash / name)
            parked.append(name)
    except BaseException:
        for name in reversed(placed):
            shutil.rmtree(out / name, ignore_errors=True)
        for name in parked:
            os.replace(trash / name, out / name)
        shutil.rmtree(trash, ignore_errors=True)
        raise


def stale_folders(out: Path, names: set[str]) -> list[str]:
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in names)
