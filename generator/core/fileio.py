"""Atomic single-file writes: a reader sees the old or the new file, never half of one.

The new text goes to a fresh file with a random name created exclusively (`O_CREAT | O_EXCL`, tempfile.mkstemp)
in the target's own folder, is flushed to disk, and is renamed over the target: the rename stays on one
filesystem and replaces the directory entry, so nothing is ever written through a symbolic link planted at a
predictable name. A target that is itself a symbolic link is refused (the link would be replaced by a file,
or, written through, overwrite the file it points to).
"""

from __future__ import annotations

import os
import stat
import tempfile
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


def atomic_write_text(path: Path, text: str) -> None:
    path = Path(path)
    info = writable(path)
    try:
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
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise translate_os_error(exc, path, "write") from exc
        raise


__all__ = ["atomic_write_text", "writable"]
