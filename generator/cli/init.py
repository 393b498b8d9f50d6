"""`catalog init [DIR]`: start a store repository from the embedded catalog.

DIR gets `catalog/` (the embedded devices, models, stacks, flag tables and Genesis registry, one example app
or every app with `--all`, their recorded releases), the rendered `charts/`, `CHANGELOG.md`, a GitHub workflow
(the PR check and a test job), a pre-commit config, `.gitignore`, a README with the two commands, and a git
repository with a first commit when git is installed.

The store is its owner's (`--owner`, `--icons-url`, `--title`; asked on a terminal, flags where there is no
terminal): each app's owners and icon, the market's icon base (catalog/market.yaml `icons.base_url`), the README's
title and owner. Nothing of the embedded catalog's maintainer's identity (his owners, his worker's icon URLs, his
market's release history) is written into a new store; what the copied devices, models and stacks cite (public
repositories, container images) stays, as any citation does.

Everything is built in a hidden folder beside DIR and moved into place at the end, so a failure leaves
nothing behind. A non-empty DIR is refused unless `--force`; even then no existing file is overwritten.
"""


import contextlib
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from generator.cli.app import app
from generator.core import UsageError, translate_os_error

if TYPE_CHECKING:  # imported where used: `catalog --help` starts without git's adapter and the install reader
    from generator.cli.install_source import ToolSource
    from generator.catalog import Catalog
    from generator.versions import Releases

EXAMPLE = "llamacppqwen36a3bone"  # a plain llama.cpp app: no fork, no drafter, smoke-testable on any server
SHARED = ("devices", "models", "stacks", "flags", "genesis", "chat_templates")
# The market extra's packages (pyproject.toml [project.optional-dependencies] market), for `pipx inject`.
MARKET_PACKAGES = "uvicorn httptools uvloop starlette matplotlib"
UNREACHABLE = ("this store was started with a catalog tool that CI cannot install (see README.md): set the "
               "repository variable CATALOG_TOOL to a pip requirement of the tool")
STORE_FILES = {  # scaffold template (templates/store/) -> path in the store
    "README.md": "README.md",
    "gitignore": ".gitignore",
    "pre-commit-config.yaml": ".pre-commit-config.yaml",
    "workflows/catalog.yml": ".github/workflows/catalog.yml",
}

# Olares and GitHub's spelling of an owner (generator/schema/app.py `owners`).
OWNER = re.compile(r"^[A-Za-z0-9-]{1,39}$")
# An icon base written into market.yaml and the README: https, URL characters only, no credentials, no query.
ICONS_URL = re.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?/[A-Za-z0-9._~/%+-]*$")
TITLE_CHARS = 80
ICON_SUFFIX = ".png"  # generator/schema/market.py Icons.suffix


@dataclass(frozen=True)
class Identity:
    """Whose store it is: `owner` (each app's owners), `icons_url` (the icon base: `<url><app>.png`),
    `title` (the README's heading); `own_icons`: the icons are served from the store's own icons/ folder."""

    owner: str
    icons_url: str
    title: str
    own_icons: bool


DirArg = Annotated[Path | None, typer.Argument(metavar="DIR", help="The store folder (default: the current folder).",
                                                  show_default=False)]


@app.command()
def init(
    folder: DirArg = None,
    every: Annotated[bool, typer.Option("--all", help="Copy every embedded app, not just one example.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Add the store's files to a non-empty folder; "
                                                        "existing files are kept, never overwritten.")] = False,
    owner: Annotated[str | None, typer.Option(
        "--owner", metavar="NAME", show_default=False,
        help="The store's owner, a GitHub user or organisation: each app's owners and the README (asked on a "
             "terminal; required without one).")] = None,
    icons_url: Annotated[str | None, typer.Option(
        "--icons-url", metavar="URL", show_default=False,
        help="Where the store's icons are served (https): each app's icon is URL<app>.png, the market's "
             "icons.base_url. Default: the store's own icons/ folder on GitHub "
             "(https://raw.githubusercontent.com/OWNER/DIR/main/icons/).")] = None,
    title: Annotated[str | None, typer.Option(
        "--title", metavar="TEXT", show_default=False,
        help="The store's title, its README's heading (default: the folder name).")] = None,
) -> None:
    """Start a store of your own: catalog/, rendered charts/, CHANGELOG.md, CI workflow, pre-commit, README, git."""
    from generator.cli import discovery
    from generator.core import embedded_catalog

    discovery.STATE.writes = True
    here = folder is None or (folder.expanduser().absolute() == Path.cwd().absolute())
    target = (folder or Path.cwd()).expanduser().absolute()
    existing = _check_target(target, force)
    identity = _identity(owner, icons_url, title, target.name)
    source = embedded_catalog()
    print(f"catalog: copying from {source} (the embedded catalog)", file=sys.stderr)
    from generator.cli.install_source import installed as installed_source

    tool = installed_source()
    print(f"catalog: the store's README and CI install the tool from {_one_line(tool.where)}", file=sys.stderr)
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
        apps = _build(staging, source, every, identity, tool)
        kept: list[Path] = []
        blocked: dict[Path, str] = {}  # an existing entry (a file, a link) in the way of a folder: nothing under it
        if existing:
            for rel in _files(staging):
                why = _in_the_way(target, rel)
                if why is None:
                    continue
                if why[0] == rel:
                    kept.append(rel)
                else:
                    blocked.setdefault(why[0], why[1])
                (staging / rel).unlink()
        repo = _git_repository(target)
        commit = _git_first_commit(staging) if repo is None else None
        made = _make_parents(target.parent)
        created = _place(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        for folder_made in reversed(made):
            _remove_empty(folder_made)
        if isinstance(exc, OSError):
            raise translate_os_error(exc, doing="write") from None
        raise
    shutil.rmtree(staging, ignore_errors=True)
    _report(target, apps, created, kept, blocked, repo, commit, here)
    if tool.warning:
        print(f"warning: the store's CI cannot install the tool yet: {_one_line(tool.warning)}", file=sys.stderr)


def _identity(owner: str | None, icons_url: str | None, title: str | None, folder: str) -> Identity:
    """The store's identity from the flags, asking on a terminal for what is missing; a bad value is a UsageError
    before anything is written."""
    ask = sys.stdin.isatty()
    if owner is None:
        if not ask:
            raise UsageError("give --owner NAME: the GitHub user or organisation that owns the new store (each app's "
                             "owners and the README name it; there is no terminal to ask on)")
        owner = typer.prompt("Owner of the store (your GitHub user or organisation)").strip()
    if not OWNER.match(owner):
        raise UsageError(f"--owner {_one_line(owner)!r}: a GitHub user or organisation name (letters, digits and "
                         "`-`, at most 39), e.g. --owner my-org")
    repo = re.sub(r"[^A-Za-z0-9._-]+", "-", folder).strip("-.") or "store"
    default = f"https://raw.githubusercontent.com/{owner}/{repo}/main/icons/"
    if icons_url is None and ask:
        icons_url = typer.prompt("Where the store's icons are served (https)", default=default).strip()
    own = icons_url is None or icons_url.strip() == default
    url = (icons_url or default).strip()
    url = url if url.endswith("/") else url + "/"
    if not ICONS_URL.match(url):
        raise UsageError(f"--icons-url {_one_line(url)!r}: an https URL of a folder, without credentials or a "
                         "query (each app's icon is <URL><app>.png), e.g. --icons-url https://example.org/icons/")
    if title is None and ask:
        title = typer.prompt("The store's title", default=folder).strip()
    title = (title or folder).strip()
    if not title or not title.isprintable() or len(title) > TITLE_CHARS:
        raise UsageError(f"--title: one line of at most {TITLE_CHARS} printable characters")
    return Identity(owner, url, title, own)


def _check_target(target: Path, force: bool) -> bool:
    """Refuse a file, the installed package or (without --force) a non-empty folder; True when it has files."""
    from generator.core import inside_package

    if os.path.lexists(target) and (target.is_symlink() or not target.is_dir()):
        what = "a link" if target.is_symlink() else "a file, not a folder"
        raise UsageError(f"{target}: {what}; give the folder to create the store in")
    if target.parent == target or target == Path.home().absolute():
        where = "the file system root" if target.parent == target else "your home folder"
        raise UsageError(f"{target} is {where}: a store gets a folder of its own (its git repository would "
                         "hold everything below it); give one, e.g. ~/my-store")
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


def _build(staging: Path, source: Path, every: bool, identity: Identity, tool: "ToolSource") -> list[str]:
    """Write the whole store into `staging`; returns the app names copied."""
    from generator.catalog import load_catalog
    from generator.chart import render_apps
    from generator.chart import write_charts
    from generator.core import templates_dir
    from generator.versions import INTRO, NEW_FILE, SECTION
    from generator.versions import Releases, load_releases, releases_path

    catalog = staging / "catalog"
    catalog.mkdir()
    for kind in SHARED:
        if (source / kind).is_dir():
            shutil.copytree(source / kind, catalog / kind)
    apps = sorted(p.stem for p in (source / "apps").glob("*.yaml")) if every else [EXAMPLE]
    _write_market(source / "market.yaml", catalog / "market.yaml", identity, apps)
    (catalog / "apps").mkdir()
    for app_name in apps:
        _write_app(source / "apps" / f"{app_name}.yaml", catalog / "apps" / f"{app_name}.yaml", identity,
                   history=every)
    Releases(releases_path(catalog), {}).save()  # empty until the store's own history is known (below)
    cat = load_catalog(catalog)
    shown = [r for r in cat.select() if r.app.status != "removed"]
    write_charts(staging / "charts", render_apps(shown), prune_others=True)
    _store_history(load_releases(source), cat, releases_path(catalog))
    (staging / "CHANGELOG.md").write_text(f"{NEW_FILE}\n{SECTION}\n\n{INTRO}\n", encoding="utf-8")
    scaffold = templates_dir() / "store"
    for src, dest in STORE_FILES.items():
        text = (scaffold / src).read_text(encoding="utf-8")
        markdown = dest.endswith(".md")
        where = _markdown(tool.shown) if markdown else _one_line(tool.shown)
        text = (text.replace("@@NAME@@", _markdown(identity.title)).replace("@@OWNER@@", identity.owner)
                .replace("@@ICONS@@", identity.icons_url).replace("@@EXAMPLE@@", apps[0])
                .replace("@@ICONS_WHERE@@", _icons_text(identity))
                .replace("@@TOOL@@", tool.requirement or "")
                .replace("@@WHERE@@", where).replace("@@INSTALL@@", _install_text(tool))
                .replace("@@UNREACHABLE@@", UNREACHABLE))
        path = staging / dest
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if identity.own_icons:
        (staging / "icons").mkdir()
        (staging / "icons" / "README.md").write_text(
            f"# Icons\n\nEach app's icon, `<app>{ICON_SUFFIX}` (square, 256x256 or more), served at "
            f"{identity.icons_url}<app>{ICON_SUFFIX} once this repository is public on GitHub as "
            f"`{identity.owner}/{identity.icons_url.split('/')[4]}`. Elsewhere: change `icons.base_url` in "
            "catalog/market.yaml and each app's `icon`.\n", encoding="utf-8")
    return apps


def _write_market(source: Path, dest: Path, identity: Identity, apps: list[str]) -> None:
    """The store's market.yaml: the embedded market's settings (profile, categories, ...) with the store's own icons
    (`base_url` the owner's, `served` the store's apps); the embedded market's own icon list and citations are its
    maintainer's, not the store's."""
    from ruamel.yaml import YAML

    from generator.yamlio import dump

    settings = YAML(typ="safe", pure=True).load(source.read_text(encoding="utf-8")) if source.is_file() else {}
    settings = dict(settings) if isinstance(settings, dict) else {}
    settings.pop("sources", None)
    settings["icons"] = {"base_url": identity.icons_url, "served": list(apps),
                         "source": f"the store's own icons (catalog init --owner {identity.owner})"}
    head = (f"# The market of {_one_line(identity.title)} (generator/schema/market.py): the manifest profile its "
            "charts use, the icons it serves.\n# Each app's icon is icons.base_url + <app>.png; add an app's name to "
            "icons.served once its icon is uploaded.\n")
    dest.write_text(head + dump(settings), encoding="utf-8")


def _write_app(source: Path, dest: Path, identity: Identity, history: bool) -> None:
    """An embedded app as the store's: its owners the store's owner, its icon under the store's icon base; without
    `history` (the example app), also without the maintainer's release notes and import notes."""
    from io import StringIO

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedSeq

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    data = yaml.load(source.read_text(encoding="utf-8"))
    owners = CommentedSeq([identity.owner])
    owners.fa.set_flow_style()
    data["owners"] = owners
    data["icon"] = f"{identity.icons_url}{data['name']}{ICON_SUFFIX}"
    data.pop("submitter", None)
    if not history:
        for key in ("upgrade_description", "unmapped", "developer"):
            data.pop(key, None)
        data.ca.comment = None  # the maintainer's note above the app
    out = StringIO()
    yaml.dump(data, out)
    dest.write_text(out.getvalue(), encoding="utf-8")


def _markdown(text: str) -> str:
    """Text from outside (an install record, a title) as inert Markdown: one line, HTML escaped, Markdown's own
    characters backslash-escaped, so no link, image, tag or heading comes of it."""
    import html  # here, not at the top: html.entities' tables cost every `catalog` command ~8 M instructions

    return html.escape(re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", _one_line(text)), quote=False)


def _icons_text(identity: Identity) -> str:
    if identity.own_icons:
        return (f"Icons are served from this repository's `icons/` folder (`{identity.icons_url}<app>.png` once it is "
                "public on GitHub): add `icons/<app>.png` for each app.")
    return f"Icons are served from {identity.icons_url} (`<app>.png`)."


def _store_history(recorded: "Releases", cat: "Catalog", path: Path) -> None:
    """The store's releases.yaml: of the embedded history, only the release whose chart the new store has (the
    app's current version, with the content the store renders); an app whose current content no release records
    gets its current version recorded as the store's first release. Older versions are not in the store's
    charts/, so listing them would make the new store's market say they are not served."""
    from generator.versions import current, today
    from generator.versions import Release, Releases

    mine = Releases(path, {})
    for r in cat.select():
        if r.app.status == "removed":
            continue
        now = current(r)
        kept = recorded.get(r.app.name, r.app.version)
        if kept is not None and kept.content == now.content:
            mine.record(r.app.name, kept)
        else:
            mine.record(r.app.name, Release(r.app.version, now.content, today(), now.state, now.formats))
    mine.save()


def _one_line(text: str) -> str:
    from generator.core import safe_line

    return safe_line(text)


def _install_text(tool: "ToolSource") -> str:
    """The README's install paragraph, from where the tool that started the store came from."""
    if tool.requirement is None or tool.pipx is None:
        return ("Install the tool so that `catalog` is on your PATH. This store was started with a tool installed "
                f"from {_markdown(tool.shown)}, which other machines and CI cannot reach: install it the way its "
                "own README says (from a clone: `pipx install PATH`, or `pipx install 'PATH[market]'` for "
                "`catalog serve`), and set the repository variable `CATALOG_TOOL` to a pip requirement CI can "
                "install (the workflow fails with a message until it is set).")
    from generator.cli.install_source import DISTRIBUTION

    extra = _with_extra(tool.pipx)
    return (f"Install the tool so that `catalog` is on your PATH (this store was started with the tool from "
            f"{_markdown(tool.shown)}):\n\n"
            f"```bash\npipx install '{tool.pipx}'\n"
            f"# or: python3 -m pip install --user '{tool.requirement}'   (then put ~/.local/bin on PATH)\n```\n\n"
            "`catalog serve` and `catalog site` need the `market` extra: install with "
            f"`pipx install --force '{extra}'`, or add its packages to the pipx environment: "
            f"`pipx inject {DISTRIBUTION} {MARKET_PACKAGES}`. CI installs the same requirement; the repository "
            "variable `CATALOG_TOOL` overrides it.")


def _with_extra(spec: str) -> str:
    """`spec` with the market extra: a name (`NAME==V` -> `NAME[market]==V`) or a URL (`NAME[market] @ URL`)."""
    from generator.cli.install_source import DISTRIBUTION

    if spec.startswith(DISTRIBUTION):
        return DISTRIBUTION + "[market]" + spec[len(DISTRIBUTION):]
    return f"{DISTRIBUTION}[market] @ {spec}"


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(root).parts)


def _git_repository(target: Path) -> Path | None:
    """The git work tree `target` already belongs to (then init leaves git alone), else None."""
    from generator.adapters import Git

    if not Git.installed():
        return None
    top = Git().text(_existing_ancestor(target), "rev-parse", "--show-toplevel", check=False).strip()
    return Path(top) if top else None


def _git_first_commit(staging: Path) -> str | None:
    """`git init` on main and one commit of every file; None when git is not installed."""
    from generator.adapters import Git

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
    with contextlib.suppress(OSError):
        folder.rmdir()


def _in_the_way(target: Path, rel: Path) -> tuple[Path, str] | None:
    """What keeps init from writing `target/rel`, read without following links: (the existing entry, what it is),
    where the entry is `rel` itself (kept, never overwritten, even a dangling link) or a component above it that
    is not a plain folder (a file, or a link that would be written through); None when the path is free."""
    for depth in range(1, len(rel.parts) + 1):
        part = Path(*rel.parts[:depth])
        path = target / part
        if not os.path.lexists(path):
            return None
        if path.is_symlink():
            return part, "a link" + ("" if path.exists() else " to nothing")
        if depth < len(rel.parts) and not path.is_dir():
            return part, "a file, not a folder"
    return rel, "exists"


def _place(staging: Path, target: Path) -> list[str]:
    """Move the staged store into `target`: one rename for a new folder; into an existing one (maybe someone's
    current folder, which must stay the same folder) entry by entry, never over an existing entry and never
    through a link. Returns the top-level entries that received something."""
    if not target.exists():
        os.rename(staging, target)
        return sorted(p.name for p in target.iterdir())
    return sorted(entry.name for entry in sorted(staging.iterdir()) if _merge(entry, target / entry.name))


def _merge(source: Path, dest: Path) -> bool:
    """True when something of `source` was put in place."""
    if not os.path.lexists(dest):
        if source.is_dir() and not any(source.rglob("*")):
            return False  # nothing in it was left to write (every file under it kept or blocked)
        os.rename(source, dest)
        return True
    if source.is_dir() and dest.is_dir() and not dest.is_symlink():
        return any([_merge(entry, dest / entry.name) for entry in sorted(source.iterdir())])
    return False


WHAT = {"catalog": "catalog/", "charts": "charts/", ".github": ".github/workflows/catalog.yml", "icons": "icons/"}


def _report(target: Path, apps: list[str], created: list[str], kept: list[Path], blocked: dict[Path, str],
            repo: Path | None, commit: str | None, here: bool = False) -> None:
    shown = os.path.relpath(target) if not os.path.relpath(target).startswith("..") else str(target)
    order = ["catalog", "charts", "icons", "CHANGELOG.md", ".github", ".pre-commit-config.yaml", ".gitignore",
             "README.md"]
    created = sorted(created, key=lambda n: (order.index(n) if n in order else len(order), n))
    names = [WHAT.get(name, name) for name in created if name != ".git"]
    if "catalog/" in names:
        names[names.index("catalog/")] = f"catalog/ ({len(apps)} app{'s' if len(apps) != 1 else ''}: {', '.join(apps)})"
    print(f"created a store in {shown}: {', '.join(names) if names else 'nothing new'}")
    for rel in kept:
        print(f"kept existing {rel} (not overwritten)")
    for rel, why in sorted(blocked.items()):
        print(f"kept existing {rel} ({why}): nothing written under it; move it away and run `catalog init --force` "
              "again to get the store's files there")
    if repo is not None:
        print(f"inside the git repository {repo}: commit the new files yourself")
    elif commit and ".git" in created:
        print(f"git: first commit {commit} on main")
    elif commit:
        print("kept the existing .git: no repository created")
    else:
        print("git is not installed: no repository created")
    print("next: catalog render && catalog check" if here else f"next: cd {shown} && catalog render && catalog check")
