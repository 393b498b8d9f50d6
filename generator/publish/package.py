"""Charts as Helm packages: reproducible `.tgz` files (helm_python.package) and trees read back from them."""

from __future__ import annotations

import datetime as dt
import io
import os
import tarfile
from pathlib import Path

from generator.chart.writer import Tree


def _epoch(date: str) -> float:
    """Midnight UTC of the release date: every file of the package carries it, so same content = same bytes."""
    day = dt.date.fromisoformat(date)
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()


def stage(tree: Tree, folder: Path, date: str) -> Path:
    """Write `tree` into `folder` with fixed file times."""
    stamp = _epoch(date)
    for rel, text in sorted(tree.items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    for path in sorted(folder.rglob("*"), reverse=True) + [folder]:
        os.utime(path, (stamp, stamp))
    return folder


def package(tree: Tree, app: str, version: str, date: str, workdir: Path) -> Path:
    """`<workdir>/dist/<app>-<version>.tgz`, packaged by the Helm engine from a staged copy of `tree`."""
    import helm_python as helm

    src = stage(tree, workdir / "src" / app, date)
    dist = workdir / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    path = Path(helm.package(str(src), destination=str(dist)))
    expected = dist / f"{app}-{version}.tgz"
    if path != expected:
        raise RuntimeError(f"helm packaged {path.name}, expected {expected.name}: Chart.yaml name/version mismatch")
    return path


def tree_of_package(data: bytes | Path) -> Tree:
    """The chart files of a Helm package ({path inside the chart folder: text})."""
    raw = data.read_bytes() if isinstance(data, Path) else data
    out: Tree = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or "/" not in member.name:
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                out[member.name.split("/", 1)[1]] = handle.read().decode("utf-8", "replace")
    return out
