"""Where the upstream charts come from: a folder of charts (or one chart), `.tgz` packages, or a git URL.

A git URL is cloned (`--depth 1`) through the git adapter into a temporary folder, under the adapter's network
deadline; the commit it checked out is recorded. A folder is a mirror: where it or its parent holds a
`SOURCES.tsv` (or `SOURCES-*.tsv`: `APP/FILE<TAB>COMMIT` per line, the commit each file was read at), each app
records the commit of its OlaresManifest.yaml (else its Chart.yaml). Each chart is read with the importer's safe reader
(generator/importer/source.py: regular files only, size budgets, no links), and hashed with `chart_digest`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import semver

from generator.adapters.git import Git
from generator.core.errors import InputError, Problem, UsageError
from generator.importer.source import read_chart
from generator.rules.versions_upstream import chart_digest
from generator.yamlio.loader import parse_document

GIT_PREFIXES = ("https://", "http://", "ssh://", "git://", "file://", "git@")


@dataclass(frozen=True)
class UpstreamChart:
    name: str  # the chart's app name upstream (its folder)
    path: Path  # the folder or package, readable until the source closes
    label: str  # how messages name it: `<name>/` relative to the upstream root
    version: str | None  # the higher of OlaresManifest metadata.version and Chart.yaml version
    digest: str  # chart_digest of its files
    commit: str | None = None  # the commit its OlaresManifest.yaml (else Chart.yaml) was read at (a mirror's SOURCES)


@dataclass(frozen=True)
class Upstream:
    label: str  # as the user gave it
    commit: str | None  # the git commit, for a git source
    charts: tuple[UpstreamChart, ...]


def is_git_url(text: str) -> bool:
    return text.startswith(GIT_PREFIXES) or text.endswith(".git")


def _version(files: dict[str, bytes], label: str) -> str | None:
    """The higher of OlaresManifest metadata.version and Chart.yaml version: the maintainer's charts let them drift
    apart (Chart.yaml 1.0.18 beside metadata.version 1.0.16), and a version above upstream's must be above both."""
    found: list[str] = []
    for rel, keys in (("OlaresManifest.yaml", ("metadata", "version")), ("Chart.yaml", ("version",))):
        if rel not in files:
            continue
        data = parse_document(files[rel], f"{label}{rel}").data
        for key in keys:
            data = data.get(key) if isinstance(data, dict) else None
        if data is not None:
            found.append(str(data))
    valid = [v for v in found if semver.Version.is_valid(v)]
    return str(max(semver.Version.parse(v) for v in valid)) if valid else (found[0] if found else None)


def _chart(path: Path, label: str) -> UpstreamChart:
    files = read_chart(path, label)
    text = {rel: raw.decode("utf-8", errors="replace") for rel, raw in files.files.items()}
    return UpstreamChart(files.name, path, label, _version(files.files, label), chart_digest(text))


COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


def mirror_commits(folder: Path) -> dict[str, str]:
    """`APP/FILE` -> commit, from the SOURCES.tsv / SOURCES-*.tsv in `folder` or its parent (a mirror's record of
    the commit each file was read at); empty when there is none. A bad line is `file:line: what`."""
    out: dict[str, str] = {}
    for where in (folder, folder.parent):
        files = sorted(p for p in where.glob("SOURCES*.tsv") if p.is_file() and not p.is_symlink())
        for tsv in files:
            for n, line in enumerate(tsv.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip() or line.startswith("#"):
                    continue
                cells = line.split("\t")
                if len(cells) < 2 or not COMMIT.match(cells[1].strip()):
                    raise InputError([Problem(str(tsv), n, None, "not `APP/FILE<TAB>COMMIT` (a hex commit); fix "
                                                                "the line or remove the file")])
                out.setdefault(cells[0].strip(), cells[1].strip())
        if files:
            return out
    return out


def _commit(commits: dict[str, str], app: str) -> str | None:
    return commits.get(f"{app}/OlaresManifest.yaml") or commits.get(f"{app}/Chart.yaml")


def _charts_in(folder: Path, shown: str) -> list[UpstreamChart]:
    if (folder / "Chart.yaml").is_file():
        return [_chart(folder, f"{folder.name}/")]
    commits = mirror_commits(folder)
    found = [dataclasses.replace(c, commit=_commit(commits, sub.name))
             for sub in sorted(folder.iterdir())
             if sub.is_dir() and not sub.is_symlink() and (sub / "Chart.yaml").is_file()
             for c in [_chart(sub, f"{sub.name}/")]]
    found += [_chart(p, p.name) for p in sorted(folder.glob("*.tgz")) if p.is_file()]
    if not found:
        raise InputError([Problem(shown, None, None, "no chart here (no Chart.yaml in it or its folders, no .tgz)")])
    return found


@contextlib.contextmanager
def open_upstream(sources: list[str], git: Git) -> Iterator[Upstream]:
    """The upstream charts of `sources` (one folder or git URL, or several `.tgz`), readable inside the block."""
    if not sources:
        raise UsageError("give the upstream: a folder of charts, a git URL or .tgz packages")
    if len(sources) == 1 and is_git_url(sources[0]):
        with tempfile.TemporaryDirectory(prefix="catalog-sync-") as tmp:
            checkout = Path(tmp) / "upstream"
            git.run(tmp, "clone", "--quiet", "--depth", "1", "--", sources[0], str(checkout))
            commit = git.text(checkout, "rev-parse", "HEAD").strip()
            yield Upstream(sources[0], commit, tuple(_charts_in(checkout, sources[0])))
        return
    charts: list[UpstreamChart] = []
    for source in sources:
        path = Path(source)
        if is_git_url(source):
            raise UsageError(f"{source}: a git URL is the only upstream of a sync; give it alone")
        if path.is_dir():
            charts += _charts_in(path, source)
        elif path.is_file() and path.name.endswith(".tgz"):
            charts.append(_chart(path, path.name))
        else:
            raise UsageError(f"{source}: not a folder, a .tgz package or a git URL")
    names = [c.name for c in charts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError([Problem(sources[0], None, None, f"chart(s) {', '.join(twice)} given twice; give each once")])
    yield Upstream(" ".join(sources), None, tuple(charts))
