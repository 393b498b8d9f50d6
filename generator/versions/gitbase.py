"""chart-testing's version-increment rule against a git ref (`catalog bump --check --base REF`).

Like `ct lint --check-version-increment`: a chart that changed since the merge-base of REF and HEAD
needs a version strictly greater than the chart's version at REF; a chart that does not exist at REF
is new and passes. "Changed" compares content hashes (versioning.content_hash), so a chart whose only
difference is its own version, or YAML formatting, is not changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from generator.adapters import Git
from generator.yamlio import chartdata
from generator.core import ToolError, UsageError
from generator.versions.state import content_hash, parse_version
from generator.chart import Tree


@dataclass(frozen=True)
class GitCharts:
    """The charts folder inside its git repository, at a ref; git runs through the Git adapter."""

    repo: Path
    folder: str  # charts folder relative to the repository root ("" when it is the root)
    git: Git = field(default_factory=Git, compare=False)

    @classmethod
    def locate(cls, charts_dir: Path, git: Git) -> GitCharts:
        start = charts_dir if charts_dir.is_dir() else charts_dir.parent
        top = Path(git.text(start, "rev-parse", "--show-toplevel").strip())
        rel = charts_dir.resolve().relative_to(top.resolve()).as_posix()
        return cls(top, "" if rel == "." else rel, git)

    def commit(self, ref: str) -> str:
        try:
            return self.git.text(self.repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except ToolError:
            raise UsageError(f"--base {ref}: not a commit in {self.repo}; fetch it first (git fetch origin)") from None

    def merge_base(self, ref: str) -> str:
        return self.git.text(self.repo, "merge-base", ref, "HEAD").strip()

    def tree(self, commit: str, app: str, *, prefix: str | None = None) -> Tree:
        """Every file of charts/<app>/ at `commit` ({relative path: text}); {} when absent. With `prefix=""`,
        `commit` is the chart folder's own tree (a tree id) and `app` is not used."""
        if prefix is None:
            prefix = f"{self.folder}/{app}/" if self.folder else f"{app}/"
        listing = self.git.text(self.repo, "ls-tree", "-r", "-z", commit, *(("--", prefix) if prefix else ()))
        entries = [line.split("\t", 1) for line in listing.split("\0") if line]
        blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
        if not blobs:
            return {}
        out = self.git.run(self.repo, "cat-file", "--batch", stdin="".join(f"{oid}\n" for oid, _ in blobs).encode())
        return dict(zip((p[len(prefix):] for _, p in blobs), _batch_bodies(out), strict=True))


    def trees(self, tree_ids: Iterable[str]) -> dict[str, Tree]:
        """Every file under each of `tree_ids` (git tree object ids), read with one `git cat-file --batch` per level
        of folders and one for the files, however many trees: {tree id: {relative path: text}}."""
        wanted = list(dict.fromkeys(tree_ids))
        if not wanted:
            return {}
        size = len(wanted[0]) // 2  # bytes of an object id: 20 (SHA-1) or 32 (SHA-256)
        files: dict[str, list[tuple[str, str]]] = {t: [] for t in wanted}  # tree -> [(blob id, path)]
        level = [(t, t, "") for t in wanted]  # (top tree, this tree, its path below the top)
        while level:
            raw = self.git.run(self.repo, "cat-file", "--batch", stdin="".join(f"{t}\n" for _, t, _ in level).encode())
            below = []
            for (top, _tree, base), (kind, body) in zip(level, _batch_objects(raw), strict=True):
                if kind != b"tree":
                    continue
                for mode, name, oid in _tree_entries(body, size):
                    path = f"{base}{name}"
                    if mode == b"40000":
                        below.append((top, oid, f"{path}/"))
                    elif mode != b"160000":  # a submodule's commit is no file of the chart
                        files[top].append((oid, path))
            level = below
        blobs = [oid for entries in files.values() for oid, _ in entries]
        bodies = iter(_batch_bodies(self.git.run(self.repo, "cat-file", "--batch",
                                                 stdin="".join(f"{b}\n" for b in blobs).encode())) if blobs else [])
        return {t: {path: next(bodies) for _, path in entries} for t, entries in files.items()}


def _batch_objects(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, raw body) of each object of a `git cat-file --batch` answer (type b"missing" for none)."""
    out, pos = [], 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        if header[-1] == b"missing":
            out.append((b"missing", b""))
            pos = end + 1
            continue
        size = int(header[2])
        out.append((header[1], data[end + 1:end + 1 + size]))
        pos = end + 1 + size + 1
    return out


def _tree_entries(body: bytes, size: int) -> list[tuple[bytes, str, str]]:
    """(mode, name, object id) of each entry of a raw git tree object: `<mode> <name>\\0<id bytes>`, the id
    `size` bytes (20 for SHA-1, 32 for SHA-256 repositories)."""
    out, pos = [], 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        name = body[space + 1:nul].decode("utf-8", "replace")
        out.append((body[pos:space], name, body[nul + 1:nul + 1 + size].hex()))
        pos = nul + 1 + size
    return out


def _batch_bodies(data: bytes) -> list[str]:
    bodies, pos = [], 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        size = int(data[pos:end].split()[2])
        bodies.append(data[end + 1:end + 1 + size].decode("utf-8", "replace"))
        pos = end + 1 + size + 1
    return bodies


def chart_version(tree: Tree) -> str | None:
    chart = chartdata.load(tree.get("Chart.yaml", "")) or {}
    return str(chart.get("version")) if isinstance(chart, dict) and chart.get("version") else None


def version_problems(charts_dir: Path, ref: str, current: dict[str, Tree], git: Git) -> list[str]:
    """One message per app whose chart changed since merge-base(REF, HEAD) without a higher version."""
    gc = GitCharts.locate(charts_dir, git)
    target = gc.commit(ref)
    base = gc.merge_base(target)
    problems = []
    for app, tree in sorted(current.items()):
        at_ref = gc.tree(target, app)
        old_version = chart_version(at_ref)
        if old_version is None:
            continue  # new chart
        if content_hash(gc.tree(base, app)) == content_hash(tree):
            continue  # not changed on this branch
        new_version = chart_version(tree) or "?"
        if parse_version(new_version) <= parse_version(old_version):
            problems.append(f"{app}: chart changed since {base[:12]} but version {new_version} is not greater than "
                            f"{old_version} at {ref}; run `catalog bump {app}`")
    return problems
