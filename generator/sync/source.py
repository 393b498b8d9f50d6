"""Where the upstream charts come from: a folder of charts (or one chart), `.tgz` packages, or a git URL.

A git URL is cloned bare and partially (`--filter=blob:limit=`: every commit and tree, no blob over the per-file
cap) into a temporary folder, under the adapter's network deadline and a byte budget (the clone is killed with its
helpers past either); the files of its HEAD are then read from git's objects, each checked for size first, links
and submodules never read (generator/adapters/git.py `clone_bounded`, `blobs`). The temporary folder is removed
on every way out, a SIGTERM included (turned into SystemExit for the time of the sync, so every `finally` runs).

A folder is read where it is: a clone's `origin` URL and HEAD are recorded, else the folder relative to the store
(with a warning: nobody else can re-run that sync). Where it or its parent holds a `SOURCES.tsv` (or
`SOURCES-*.tsv`: `APP/FILE<TAB>COMMIT` per line, the commit each file was read at: a mirror), each app records the
commit of its OlaresManifest.yaml (else its Chart.yaml), and a `# origin: URL` line there names the repository the
mirror copies: the record then names that URL (less credentials), not the folder. Each chart is read with the
importer's safe reader (generator/importer/source.py: regular files only, size budgets, no links); a chart it refuses
is that app's `error`, the others merge.

What upstream ever had (for `removed`: docs/sync.md "What a sync removes") comes from the sync record and, for a git
source, from the history: every top-level folder that ever held a Chart.yaml.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import semver

from generator.adapters import Git
from generator.core import read_regular_file
from generator.core import CatalogError, InputError, Problem, UsageError
from generator.core import secret_name, split_userinfo
from generator.importer import MAX_FILE_BYTES, MAX_TOTAL_BYTES, read_chart
from generator.rules import chart_digest
from generator.yamlio import parse_document

GIT_PREFIXES = ("https://", "http://", "ssh://", "git://", "file://", "git@")
MAX_SOURCES_BYTES = 4 * 2**20  # a mirror's SOURCES.tsv: one short line per file (the maintainer's: ~40 KiB)
# A market repository: its charts are text (tens of KiB each); the whole maintainer's market with its history is
# a few MiB. The clone stops past this (objects written to the temporary folder), whatever the server sends.
CLONE_BUDGET_BYTES = 256 * 2**20
MAX_REPO_FILES = 50_000
_SECRET_QUERY = re.compile(r"(?i)(sig|signature|key|code|auth|credential|x-amz-|x-goog-)")


@dataclass(frozen=True)
class UpstreamChart:
    name: str  # the chart's app name upstream (its folder)
    path: Path  # the folder or package, readable until the source closes
    label: str  # how messages name it: `<name>/` relative to the upstream root
    version: str | None  # the higher of OlaresManifest metadata.version and Chart.yaml version
    digest: str  # chart_digest of its files ("" when it could not be read)
    commit: str | None = None  # the commit its OlaresManifest.yaml (else Chart.yaml) was read at (a mirror's SOURCES)
    error: str | None = None  # why the chart could not be read (that app's `error`; the others merge)


@dataclass(frozen=True)
class Upstream:
    label: str  # portable: a URL less its credentials, or a folder relative to the store
    commit: str | None  # the git commit, for a git source (a URL, or a folder that is a clone)
    charts: tuple[UpstreamChart, ...]
    ever: frozenset[str] | None = None  # every app folder upstream's history ever held; None: no history known
    subdir: str | None = None  # the folder inside the repository, where the charts are not at its root
    warnings: tuple[str, ...] = ()


def is_git_url(text: str) -> bool:
    return text.startswith(GIT_PREFIXES) or text.endswith(".git")


def portable_url(url: str) -> str:
    """`url` as the record names it: no `user:password@` and no query parameter that names a secret (removed, not
    masked: nothing to re-run with). `git@host:o/r` (scp form) and `ssh://git@host/o/r` keep their login name (ssh
    authenticates with a key); over https a bare name may be a token (`https://TOKEN@host`) and is removed."""
    bare, info = split_userinfo(url)
    if info and ":" not in info and url.startswith(("ssh://", "git+ssh://", "ssh+git://")):
        bare = url  # `ssh://git@host/o/r`: a login name, not a credential (ssh authenticates with a key)
    parts = urlsplit(bare)
    if not parts.query:
        return bare
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if not (secret_name(k) or _SECRET_QUERY.search(k) or k.lower() in ("token", "access_token", "password"))]
    return urlunsplit(parts._replace(query=urlencode(kept)))


_URL_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s'\"<>`]+")


def without_credentials(text: str) -> str:
    """`text` with the `user:password@` of every URL in it removed (upstream's values are stored without them:
    a credential never reaches a catalog file). Linear: one pass over the URL-like tokens."""
    if "@" not in text or "://" not in text:
        return text
    return _URL_TOKEN.sub(lambda m: split_userinfo(m.group(0))[0], text)


def where(upstream_label: str, commit: str | None) -> str:
    """`<repo>@<commit>` (12 hex digits), or the label alone without a commit: how reasons name upstream."""
    return f"{upstream_label}@{commit[:12]}" if commit else upstream_label


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


def _chart(path: Path, label: str, name: str) -> UpstreamChart:
    """The chart at `path`; one the safe reader or the YAML loader refuses is returned with its `error` (that app's
    error in the plan, the rest of upstream merges)."""
    try:
        files = read_chart(path, label)
        text = {rel: raw.decode("utf-8", errors="replace") for rel, raw in files.files.items()}
        return UpstreamChart(files.name, path, label, _version(files.files, label), chart_digest(text))
    except InputError as exc:
        return UpstreamChart(name, path, label, None, "", error="; ".join(str(p) for p in exc.problems))


COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


def _sources_text(tsv: Path) -> str:
    raw = read_regular_file(tsv, MAX_SOURCES_BYTES, "a mirror's SOURCES file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError([Problem(str(tsv), line, None, f"not UTF-8 text (byte {exc.start}); save it as UTF-8 "
                                                        "or remove the file")]) from exc


def _sources_lines(folder: Path) -> Iterator[tuple[Path, int, str]]:
    """(file, line number, line) of the SOURCES.tsv / SOURCES-*.tsv of a mirror: those in `folder`, else in its
    parent. Each file is read bounded (MAX_SOURCES_BYTES, a regular file, no link); one not UTF-8 is `file:line`."""
    for place in (folder, folder.parent):
        files = sorted(p for p in place.glob("SOURCES*.tsv") if not p.is_symlink() and p.is_file())
        for tsv in files:
            for n, line in enumerate(_sources_text(tsv).splitlines(), 1):
                yield tsv, n, line
        if files:
            return


def mirror_commits(folder: Path) -> dict[str, str]:
    """`APP/FILE` -> commit, from the SOURCES.tsv / SOURCES-*.tsv in `folder` or its parent (a mirror's record of
    the commit each file was read at); empty when there is none. A bad line or a file not UTF-8 is `file:line: what`."""
    out: dict[str, str] = {}
    for tsv, n, line in _sources_lines(folder):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) < 2 or not COMMIT.match(cells[1].strip()):
            raise InputError([Problem(str(tsv), n, None, "not `APP/FILE<TAB>COMMIT` (a hex commit); fix the line or "
                                                        "remove the file")])
        out.setdefault(cells[0].strip(), cells[1].strip())
    return out


ORIGIN = re.compile(r"^#\s*origin:\s*(\S+)\s*$")


def mirror_origin(folder: Path) -> str | None:
    """The repository a mirror copies, from a `# origin: URL` line of its SOURCES.tsv / SOURCES-*.tsv (in `folder` or
    its parent), less any credentials; None without one. Only a URL another machine can reach counts: a sync of the
    mirror then records that URL, which anyone can sync from, instead of a folder of this machine."""
    for tsv, n, line in _sources_lines(folder):
        found = ORIGIN.match(line)
        if found is None:
            continue
        if not _is_remote(found.group(1)):
            raise InputError([Problem(str(tsv), n, None, "`# origin:` names no URL another machine can reach "
                                                        "(https://, ssh:// or git@); fix or remove it")])
        return portable_url(found.group(1))
    return None


def _commit(commits: dict[str, str], app: str) -> str | None:
    return commits.get(f"{app}/OlaresManifest.yaml") or commits.get(f"{app}/Chart.yaml")


def _charts_in(folder: Path, shown: str) -> list[UpstreamChart]:
    if (folder / "Chart.yaml").is_file() and not (folder / "Chart.yaml").is_symlink():
        return [_chart(folder, f"{folder.name}/", folder.name)]
    commits = mirror_commits(folder)
    found = [dataclasses.replace(c, commit=_commit(commits, sub.name))
             for sub in sorted(folder.iterdir())
             if sub.is_dir() and not sub.is_symlink() and (sub / "Chart.yaml").is_file()
             for c in [_chart(sub, f"{sub.name}/", sub.name)]]
    for package in sorted(folder.glob("*.tgz")):
        if package.is_symlink():  # a link may point at a package outside the upstream: never read through it
            found.append(UpstreamChart(package.name, package, package.name, None, "",
                                       error=f"{package.name} is a symbolic link; a sync reads no link"))
        elif package.is_file():
            found.append(_chart(package, package.name, package.name))
    if not found:
        raise InputError([Problem(shown, None, None, "not a store: no chart here (no Chart.yaml in it or its "
                                                     "folders, no .tgz); give the folder that holds the app folders")])
    return found


def _ever(git: Git, repo: Path) -> frozenset[str]:
    """Every app folder (a top-level folder that held a Chart.yaml) in the history of HEAD; run in a folder of a
    clone, the paths are relative to that folder (`--relative`)."""
    out = git.text(repo, "log", "--format=", "--name-only", "--relative", "--diff-filter=A", "HEAD", "--")
    return frozenset(parts[0] for line in out.splitlines()
                     if len(parts := line.strip().split("/")) == 2 and parts[1] == "Chart.yaml")


def _materialize(files: dict[str, bytes | None], dest: Path) -> set[str]:
    """Write upstream's regular files under `dest` (our own files: no link, no mode bit of theirs); the paths of
    the files over the cap (not fetched, not written) are returned."""
    too_large = set()
    for rel, data in files.items():
        parts = rel.split("/")
        if not rel or any(p in ("", ".", "..", ".git") for p in parts):
            continue
        if data is None:
            too_large.add(rel)
            continue
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return too_large


def _too_large_errors(charts: list[UpstreamChart], too_large: set[str], root: Path) -> list[UpstreamChart]:
    """A chart with a file over the cap is that app's error (the file was never fetched), its Chart.yaml too."""
    out = []
    have = {c.name for c in charts}
    for rel in sorted(too_large):
        parts = rel.split("/")
        if len(parts) == 2 and parts[1] in ("Chart.yaml", "OlaresManifest.yaml") and parts[0] not in have:
            have.add(parts[0])
            charts = [*charts, UpstreamChart(parts[0], root / parts[0], f"{parts[0]}/", None, "")]
    for chart in charts:
        big = sorted(rel for rel in too_large if rel.split("/", 1)[0] == chart.name)
        if chart.error is None and big:
            chart = dataclasses.replace(chart, digest="", version=None,
                                        error=f"{', '.join(big)}: larger than {MAX_FILE_BYTES:,} bytes, the most a "
                                              "chart file may hold; not fetched")
        out.append(chart)
    return out


@contextlib.contextmanager
def _signals_end_the_sync() -> Iterator[None]:
    """SIGTERM (and SIGHUP) raise SystemExit for the time of the block, so the clone's process group is killed and
    the temporary folder removed (`finally`), as Ctrl-C's KeyboardInterrupt already does. Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    kept = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def _from_git(url: str, git: Git) -> Iterator[Upstream]:
    with _signals_end_the_sync(), tempfile.TemporaryDirectory(prefix="catalog-sync-") as tmp:
        repo, checkout = Path(tmp) / "repo.git", Path(tmp) / "upstream"
        git.clone_bounded(url, repo, budget_bytes=CLONE_BUDGET_BYTES, blob_limit=MAX_FILE_BYTES)
        commit = git.text(repo, "rev-parse", "HEAD").strip()
        files = git.blobs(repo, commit, file_limit=MAX_FILE_BYTES, max_files=MAX_REPO_FILES)
        if sum(len(d) for d in files.values() if d) > CLONE_BUDGET_BYTES:
            raise InputError([Problem(portable_url(url), None, None, "its files are larger than "
                                      f"{CLONE_BUDGET_BYTES:,} bytes in all; not a market repository")])
        checkout.mkdir()
        too_large = _materialize(files, checkout)
        label = portable_url(url)
        charts = _too_large_errors(_charts_in(checkout, label), too_large, checkout)
        yield Upstream(label, commit, tuple(charts), ever=_ever(git, repo))


def _clone_of(folder: Path, git: Git, store: Path | None = None) -> tuple[str, str, str] | None:
    """(origin URL less credentials, HEAD, the folder inside the clone) when `folder` is in a git clone of upstream:
    not the store's own repository (a mirror kept inside the store), and its charts committed there (a folder of
    untracked files is no clone of anything)."""
    if not Git.installed():
        return None
    top = git.text(folder, "rev-parse", "--show-toplevel", check=False).strip()
    if not top:
        return None
    root = Path(top).resolve()
    if store is not None and store.resolve().is_relative_to(root):
        return None
    if not git.text(folder, "ls-files", "--", "Chart.yaml", "*/Chart.yaml", check=False).strip():
        return None
    found = git.origin(folder)
    if not found or not _is_remote(found[0]):
        return None
    inside = os.path.relpath(folder.resolve(), Path(top).resolve())
    return portable_url(found[0]), found[1], "" if inside == "." else inside.replace(os.sep, "/")


def _is_remote(url: str) -> bool:
    """A URL another machine can reach (not a path or `file://` of this one)."""
    return is_git_url(url) and not url.startswith("file:") and not url.startswith("/")


def _relative(path: Path, store: Path | None) -> str:
    base = store.resolve() if store else Path.cwd()
    return os.path.relpath(path.resolve(), base).replace(os.sep, "/")


@contextlib.contextmanager
def open_upstream(sources: list[str], git: Git, store: Path | None = None) -> Iterator[Upstream]:
    """The upstream charts of `sources` (one folder or git URL, or several `.tgz`), readable inside the block.
    `store` is the catalog folder: a folder that is no clone is recorded relative to it."""
    if not sources:
        raise UsageError("give the upstream: a folder of charts, a git URL or .tgz packages")
    if len(sources) == 1 and is_git_url(sources[0]):
        with _from_git(sources[0], git) as upstream:
            if _is_remote(sources[0]):
                yield upstream
                return
            # a `file://` URL names a folder of this machine: recorded relative to the store, with a warning
            path = Path(sources[0].removeprefix("file://"))
            label = _relative(path, store)
            yield dataclasses.replace(upstream, label=label, warnings=(_not_portable(label),))
        return
    charts: list[UpstreamChart] = []
    for source in sources:
        path = Path(source)
        if is_git_url(source):
            raise UsageError(f"{portable_url(source)}: a git URL is the only upstream of a sync; give it alone")
        if path.is_symlink():
            raise UsageError(f"{source}: a symbolic link; give the folder or package itself")
        if path.is_dir():
            charts += _charts_in(path, source)
        elif path.is_file() and path.name.endswith(".tgz"):
            charts.append(_chart(path, path.name, path.name))
        else:
            raise UsageError(f"{source}: not a folder, a .tgz package or a git URL")
    names = [c.name for c in charts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError([Problem(sources[0], None, None, f"chart(s) {', '.join(twice)} given twice; give each once")])
    first = Path(sources[0])
    clone = _clone_of(first, git, store) if len(sources) == 1 and first.is_dir() else None
    if clone is not None:
        url, head, inside = clone
        ever = None
        with contextlib.suppress(CatalogError):
            ever = _ever(git, first)
        yield Upstream(url, head, tuple(charts), ever=ever, subdir=inside or None)
        return
    origin = mirror_origin(first) if len(sources) == 1 and first.is_dir() else None
    if origin is not None:  # a mirror that names the repository it copies: the record names that repository
        yield Upstream(origin, None, tuple(charts))
        return
    label = " ".join(_relative(Path(s), store) for s in sources)
    yield Upstream(label, None, tuple(charts), warnings=(_not_portable(label),))


def _not_portable(label: str) -> str:
    return (f"{label} is no git URL nor a clone with a remote `origin`: the record names it relative to the store, "
            "and nobody else can re-run this sync (sync from the repository's URL, or a clone of it)")


__all__ = ["CLONE_BUDGET_BYTES", "MAX_SOURCES_BYTES", "MAX_TOTAL_BYTES", "Upstream", "UpstreamChart", "is_git_url",
           "mirror_commits", "mirror_origin", "open_upstream", "portable_url", "where", "without_credentials"]
