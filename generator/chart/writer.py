"""Write the charts folder as one atomic step, only ever touching what `catalog render` wrote itself.

The output folder belongs to the tool (docs/security.md, "Files"):

- **Ownership.** `<out>/.catalog-render` lists the chart folders the tool wrote. A run replaces or removes
  only those; an output folder holding anything else (a file, a folder not listed, a symbolic link) is
  refused with exit 2 before anything is written or deleted. A missing or empty folder is fine, and so is
  an unlisted folder holding exactly the chart this run writes under its name (nothing is lost: it is
  taken over).
- **One atomic step.** The complete new tree (every chart folder and the list) is built in a fresh folder
  `<parent>/.<out>.render-<random>` beside the output folder, on the same filesystem, then exchanged with
  the output folder by one `renameat2(RENAME_EXCHANGE)` (Linux 3.15+, man 2 rename): a reader, or a kill -9
  at any moment, sees the old tree or the new one, never a mixture. The old tree, now at the staging name,
  is deleted afterwards; a kill before that leaves it as a leftover the next run deletes. Chart folders that
  did not change are carried over as hard links (no copy, same inodes).
- **Own filesystem.** When the output folder is a mount point (or its parent is not writable, or lies on
  another filesystem), the folder itself cannot be exchanged; the run then stages inside it
  (`<out>/.render-<random>`, so every rename stays on the output's filesystem) and exchanges the changed
  chart folders one by one: each folder is always complete, and a run killed half-way leaves some folders
  new and some old, which the next run (or `catalog render --check`) finds and completes.
- **One run at a time.** A run holds `flock(LOCK_EX)` on the output folder for its whole length; a second
  run into the same folder waits (saying so) until the first is done, then starts from the tree it left.
- **Leftovers** of a killed run (`.<out>.render-*`, `.<out>.old-*` beside the folder, `.render-*`, `.old-*`
  inside it) are deleted by the next run, under the lock; .gitignore ignores them.
- **No symbolic link is followed**: reading a chart (`read_tree`) records a link instead of reading
  through it, and a link inside an owned folder makes the folder foreign.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import difflib
import errno
import fcntl
import os
import platform
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.core import FileSystemError, UsageError, translate_os_error
from generator.core import safe_line
from generator.core import read_sized

Tree = dict[str, str]  # relative path -> text

MANIFEST = ".catalog-render"
MANIFEST_HEADER = ("# Written by `catalog render`: the chart folders below are its own; it replaces or deletes them.\n"
                   "# Anything else in this folder makes `catalog render` refuse it. Do not edit.\n")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$")  # one folder name: no `/`, never `.` or `..`
LOCK_WAIT_S = 600  # how long a second run waits for the first before giving up
MAX_READ_BYTES = 16 * 2**20  # a chart file is a few KiB; a larger file is shown by its size, not read


# ---- reading ---------------------------------------------------------------------------------------------

def read_tree(folder: Path) -> Tree:
    """Every file under `folder` by its relative POSIX path, in path order. Symbolic links and special files
    are recorded (`<symbolic link to X>`), never followed or opened; a missing folder is an empty tree."""
    out: Tree = {}
    try:
        top_info = os.lstat(folder)
    except FileNotFoundError:
        return out
    if not stat.S_ISDIR(top_info.st_mode):
        return {".": _describe(str(folder), top_info)}
    for top, dirs, files in os.walk(folder):
        rel_top = os.path.relpath(top, folder).replace(os.sep, "/")
        for name in [*files, *[d for d in dirs if os.path.islink(os.path.join(top, d))]]:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            out[rel] = _read_file(os.path.join(top, name))
    return dict(sorted(out.items()))


def _read_file(path: str) -> str:
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_READ_BYTES:
            return _describe(path, info)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            data = read_sized(fh, info.st_size, MAX_READ_BYTES)
    except OSError as exc:
        return f"<unreadable: {exc.strerror}>"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "<binary>"


def _describe(path: str, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return f"<symbolic link to {safe_line(os.readlink(path))}>"
    if stat.S_ISREG(info.st_mode):
        return f"<file of {info.st_size} bytes>"
    return "<not a regular file>"


def diff_tree(label: str, old: Tree, new: Tree) -> list[str]:
    """Unified diffs of every missing, extra or changed file; empty when identical."""
    lines: list[str] = []
    for rel in sorted(set(old) | set(new)):
        before, after = old.get(rel), new.get(rel)
        if before == after:
            continue
        lines += difflib.unified_diff(
            (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
            fromfile=f"a/{label}/{rel}".replace("/./", "/") if before is not None else "/dev/null",
            tofile=f"b/{label}/{rel}".replace("/./", "/") if after is not None else "/dev/null",
        )
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    return lines


# ---- what the output folder holds ----------------------------------------------------------------------

def _is_leftover(name: str) -> bool:
    return name.startswith((".render-", ".old-"))


def _parent_leftover_prefixes(out: Path) -> tuple[str, str]:
    return f".{out.name}.render-", f".{out.name}.old-"


def read_manifest(out: Path) -> set[str] | None:
    """The chart folders the tool owns in `out`, or None when `out` has no list. A list that is not one
    folder name a line (or is a link, or huge) raises UsageError: the folder is not the tool's."""
    path = out / MANIFEST
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise translate_os_error(exc, path, "read") from exc
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_READ_BYTES:
        raise UsageError(f"{safe_line(path)}: not the list `catalog render` writes (not a regular file); "
                         "the folder is not catalog's: choose another --out")
    text = _read_file(str(path))
    names: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not _NAME.match(line):
            raise UsageError(f"{safe_line(path)}:{number}: {safe_line(line, 80)!r} is not a folder name; this list "
                             "is written by `catalog render` only: restore it (git checkout) or choose another --out")
        names.add(line)
    return names


def manifest_text(names: Iterable[str]) -> str:
    return MANIFEST_HEADER + "".join(f"{name}\n" for name in sorted(names))


def manifest_diff(out: Path, names: Iterable[str]) -> list[str]:
    """The diff of `out/.catalog-render` against the list a full render of `names` writes (for --check)."""
    path = out / MANIFEST
    current = _read_file(str(path)) if os.path.lexists(path) else None
    expected = manifest_text(names)
    if current == expected:
        return []
    return diff_tree(".", {} if current is None else {MANIFEST: current}, {MANIFEST: expected})


def inventory(out: Path) -> tuple[set[str], list[str]]:
    """(owned chart folders present in `out`, foreign entries): foreign is everything but the list, the
    leftovers of a killed run and real folders the list names."""
    if not os.path.lexists(out):
        return set(), []
    if not out.is_dir():
        raise UsageError(f"{safe_line(out)}: not a folder; pass --out with a folder for the charts")
    listed = read_manifest(out) or set()
    owned: set[str] = set()
    foreign: list[str] = []
    try:
        entries = sorted(os.scandir(out), key=lambda e: e.name)
    except OSError as exc:
        raise translate_os_error(exc, out, "list") from exc
    for entry in entries:
        if entry.name == MANIFEST:
            continue
        if _is_leftover(entry.name) and (entry.is_dir(follow_symlinks=False) or entry.name.endswith(".tmp")):
            continue
        if entry.name in listed and entry.is_dir(follow_symlinks=False):
            owned.add(entry.name)
        else:
            foreign.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
    return owned, foreign


def foreign_error(out: Path, foreign: list[str]) -> UsageError:
    shown = ", ".join(safe_line(name, 60) for name in foreign[:8]) + (f" and {len(foreign) - 8} more"
                                                                      if len(foreign) > 8 else "")
    hint = ""
    if not os.path.lexists(out / MANIFEST) and all((out / f.rstrip("/") / "Chart.yaml").is_file() for f in foreign):
        hint = (f"; if these are charts an older `catalog render` wrote (before it kept its list {MANIFEST}): "
                "`catalog render` takes over those identical to what it writes; move the others away")
    return UsageError(f"{safe_line(out)} holds entries `catalog render` did not write: {shown}; nothing was written "
                      "or deleted. The output folder is the tool's alone (docs/security.md): pass --out with a new "
                      f"or empty folder, or move those entries away{hint}")


def ensure_writable(out: Path) -> None:
    """Raise before anything is written when `out` holds foreign entries (for commands that write other
    files first and the charts last: prune, bump)."""
    _owned, foreign = inventory(_real(out))
    if foreign:
        raise foreign_error(out, foreign)


def stale_folders(out: Path, names: set[str]) -> list[str]:
    """Folders of `out` a full render would delete (owned, not rendered) or refuse (foreign), for --check."""
    if not out.is_dir():
        return []
    try:
        owned, foreign = inventory(out)
    except UsageError:
        return sorted(p.name for p in out.iterdir() if p.name != MANIFEST and not _is_leftover(p.name))
    return sorted((owned | {f.rstrip("/") for f in foreign}) - names)  # a rendered name is diffed as a chart


# ---- writing ---------------------------------------------------------------------------------------------

def write_charts(out: Path, charts: dict[str, Tree], *, prune_others: bool, remove: Iterable[str] = (),
                 on_wait: Callable[[str], None] | None = None) -> list[str]:
    """Make `out/<name>/` hold `charts[name]` for every chart; with `prune_others` delete the owned chart
    folders not in `charts`; delete the owned folders named in `remove`. All in one atomic step (see the
    module docstring); an unchanged tree is left as it is. Returns the folders removed."""
    for name in [*charts, *remove]:
        if not _NAME.match(name):
            raise UsageError(f"{safe_line(name, 80)!r} cannot be a chart folder name")
    out = _real(out)
    with _locked(out, on_wait) as created:
        try:
            return _write_locked(out, charts, prune_others, set(remove))
        except BaseException:
            if created:
                _rmdir_quietly(out)
            raise


def _write_locked(out: Path, charts: dict[str, Tree], prune_others: bool, remove: set[str]) -> list[str]:
    _clean_leftovers(out)
    owned, foreign = inventory(out)
    adopted = {f.rstrip("/") for f in foreign if _identical(out, f.rstrip("/"), charts)}
    foreign = [f for f in foreign if f.rstrip("/") not in adopted]
    if foreign:
        raise foreign_error(out, foreign)
    owned |= adopted
    gone = {n for n in owned if n in remove or (prune_others and n not in charts)} - set(charts)
    keep = (owned | set(charts)) - gone
    changed = {name for name, tree in charts.items() if read_tree(out / name) != tree}
    if not changed and not gone and _manifest_is(out, keep):
        return []
    try:
        if _can_exchange(out):
            _replace_whole(out, charts, changed, keep)
        else:
            _replace_each(out, charts, changed, gone, owned, keep)
    except OSError as exc:
        raise translate_os_error(exc, None, "write the charts into " + str(out)) from exc
    return sorted(gone)


def _manifest_is(out: Path, names: set[str]) -> bool:
    """True when `out/.catalog-render` is byte for byte what a render of `names` writes (a list a merge left out of
    order, or with a line twice, is rewritten: `render --check` compares the text)."""
    try:
        return (out / MANIFEST).read_text(encoding="utf-8") == manifest_text(names)
    except (OSError, UnicodeDecodeError):
        return False


def _identical(out: Path, name: str, charts: dict[str, Tree]) -> bool:
    """A folder the list does not name but that holds exactly the chart this run writes under that name
    (an up-to-date chart committed without the list, or written before the list existed): replacing it
    loses nothing, so it is taken over."""
    path = out / name
    return name in charts and path.is_dir() and not path.is_symlink() and read_tree(path) == charts[name]


def _real(out: Path) -> Path:
    """The output folder with symbolic links resolved (a link named by --out is the user's choice; its
    target is what gets exchanged, so the link itself stays)."""
    return Path(os.path.realpath(os.path.abspath(out)))


def _can_exchange(out: Path) -> bool:
    parent = out.parent
    if out == parent or os.path.ismount(out):
        return False
    try:
        return os.stat(parent).st_dev == os.stat(out).st_dev and os.access(parent, os.W_OK | os.X_OK)
    except OSError:
        return False


def _replace_whole(out: Path, charts: dict[str, Tree], changed: set[str], keep: set[str]) -> None:
    """Build the full new tree beside `out` and exchange the two folders in one step."""
    render_prefix, old_prefix = _parent_leftover_prefixes(out)
    staging = Path(tempfile.mkdtemp(prefix=render_prefix, dir=out.parent))
    try:
        os.chmod(staging, stat.S_IMODE(os.stat(out).st_mode))
        with _flock(staging):  # a run arriving after the exchange waits on the new folder
            for name in sorted(keep):
                if name in changed:
                    _write(staging / name, charts[name])
                else:
                    _carry(out / name, staging / name)
            _write_file(staging / MANIFEST, manifest_text(keep))
            if not exchange(staging, out):  # no RENAME_EXCHANGE here: two renames (see _restore_parked)
                parked = Path(tempfile.mkdtemp(prefix=old_prefix, dir=out.parent))
                os.rename(out, parked / "tree")
                try:
                    os.rename(staging, out)
                except BaseException:
                    os.rename(parked / "tree", out)
                    shutil.rmtree(parked, ignore_errors=True)
                    raise
                shutil.rmtree(parked, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # the old tree after the exchange, the new one after a failure


def _replace_each(out: Path, charts: dict[str, Tree], changed: set[str], gone: set[str], owned: set[str],
                  keep: set[str]) -> None:
    """Stage inside `out` (its own filesystem) and exchange the changed chart folders one by one."""
    staging = Path(tempfile.mkdtemp(prefix=".render-", dir=out))
    swapped: list[str] = []
    try:
        for name in sorted(changed):
            _write(staging / name, charts[name])
        _write_file_atomic(out / MANIFEST, manifest_text(owned | keep))  # in-flight folders stay owned
        trash = staging / ".old"
        trash.mkdir()
        try:
            for name in sorted(changed):
                if not os.path.lexists(out / name):
                    os.rename(staging / name, out / name)
                elif not exchange(staging / name, out / name):
                    os.rename(out / name, trash / name)
                    os.rename(staging / name, out / name)
                swapped.append(name)
            for name in sorted(gone):
                os.rename(out / name, trash / name)
                swapped.append(name)
        except BaseException:
            _roll_back(out, staging, trash, swapped, gone)
            raise
        _write_file_atomic(out / MANIFEST, manifest_text(keep))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _roll_back(out: Path, staging: Path, trash: Path, swapped: list[str], gone: set[str]) -> None:
    for name in reversed(swapped):
        try:
            if name in gone:
                os.rename(trash / name, out / name)
            elif os.path.lexists(staging / name):  # exchanged: the old folder is at the staging name
                exchange(staging / name, out / name)
            elif os.path.lexists(trash / name):
                shutil.rmtree(out / name, ignore_errors=True)
                os.rename(trash / name, out / name)
            else:  # it was new: take it out again
                os.rename(out / name, staging / name)
        except OSError:
            pass  # keep going: every folder is complete either way, and the next run redoes it


def _write(folder: Path, tree: Tree) -> None:
    folder.mkdir()
    for rel, text in tree.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_file(path, text)


def _write_file(path: Path, text: str) -> None:
    """A new file in a folder this run created (exclusive creation: never through a planted link)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _write_file_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".render-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _carry(src: Path, dst: Path) -> None:
    """Copy an unchanged owned chart folder into the new tree as hard links (a copy where linking is not
    allowed). A link or special file inside it is refused: the tool never wrote one."""
    for top, dirs, files in os.walk(src):
        rel = os.path.relpath(top, src)
        target = dst if rel == "." else dst / rel
        os.mkdir(target, stat.S_IMODE(os.lstat(top).st_mode))
        for name in [*files, *[d for d in dirs if os.path.islink(os.path.join(top, d))]]:
            path = os.path.join(top, name)
            if not stat.S_ISREG(os.lstat(path).st_mode):
                raise UsageError(f"{safe_line(path)}: a symbolic link or special file inside a chart folder "
                                 "`catalog render` wrote; it writes none: remove it (nothing was changed)")
            try:
                os.link(path, target / name, follow_symlinks=False)
            except OSError:
                shutil.copy2(path, target / name, follow_symlinks=False)


# ---- exchange, lock, leftovers -------------------------------------------------------------------------

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276}.get(platform.machine())
_libc = None


def exchange(a: Path, b: Path) -> bool:
    """Swap the two directory entries atomically (renameat2 RENAME_EXCHANGE); False where the system or
    the filesystem cannot (not Linux, an old kernel, NFS), so the caller falls back to two renames."""
    global _libc
    if platform.system() != "Linux":
        return False
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    args = (_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if hasattr(_libc, "renameat2"):
        result = _libc.renameat2(ctypes.c_int(args[0]), ctypes.c_char_p(args[1]), ctypes.c_int(args[2]),
                                 ctypes.c_char_p(args[3]), ctypes.c_uint(args[4]))
    elif _SYS_RENAMEAT2 is not None:
        result = _libc.syscall(ctypes.c_long(_SYS_RENAMEAT2), ctypes.c_int(args[0]), ctypes.c_char_p(args[1]),
                               ctypes.c_int(args[2]), ctypes.c_char_p(args[3]), ctypes.c_uint(args[4]))
    else:
        return False
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextmanager
def _flock(folder: Path) -> Iterator[int]:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


@contextmanager
def _locked(out: Path, on_wait: Callable[[str], None] | None) -> Iterator[bool]:
    """Hold flock(LOCK_EX) on the output folder (created when missing; yields whether this run created
    it). The folder may be exchanged by the run we waited for: after each wait, the lock must be on the
    folder that now has the name, else we lock again."""
    created = False
    deadline = time.monotonic() + LOCK_WAIT_S
    told = False
    while True:
        if not os.path.lexists(out) and _restore_parked(out) == "busy":
            if time.monotonic() > deadline:
                raise FileSystemError(f"{safe_line(out)}: another run has held it for {LOCK_WAIT_S} s; try again")
            time.sleep(0.05)
            continue
        if _make_folder(out):
            created = True
        try:
            fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise translate_os_error(exc, out, "open") from exc
        try:
            told = _flock_waiting(fd, out, deadline, on_wait, told)
            if _still_named(fd, out):
                yield created
                return
        finally:
            os.close(fd)


def _make_folder(out: Path) -> bool:
    """Create the output folder (and its parents); whether this call created it."""
    try:
        out.mkdir(parents=True)
    except FileExistsError:
        return False
    except OSError as exc:
        raise translate_os_error(exc, out, "create") from exc
    return True


def _flock_waiting(fd: int, out: Path, deadline: float, on_wait: Callable[[str], None] | None, told: bool) -> bool:
    """flock(LOCK_EX) on `fd`, waiting until `deadline` for the run that holds it; says once (unless `told`) that
    it waits. Returns whether it has said so."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return told
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise FileSystemError(f"{safe_line(out)}: another `catalog render` (or bump, prune) has "
                                      f"held it for {LOCK_WAIT_S} s; stop it or try again") from None
            if not told and on_wait is not None:
                on_wait(f"waiting for another `catalog render` into {safe_line(out)} to finish")
                told = True
            time.sleep(0.05)


def _still_named(fd: int, out: Path) -> bool:
    """Whether the folder open as `fd` is the one that has the name `out` now (not exchanged meanwhile)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(out))
    except FileNotFoundError:
        return False


def _restore_parked(out: Path) -> str:
    """A run without RENAME_EXCHANGE killed between its two renames left the output folder missing and the
    previous tree parked at `.<out>.old-*/tree`: put it back. A parked tree still locked belongs to a live
    run in that window: "busy" (wait for it)."""
    _render_prefix, old_prefix = _parent_leftover_prefixes(out)
    try:
        parked = sorted(p / "tree" for p in out.parent.iterdir()
                        if p.name.startswith(old_prefix) and (p / "tree" / MANIFEST).is_file())
    except OSError:
        return "none"
    for tree in parked:
        try:
            fd = os.open(tree, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return "busy"
        try:
            os.rename(tree, out)
            return "restored"
        except OSError:
            return "none"
        finally:
            os.close(fd)
    return "none"


def _clean_leftovers(out: Path) -> None:
    """Delete what a killed run left: staging and parked trees beside and inside the output folder."""
    prefixes = _parent_leftover_prefixes(out)
    for folder, test in ((out.parent, lambda n: n.startswith(prefixes)), (out, _is_leftover)):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not test(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            elif folder == out and entry.name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                _unlink_quietly(entry.path)


def _rmdir_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _unlink_quietly(path: str | Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
