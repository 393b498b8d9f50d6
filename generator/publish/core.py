"""The publish loop shared by every target: decide per app, publish what is missing, report.

A target answers two questions per app: what is there already (`decide`: publish, skipped or refused,
from the content hash of what the target holds at that version) and how to put it there (`publish`).
Idempotence follows: a version already published with the same content is skipped; the same version
with other content is refused; a run that stopped half-way is completed by running it again.

Failures: a target raises the error tree (generator/core/errors.py), its adapters having translated what
git, Helm or a server raised. One app's failure is reported on its row, redacted, and the loop goes on;
a target that did not answer before its deadline (DeadlineExceeded) is not asked again in this run: the
remaining apps are reported as not tried. Anything else is a bug and reaches the CLI as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from collections.abc import Callable

from generator.adapters import DeadlineExceeded
from generator.chart import Tree
from generator.core import CatalogError
from generator.versions import Variant
from generator.publish.secrets import PublishError, Redactor
from generator.rules import chart_digest, version_refusal
from generator.schema import SyncFile

# What a target may raise for one app: the error tree, and secrets.PublishError (raised for the credentials
# found in the environment) until it joins the tree.
Failure = (CatalogError, PublishError)


@dataclass(frozen=True)
class Item:
    """One app as the catalog wants it published."""

    app: str
    version: str
    status: str  # active | deprecated | removed
    tree: Tree  # the rendered chart ({} for a removed app)
    content: str | None  # versioning.content_hash(tree)
    date: str  # release date from releases.yaml (package file times)
    note: str = ""  # this version's upgrade note
    # the same version in the catalog's other manifest profiles, as releases.yaml records them (versions/formats.py);
    # only a target that serves several formats (market:DIR) reads them
    variants: tuple[Variant, ...] = ()
    variant_notes: tuple[str, ...] = ()  # variants not published, and why


@dataclass(frozen=True)
class PullRequestPlan:
    """What the git target decided for one app: the pull request's title and branch, the lease the push expects,
    the chart tree to commit, and whether to push (`push`) or only open the pull request (`pr-only`)."""

    title: str
    branch: str
    lease: str
    tree: Tree
    mode: str  # push | pr-only


@dataclass(frozen=True)
class Decision:
    action: str  # publish | skipped | refused
    detail: str = ""
    extra: PullRequestPlan | None = None  # the git target's plan; the other targets need none


@dataclass(frozen=True)
class Result:
    app: str
    version: str
    target: str
    action: str  # published | skipped | refused | failed | would publish
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.action in ("published", "skipped", "would publish")


class Target(Protocol):
    label: str
    redact: Redactor

    def open(self) -> None: ...
    def decide(self, item: Item) -> Decision: ...
    def publish(self, item: Item, decision: Decision) -> str: ...
    def finish(self, published: list[Item]) -> None: ...
    def close(self) -> None: ...


def refuse_other_content(item: Item, where: str, theirs: str) -> Decision:
    return Decision("refused", f"{item.app} {item.version} is already published at {where} with content {theirs}, "
                    f"but the catalog renders {item.content}; run `catalog bump {item.app}`")


def upstream_refusal(item: Item, upstream: SyncFile | None) -> str | None:
    """Why the upstream market forbids publishing `item` (one content per version, never below upstream's
    newest, never an app upstream removed: docs/sync.md), or None."""
    record = upstream.apps.get(item.app) if upstream else None
    if record is None or item.status == "removed":
        return None
    if record.status == "removed":
        return f"upstream removed {item.app} (last seen at {record.version}): it is not listed again"
    return version_refusal(item.app, item.version, chart_digest(item.tree), record)


def _one(target: Target, item: Item, dry_run: bool, upstream: SyncFile | None = None) -> tuple[Result, bool]:
    """One app's result; a DeadlineExceeded goes up to `run` (the target stopped answering)."""
    why = upstream_refusal(item, upstream)
    if why:
        return Result(item.app, item.version, target.label, "refused", why), False
    try:
        decision = target.decide(item)
        if decision.action != "publish":
            return Result(item.app, item.version, target.label, decision.action, decision.detail), False
        if dry_run:
            return Result(item.app, item.version, target.label, "would publish", decision.detail), False
        detail = target.publish(item, decision)
        return Result(item.app, item.version, target.label, "published", detail), True
    except DeadlineExceeded:
        raise
    except Failure as exc:  # git, the Helm engine or a server failed for this app: keep going, report it redacted
        return Result(item.app, item.version, target.label, "failed", target.redact(str(exc))), False


def run(target: Target, items: list[Item], *, dry_run: bool = False,
        step: Callable[[Result], None] = lambda _r: None, upstream: SyncFile | None = None) -> list[Result]:
    """Publish `items` to `target` in order; one result per item (plus one if opening or finishing fails).
    `upstream` (catalog/sync.yaml) refuses what the market the catalog follows forbids (`upstream_refusal`)."""
    results: list[Result] = []
    published: list[Item] = []
    try:
        target.open()
        for index, item in enumerate(items):
            try:
                result, done = _one(target, item, dry_run, upstream)
            except DeadlineExceeded as exc:
                results.append(Result(item.app, item.version, target.label, "failed", target.redact(str(exc))))
                step(results[-1])
                results += [Result(i.app, i.version, target.label, "failed",
                                   f"not tried: {target.label} did not answer in time") for i in items[index + 1:]]
                return results
            results.append(result)
            published += [item] if done else []
            step(result)
        if not dry_run:
            target.finish(published)
    except Failure as exc:
        results.append(Result("*", "", target.label, "failed", target.redact(str(exc))))
    finally:
        target.close()
    return results
