"""`catalog init [DIR]`: start a store repository from the embedded catalog.

DIR gets `catalog/` (the embedded devices, models, stacks, flag tables and Genesis registry, one example app
or every app with `--all`, their recorded releases), the rendered `charts/`, `CHANGELOG.md`, a GitHub workflow
(the PR check and a test job), a pre-commit config, `.gitignore`, a README with the two commands, and a git
repository with a first commit when git is installed.

Everything is built in a hidden folder beside DIR and moved into place at the end, so a failure leaves
nothing behind. A non-empty DIR is refused unless `--force`; even then no existing file is overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from generator.cli.app import app
from generator.adapters.git import Git
from generator.core.errors import UsageError, translate_os_error

EXAMPLE = "llamacppqwen36a3bone"  # a plain llama.cpp app: no fork, no drafter, smoke-testable on any server
SHARED = ("devices", "models", "stacks", "flags", "genesis", "chat_templates")
DISTRIBUTION = "olares-llm-catalog"
STORE_FILES = {  # scaffold template (templates/store/) -> path in the store
    "README.md": "README.md",
    "gitignore": ".gitignore",
    "pre-commit-config.yaml": ".pre-commit-config.yaml",
    "workflows/catalog.yml": ".github/workflows/catalog.yml",
}

DirArg = Annotated[Path | None, typer.Argument(metavar="DIR", help="The store folder (default: the current folder).",
                                                  show_default=False)]


@app.command()
def init(
    folder: DirArg = None,
    every: Annotated[bool, typer.Option("--all", help="Copy every embedded app, not just one example.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Add the store's files to a non-empty folder; "
                                                        "existing files are kept, never overwritten.")] = False,
) -> None:
    """Start a store: catalog/, rendered charts/, CHANGELOG.md, CI workflow, pre-commit, README, git."""
    from generator.cli import discovery
    from generator.core.locate import embedded_catalog

    discovery.STATE.writes = True
    target = (folder or Path.cwd()).expanduser().absolute()
    existing = _check_target(target, force)
    source = embedded_catalog()
    print(f"catalog: copying from {source} (the embedded catalog)", file=sys.stderr)
    parent = _existing_ancestor(target.parent)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.init-", dir=parent))
        mask = os.umask(0)
        os.umask(mask)
        staging.chmod(0o777 & ~mask)  # mkdtemp makes it private; the store is an ordinary folder
    except OSError as exc:
        raise translate_os_error(exc, parent, "create a folder in") from None
    made: list[Path] = []
    try:
        apps = _build(staging, source, every, target.name)
        skipped = [rel for rel in _files(staging) if (target / rel).exists()] if existing else []
        for rel in skipped:
            (staging / rel).unlink()
        repo = _git_repository(target)
        commit = _git_first_commit(staging) if repo is None else None
        made = _make_parents(target.parent)
        _place(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        for created in reversed(made):
            _remove_empty(created)
        if isinstance(exc, OSError):
            raise translate_os_error(exc, doing="write") from None
        raise
    shutil.rmtree(staging, ignore_errors=True)
    _report(target, apps, skipped, repo, commit)


def _check_target(target: Path, force: bool) -> bool:
    """Refuse a file, the installed package or (without --force) a non-empty folder; True when it has files."""
    from generator.core.locate import inside_package

    if target.exists() and not target.is_dir():
        raise UsageError(f"{target}: a file, not a folder; give the folder to create the store in")
    if inside_package(target):
        raise UsageError(f"{target} is inside the installed tool; give a folder of your own (e.g. ~/my-store)")
    if not target.exists():
        return False
    try:
        entries = sorted(p.name for p in target.iterdir())
    except OSError as exc:
        raise translate_os_error(exc, target, "read") from None
    if entries and not force:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise UsageError(f"{target} is not empty ({shown}); give a new or empty folder, or --force to add the "
                         "store's files beside these (existing files are never overwritten)")
    if not os.access(target, os.W_OK):
        raise UsageError(f"{target}: not writable; give a folder you can write to")
    return bool(entries)


def _existing_ancestor(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    if not path.is_dir():
        raise UsageError(f"{path}: a file, not a folder; give the folder to create the store in")
    if not os.access(path, os.W_OK):
        raise UsageError(f"{path}: not writable; give a folder you can write to")
    return path


def _build(staging: Path, source: Path, every: bool, name: str) -> list[str]:
    """Write the whole store into `staging`; returns the app names copied."""
    from generator.catalog import load_catalog
    from generator.chart.pipeline import render_apps
    from generator.chart.writer import write_charts
    from generator.core.locate import templates_dir
    from generator.versions.changelog import INTRO, NEW_FILE, SECTION
    from generator.versions.releases import Releases, load_releases, releases_path

    catalog = staging / "catalog"
    catalog.mkdir()
    for kind in SHARED:
        if (source / kind).is_dir():
            shutil.copytree(source / kind, catalog / kind)
    if (source / "market.yaml").is_file():  # the market settings: the manifest profile, the icons it serves
        shutil.copyfile(source / "market.yaml", catalog / "market.yaml")
    apps = sorted(p.stem for p in (source / "apps").glob("*.yaml")) if every else [EXAMPLE]
    (catalog / "apps").mkdir()
    for app_name in apps:
        shutil.copyfile(source / "apps" / f"{app_name}.yaml", catalog / "apps" / f"{app_name}.yaml")
    recorded = load_releases(source)
    mine = Releases(releases_path(catalog), {n: v for n, v in recorded.apps.items() if n in apps})
    mine.save()
    cat = load_catalog(catalog)
    write_charts(staging / "charts", render_apps([r for r in cat.select() if r.app.status != "removed"]),
                 prune_others=True)
    (staging / "CHANGELOG.md").write_text(f"{NEW_FILE}\n{SECTION}\n\n{INTRO}\n", encoding="utf-8")
    tool = _tool_requirement()
    scaffold = templates_dir() / "store"
    for src, dest in STORE_FILES.items():
        text = (scaffold / src).read_text(encoding="utf-8")
        text = text.replace("@@NAME@@", name).replace("@@TOOL@@", tool)
        path = staging / dest
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return apps


def _tool_requirement() -> str:
    """The pip requirement this tool was installed from, as far as the installation says (PEP 610)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return DISTRIBUTION
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    vcs = direct.get("vcs_info")
    if vcs and str(direct.get("url", "")).startswith(("https://", "ssh://", "git@")):
        return f"{DISTRIBUTION} @ {vcs.get('vcs', 'git')}+{direct['url']}@{vcs.get('commit_id', '')}".rstrip("@")
    return f"{DISTRIBUTION}=={dist.version}"


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts)


def _git_repository(target: Path) -> Path | None:
    """The git work tree `target` already belongs to (then init leaves git alone), else None."""
    if not Git.installed():
        return None
    top = Git().text(_existing_ancestor(target), "rev-parse", "--show-toplevel", check=False).strip()
    return Path(top) if top else None


def _git_first_commit(staging: Path) -> str | None:
    """`git init` on main and one commit of every file; None when git is not installed."""
    if not Git.installed():
        return None
    git = Git()
    identity: list[str] = []
    if not git.text(staging, "var", "GIT_COMMITTER_IDENT", check=False).strip():  # no user.name/email configured
        identity = ["-c", "user.name=catalog init", "-c", "user.email=catalog-init@users.noreply.github.com"]
    for args in (["init", "--quiet"], ["symbolic-ref", "HEAD", "refs/heads/main"], ["add", "--all"],
                 [*identity, "commit", "--quiet", "--no-verify", "-m", "Start the store with `catalog init`"]):
        git.run(staging, *args)  # a failure is a ToolError carrying git's own message
    return git.text(staging, "rev-parse", "--short", "HEAD").strip()


def _make_parents(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; returns what was created, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    missing.reverse()
    for path in missing:
        path.mkdir()
    return missing


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _place(staging: Path, target: Path) -> None:
    """Move the staged store into `target`: one rename for a new folder; into an existing one (maybe someone's
    current folder, which must stay the same folder) entry by entry, never over an existing file."""
    if not target.exists():
        os.rename(staging, target)
        return
    for entry in sorted(staging.iterdir()):
        _merge(entry, target / entry.name)


def _merge(source: Path, dest: Path) -> None:
    if not dest.exists():
        os.rename(source, dest)
    elif source.is_dir() and dest.is_dir():
        for entry in sorted(source.iterdir()):
            _merge(entry, dest / entry.name)


def _report(target: Path, apps: list[str], skipped: list[Path], repo: Path | None, commit: str | None) -> None:
    shown = os.path.relpath(target) if not os.path.relpath(target).startswith("..") else str(target)
    print(f"created a store in {shown}: catalog/ ({len(apps)} app(s): {', '.join(apps)}), charts/, CHANGELOG.md, "
          ".github/workflows/catalog.yml, .pre-commit-config.yaml, .gitignore, README.md")
    for rel in skipped:
        print(f"kept existing {rel} (not overwritten)")
    if repo is not None:
        print(f"inside the git repository {repo}: commit the new files yourself")
    elif commit:
        print(f"git: first commit {commit} on main")
    else:
        print("git is not installed: no repository created")
    print(f"next: cd {shown} && catalog render && catalog check")
