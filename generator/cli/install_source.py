"""Where this tool was installed from, as its own installation records it, and what a new store's CI installs.

pip writes `direct_url.json` into the installed distribution's metadata for anything not taken from an index
(PEP 610, https://packaging.python.org/en/latest/specifications/direct-url-data-structure/): a VCS URL with the
commit it resolved (`vcs_info.commit_id`), a local or remote archive (`archive_info`), or a local folder
(`dir_info`, `editable` for `pip install -e`). No file: the version came from an index. `importlib.metadata`
reads it (`Distribution.read_text`).

`catalog init` writes the store's README and GitHub workflow from this record (generator/cli/init.py):

- a VCS URL on https: `olares-llm-catalog @ git+URL@COMMIT`, exactly the commit installed;
- a local folder that is a git clone with an https `origin`: the same, from that clone's HEAD (said on stderr:
  the commit must be pushed for CI to find it);
- an index version: `olares-llm-catalog==VERSION`;
- a local wheel, a local folder without such a remote, an ssh URL, anything else: not reachable from a CI
  runner; the workflow then fails with a message until the repository variable CATALOG_TOOL holds a pip
  requirement, and `init` says so and how to set it.

The record is read from outside the tool: at most RECORD_BYTES are parsed (pip writes a few hundred bytes), a record
nested too deep for the JSON reader is refused with a message, and a URL's credentials (`https://user:token@host`,
a clone's `origin` with a token in it, a secret query value) never reach `where` or a requirement: every store file
and line `init` writes is built from the URL less its credentials (generator/core/redact.py).
"""


import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from generator.adapters import VCS
from generator.core import safe_url, split_userinfo

DISTRIBUTION = "olares-llm-catalog"
# A requirement written into YAML and a shell variable: only URL characters, never a quote, space or `$`.
SAFE = re.compile(r"^[A-Za-z0-9._~:/?#\[\]@!&()*+,;=%-]+$")
HOW_TO_SET = ("set the repository variable CATALOG_TOOL to a pip requirement CI can install, e.g. "
              "`gh variable set CATALOG_TOOL --body 'olares-llm-catalog @ git+https://github.com/OWNER/REPO@COMMIT'` "
              "(or Settings > Secrets and variables > Actions > Variables)")


@dataclass(frozen=True)
class ToolSource:
    """What the installation says. `requirement`: a pip requirement a CI runner can install, None when there is
    none; `pipx`: the spec for `pipx install`; `where`: in words, where it was installed from; `warning`: what a
    store owner must do before the store's CI can install the tool ("" when nothing)."""

    requirement: str | None
    pipx: str | None
    where: str
    warning: str = ""
    public: str = ""  # `where` as the store's committed files say it: no path of this machine ("" = `where`)

    @property
    def shown(self) -> str:
        return self.public or self.where

    @property
    def reachable(self) -> bool:
        return self.requirement is not None


# pip writes a few hundred bytes (PEP 610); anything past this is not a record pip wrote.
RECORD_BYTES = 64 * 1024


# PEP 610's VCS names as pip spells them in a requirement (`git+https://...`): only git is written here
# (https://pip.pypa.io/en/stable/topics/vcs-support/).
VCS_NAMES = frozenset({VCS})


def _git_url(url: str, commit: str | None, vcs: str = VCS) -> tuple[str, str] | None:
    """(pip requirement, pipx spec) for an https VCS URL without credentials, else None."""
    if split_userinfo(url)[1] is not None or safe_url(url) != url:
        return None
    if vcs not in VCS_NAMES or not url.startswith("https://") or not SAFE.match(url) or (
            commit and not SAFE.match(commit)):
        return None
    pin = f"@{commit}" if commit else ""
    return f"{DISTRIBUTION} @ {vcs}+{url}{pin}", f"{vcs}+{url}{pin}"


def from_record(direct: object, version: str, clone: tuple[str, str] | None = None) -> ToolSource:
    """The source from a parsed `direct_url.json` (None: no file, an index install). `clone`: (origin URL, HEAD
    commit) of a local folder install that is a git clone, when the caller could read them."""
    index = f"{DISTRIBUTION}=={version}"
    if direct is None:
        return ToolSource(index, index, f"version {version} from a package index")
    if not isinstance(direct, dict):
        direct = {}
    raw = direct.get("url")
    if not isinstance(raw, str):
        return ToolSource(None, None, "an installation record pip did not write (direct_url.json has no url)",
                          f"CI cannot install the tool from that: {HOW_TO_SET}")
    url = safe_url(raw)  # never a credential in what is printed or written (issue 40, cause 6)
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id") if isinstance(vcs.get("commit_id"), str) else None
        name = str(vcs.get("vcs", "a VCS"))
        made = _git_url(url, commit, name)
        if made:
            warning = "" if url == raw else (f"the tool was installed from {url} with credentials in the URL; the "
                                             "store's files name it without them, so a private repository needs "
                                             f"another way in: {HOW_TO_SET}")
            return ToolSource(*made, f"{name} {url} at {commit or 'its default branch'}", warning)
        return ToolSource(None, None, f"{name} {url}", f"{_unreachable(raw, url)}: {HOW_TO_SET}")
    if url.startswith("file://"):
        path = unquote(urlsplit(url).path)
        if isinstance(direct.get("dir_info"), dict) and clone is not None:
            made = _git_url(*clone)
            if made:
                return ToolSource(*made, f"the local clone {path} of {clone[0]} at {clone[1][:12]}",
                                  f"the store's CI installs {made[0]}: push that commit, or {HOW_TO_SET}",
                                  public=f"a local clone of {clone[0]} at {clone[1][:12]}")
        kind = "folder" if isinstance(direct.get("dir_info"), dict) else "file"
        return ToolSource(None, None, f"the local {kind} {path}",
                          f"a CI runner cannot reach {path}: {HOW_TO_SET}", public=f"a local {kind}")
    if SAFE.match(url) and url.startswith("https://") and url == raw:
        return ToolSource(f"{DISTRIBUTION} @ {url}", url, url)
    return ToolSource(None, None, url, f"{_unreachable(raw, url)}: {HOW_TO_SET}")


def _unreachable(raw: str, url: str) -> str:
    """Why a CI runner cannot install from `raw` (shown as `url`, its credentials removed), in words."""
    if split_userinfo(raw)[1] is not None or url != raw:
        return (f"{url} was installed with credentials in its URL, which the store's files never hold "
                "(a CI runner would need them)")
    scheme = urlsplit(raw).scheme.lower()
    if scheme == "file":
        return f"a CI runner cannot reach {url}: it is a path on this machine"
    if scheme in ("ssh", "git+ssh") or raw.startswith("git@"):
        return f"a CI runner cannot fetch {url}: ssh needs a key the runner does not have"
    if scheme == "http":
        return f"a CI runner should not install {url}: plain http can be altered on the way (use https)"
    return f"a CI runner cannot install {url}"


def installed() -> ToolSource:
    """The source of the installed distribution (generator/cli/init.py); a source checkout run without an
    installation has none."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return ToolSource(None, None, "a source checkout that is not installed",
                          f"CI cannot install the tool from it: {HOW_TO_SET}")
    direct, problem = read_record(dist.read_text("direct_url.json"))
    if problem:
        return ToolSource(None, None, f"an unreadable installation record ({problem})",
                          f"CI cannot install the tool from that: {HOW_TO_SET}")
    clone = None
    if isinstance(direct, dict) and isinstance(direct.get("dir_info"), dict) and str(direct.get("url", "")).startswith(
            "file://"):
        clone = _clone(Path(unquote(urlsplit(str(direct["url"])).path)))
    return from_record(direct, dist.version, clone)


def read_record(text: str | None) -> tuple[object, str]:
    """(the parsed `direct_url.json`, "") or (None, what is wrong with it); None text: no record (an index install).
    Bounded: at most RECORD_BYTES, and JSON nested too deep for the reader is refused, never a traceback."""
    if text is None:
        return None, ""
    if len(text) > RECORD_BYTES:
        return None, f"direct_url.json holds {len(text):,} characters, more than the {RECORD_BYTES:,} pip writes"
    try:
        return json.loads(text or "null"), ""
    except RecursionError:
        return None, "direct_url.json is nested deeper than a JSON reader follows"
    except ValueError as exc:
        return None, f"direct_url.json is not JSON: {exc}"


def _clone(folder: Path) -> tuple[str, str] | None:
    """(origin URL, HEAD commit) of a git clone, None when it is not one (or git is missing)."""
    from generator.adapters import Git

    if not folder.is_dir() or not Git.installed():
        return None
    found = Git().origin(folder)
    if found is None:
        return None
    url, head = found
    url = split_userinfo(url)[0]  # an origin with a token in it: the store gets the URL less its credentials
    if url.startswith("git@github.com:"):  # the ssh spelling of a GitHub remote: the same repository on https
        url = "https://github.com/" + url.removeprefix("git@github.com:")
    return url, head
