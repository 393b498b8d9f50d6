"""`git:PATH_OR_URL[#BRANCH]`: a market repository in the beclab/apps layout (docs/domain.md#hami B, §5).

One folder per app (the rendered chart with its `owners` file). Each app goes on its own branch
`catalog/<app>`, forked from BRANCH (default main), as one commit titled `[TYPE][app][x.y.z]` — the
title GitBot's regex `^\\[(NEW|UPDATE|SUSPEND|REMOVE)\\]\\[([a-z0-9]{1,30})\\]\\[(\\d+\\.\\d+\\.\\d+)\\].*$`
expects — that touches only that folder; the branch is pushed with git. With a GitHub token and a
GitHub repository (the remote, or `--pr-repo`), the pull request is opened (or its title updated)
through the REST API.

Types: NEW (folder absent on BRANCH), UPDATE, SUSPEND (a deprecated app: chart + empty `.suspend`,
with a higher version: docs/domain.md), REMOVE (a removed app: only an empty `.remove`, titled with the
market's current version). Versions never go down and a removed name is never reused.

git runs through the Git adapter (generator/adapters/git.py: a total deadline on fetch and push, git's
message in a redacted ToolError); the pull request through the GitHub adapter.
"""

from __future__ import annotations

import base64
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from generator.adapters import Git
from generator.adapters import GitHubApi
from generator.core import ToolError, UsageError, translate_os_error
from generator.versions import GitCharts, chart_version
from generator.versions import content_hash, parse_version
from generator.chart import Tree
from generator.publish.core import Decision, Item, PullRequestPlan
from generator.publish.github import PullRequests, github_repo
from generator.publish.secrets import Redactor, safe_url

SUSPEND, REMOVE = ".suspend", ".remove"
BRANCH_PREFIX = "catalog/"


def split_target(spec: str) -> tuple[str, str]:
    """`PATH_OR_URL[#BRANCH]` -> (url, branch); a local path becomes absolute."""
    url, _, branch = spec.partition("#")
    if not url:
        raise UsageError("git target needs a path or URL: git:PATH_OR_URL[#BRANCH]")
    if "://" not in url and not url.startswith("git@") and Path(url).exists():
        url = str(Path(url).resolve())
    return url, branch or "main"


def desired_tree(item: Item) -> Tree:
    if item.status == "removed":
        return {REMOVE: ""}
    if item.status == "deprecated":
        return {**item.tree, SUSPEND: ""}
    return dict(item.tree)


class GitMarketTarget:
    def __init__(self, spec: str, *, git: Git, github: GitHubApi | None = None, pr_repo: str | None = None,
                 draft: bool = True):
        self.url, self.branch = split_target(spec)
        self.label = f"git:{safe_url(self.url)}#{self.branch}"
        self.redact = Redactor()
        self.token = github.token if github is not None else None
        self.redact.add(self.token)
        self.redact.add(urlsplit(self.url).password if "://" in self.url else None)
        self.draft = draft
        self.pr_repo = pr_repo or github_repo(self.url)
        self.github = PullRequests(github.with_redactor(self.redact), self.pr_repo) \
            if github is not None and self.token and self.pr_repo else None
        self.head_owner = (github_repo(self.url) or self.pr_repo or "/").split("/")[0]
        self.git = git.configured(env=self._auth_env(github), redact=self.redact)
        self.work: Path | None = None
        self.unpushed_base = False  # an empty repository: BRANCH's first commit is pushed before the first app

    # -- git plumbing ------------------------------------------------------------------------------
    def _auth_env(self, github: GitHubApi | None) -> dict[str, str]:
        """The token as an HTTP header for an https remote on GitHub (never in the URL or argv)."""
        host = urlsplit(self.url).hostname if self.url.startswith("https://") else None
        if github is None or not self.token or not host or host not in ("github.com", urlsplit(github.api).hostname):
            return {}
        header = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
        return {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.https://{host}/.extraheader",
                "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {header}"}

    def _git(self, *args: str, check: bool = True) -> str:
        assert self.work is not None
        return self.git.text(self.work, *args, check=check)

    def _tree(self, ref: str, app: str) -> Tree:
        assert self.work is not None
        return GitCharts(self.work, "", self.git).tree(ref, app)

    def _exists(self, ref: str) -> bool:
        return bool(self._git("rev-parse", "--verify", "--quiet", ref, check=False).strip())

    @property
    def _base(self) -> str:
        return f"refs/remotes/origin/{self.branch}"

    # -- target protocol ---------------------------------------------------------------------------
    def open(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="catalog-market-"))
        self._git("init", "--quiet")
        self._git("remote", "add", "origin", self.url)
        fetch = ("fetch", "--quiet", "--no-tags", "--filter=blob:none", "origin")  # blobs on demand: big markets
        try:
            self._git(*fetch, f"+refs/heads/{self.branch}:{self._base}")
        except ToolError as exc:
            if not self._empty_remote():
                raise ToolError(f"{self.label}: cannot fetch branch {self.branch} ({exc}); check the URL, the "
                                   "branch and access") from None
            self._first_commit()
        self._git(*fetch, f"+refs/heads/{BRANCH_PREFIX}*:refs/remotes/origin/{BRANCH_PREFIX}*", check=False)
        if not self._git("var", "GIT_COMMITTER_IDENT", check=False):
            self._git("config", "user.name", "catalog publish")
            self._git("config", "user.email", "catalog-publish@users.noreply.github.com")

    def _first_commit(self) -> None:
        """An empty market repository: an empty first commit becomes BRANCH, pushed with the first app."""
        identity = [] if self._git("var", "GIT_COMMITTER_IDENT", check=False) else [
            "-c", "user.name=catalog publish", "-c", "user.email=catalog-publish@users.noreply.github.com"]
        self._git(*identity, "commit", "--quiet", "--allow-empty", "-m", f"Start the market on {self.branch}")
        self._git("update-ref", self._base, "HEAD")
        self.unpushed_base = True

    def _empty_remote(self) -> bool:
        """True when the remote answers and has no branch or tag at all (a new, empty repository)."""
        try:
            return not self._git("ls-remote", "origin").strip()
        except ToolError:
            return False

    def _market_decision(self, item: Item, base: Tree, want: Tree) -> Decision | tuple[str, str]:
        """Skip or refuse from what BRANCH holds, else (PR type, title version)."""
        if not base:
            if item.status != "active":
                return Decision("skipped", f"{item.status} and not on {self.branch}: nothing to do")
            return "NEW", item.version
        if set(base) == {REMOVE}:
            if item.status == "removed":
                return Decision("skipped", f"already removed on {self.branch}")
            return Decision("refused", f"{item.app} was removed from the market; a removed name is never reused "
                            "(docs/domain.md#hami): choose a new app name")
        market = chart_version(base) or "0.0.0"
        if item.status == "removed":
            return "REMOVE", market
        if parse_version(item.version) < parse_version(market):
            return Decision("refused", f"{self.branch} has {item.app} {market}, above the catalog's {item.version}; "
                            "versions never go down: raise `version:` and run `catalog bump`")
        if item.version == market:
            if content_hash(base) == content_hash(want):
                return Decision("skipped", f"{item.version} is already on {self.branch}")
            if content_hash({**base, SUSPEND: ""}) == content_hash(want):
                return Decision("refused", f"a SUSPEND needs a version above {market} (docs/domain.md): run "
                                f"`catalog bump {item.app} --note 'Suspended: <why>'`")
            return Decision("refused", f"{item.app} {item.version} is already on {self.branch} with content "
                            f"{content_hash(base)}, but the catalog wants {content_hash(want)}; "
                            f"run `catalog bump {item.app}`")
        return ("SUSPEND" if item.status == "deprecated" and SUSPEND not in base else "UPDATE"), item.version

    def decide(self, item: Item) -> Decision:
        want = desired_tree(item)
        verdict = self._market_decision(item, self._tree(self._base, item.app), want)
        if isinstance(verdict, Decision):
            return verdict
        kind, version = verdict
        title = f"[{kind}][{item.app}][{version}]"
        branch = f"{BRANCH_PREFIX}{item.app}"
        ref = f"refs/remotes/origin/{branch}"
        lease = self._git("rev-parse", "--verify", "--quiet", ref, check=False).strip()
        mode = "push"
        if lease and self._git("log", "-1", "--format=%s", ref).strip() == title \
                and content_hash(self._tree(ref, item.app)) == content_hash(want):
            if self.github is None:
                return Decision("skipped", f"branch {branch} already holds {title}")
            if self.github.is_open(self._head(branch), title):
                return Decision("skipped", f"{title}: pull request already open")
            mode = "pr-only"
        return Decision("publish", title, PullRequestPlan(title, branch, lease, want, mode))

    def _head(self, branch: str) -> str:
        return f"{self.head_owner}:{branch}"

    def _commit(self, item: Item, plan: PullRequestPlan, body: str) -> None:
        app, base, work = item.app, self._base, self.work
        assert work is not None
        self._git("checkout", "--quiet", "--force", "-B", plan.branch, base)
        shutil.rmtree(work / app, ignore_errors=True)
        for rel, text in sorted(plan.tree.items()):
            path = work / app / rel
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8", newline="\n")
            except OSError as exc:
                raise translate_os_error(exc, path, "write") from None
        self._git("add", "--all", "--", app)
        changed = self._git("diff", "--cached", "--name-only", base).split()
        outside = [p for p in changed if not p.startswith(f"{app}/")]
        if outside or not changed:
            raise ToolError(f"{app}: the commit would touch {outside or 'nothing'}; a market PR touches only {app}/")
        self._git("commit", "--quiet", "-m", plan.title, "-m", body)
        if self.unpushed_base:
            self._git("push", "--quiet", "origin", f"{base}:refs/heads/{self.branch}")
            self.unpushed_base = False
        self._git("push", "--quiet", f"--force-with-lease=refs/heads/{plan.branch}:{plan.lease}",
                  "origin", f"HEAD:refs/heads/{plan.branch}")

    def publish(self, item: Item, decision: Decision) -> str:
        plan = decision.extra
        assert plan is not None, "decide() plans every `publish` decision"
        body = (item.note or f"{plan.title} from the catalog") + (
            f"\n\nPublished by `catalog publish`; chart content {item.content}." if item.content else "")
        if plan.mode == "push":
            self._commit(item, plan, body)
        done = f"{plan.branch}: {plan.title}"
        if self.github is None:
            return f"pushed {done}; open its pull request (no GitHub token and repository to do it)"
        pr = self.github.ensure(head=self._head(plan.branch), base=self.branch, title=plan.title, body=body,
                                draft=self.draft)
        return f"{'pushed ' if plan.mode == 'push' else ''}{done}; {pr}"

    def finish(self, published: list[Item]) -> None:
        return None

    def close(self) -> None:
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
