"""Atomic single-file writes: a reader sees the old or the new file, never half of one.

The new text goes to a fresh file with a random name created exclusively (`O_CREAT | O_EXCL`, tempfile.mkstemp)
in the target's own folder, is flushed to disk, and is renamed over the target: the rename stays on one
filesystem and replaces the directory entry, so nothing is ever written through a symbolic link planted at a
predictable name. A target that is itself a symbolic link is refused (the link would be replaced by a file,
or, written through, overwrite the file it points to).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from generator.core.errors import FileSystemError, translate_os_error
from generator.core.text import safe_line


def writable(path: Path) -> os.stat_result | None:
    """The target's lstat (None when missing); raises FileSystemError when it is a symbolic link or not a
    regular file. Commands that write several files call it for each first, so a refusal writes nothing."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise translate_os_error(exc, path, "write") from exc
    if stat.S_ISLNK(info.st_mode):
        raise FileSystemError(f"{safe_line(path)}: a symbolic link; catalog writes only regular files and never "
                              "through a link (replace the link with the file it points to)")
    if not stat.S_ISREG(info.st_mode):
        raise FileSystemError(f"{safe_line(path)}: not a regular file; cannot replace it")
    return info


class _Journal:
    """What one command's atomic writes replaced or created, to put back should the command fail."""

    def __init__(self) -> None:
        # target -> a hard link to its old inode, or its old bytes, or None: it was new
        self.files: dict[Path, Path | bytes | None] = {}
        self.folders: list[Path] = []  # folders created for a new file, outermost first

    def before_write(self, path: Path, info: os.stat_result | None) -> None:
        """Keep the target's state before its first write in the command (later writes change nothing here)."""
        missing = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
        self.folders += [p for p in reversed(missing) if p not in self.folders]
        if path in self.files:
            return
        if info is None:
            self.files[path] = None
            return
        import secrets  # on the first kept file, not at every start (hmac and OpenSSL's hashes come with it)

        keep = path.with_name(f".{path.name}.{secrets.token_hex(6)}.undo")
        try:
            os.link(path, keep, follow_symlinks=False)  # the old inode, kept without copying a byte (a full disk too)
            self.files[path] = keep
        except OSError:
            self.files[path] = path.read_bytes()

    def rollback(self) -> list[str]:
        """Every target back as it was; the paths that could not be put back."""
        failed = []
        for path, old in reversed(list(self.files.items())):
            try:
                if isinstance(old, Path):
                    _put_back(old, path)
                elif isinstance(old, bytes):
                    _replace_bytes(path, old)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
            except OSError:
                failed.append(str(path))
        for folder in reversed(self.folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # only when empty again
        return failed

    def commit(self) -> None:
        for old in self.files.values():
            if isinstance(old, Path):
                with contextlib.suppress(OSError):
                    os.unlink(old)


_JOURNALS: list[_Journal] = []


def _put_back(keep: Path, path: Path) -> None:
    """The kept inode back at `path`. A target never replaced is still that inode, and rename(2) does nothing when
    both names are links of one file: the kept name is then only removed."""
    try:
        same = os.path.samefile(keep, path)
    except OSError:
        same = False
    if same:
        os.unlink(keep)
    else:
        os.replace(keep, path)


@contextlib.contextmanager
def journal(keep: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Writes as one step: every file `atomic_write_text` replaces or creates inside the block is put back as it was
    (and a folder it created removed) when the block ends with an exception other than `keep` (issue 40 cause 8:
    `bump` with releases.yaml unwritable failed after the app, the charts and CHANGELOG were written). The CLI
    runs every command inside one (generator/cli/__init__.py): a failed command leaves the catalog byte-identical.
    The old file is kept as a hard link beside it (`.NAME.RANDOM.undo`, deleted at the end), so putting it back
    is a rename that a full disk does not stop."""
    record = _Journal()
    _JOURNALS.append(record)
    try:
        yield
    except keep:
        record.commit()
        raise
    except BaseException as exc:
        failed = record.rollback()
        if failed:
            exc.add_note(f"could not put back: {', '.join(failed)}")
        raise
    else:
        record.commit()
    finally:
        _JOURNALS.remove(record)


def _replace_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    path = Path(path)
    info = writable(path)
    try:
        if _JOURNALS:
            _JOURNALS[-1].before_write(path, info)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise translate_os_error(exc, path, "write") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode) if info is not None else 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise translate_os_error(exc, path, "write") from exc
        raise


__all__ = ["atomic_write_text", "journal", "writable"]
