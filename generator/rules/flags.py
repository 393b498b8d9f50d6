"""FLAG rules: every argument an app renders must be one its pinned image accepts (catalog/flags/<table>.yaml).

A flag the image does not know, a removed flag or a value outside the engine's choices makes the
container exit at start-up (or, for llama.cpp forks, silently run without the intended feature). The
argv is walked once per app (generator/flags/check.py) and each rule reports its share.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog import display_path
from generator.core import CatalogError
from generator.core import Finding
from generator.flags import ArgvChecker, Issue, Token, check_env, tokens
from generator.flags import FlagTable, FlagTables
from generator.rules import AppContext, rule

SOURCE = "catalog/flags/<table>.yaml (provenance in each table); docs/flags.md"


def _tables(ctx: AppContext) -> FlagTables:
    """One loader per catalog, so every app shares the lazily read tables."""
    key = ("flagtables", str(ctx.catalog.root))
    store: dict[tuple[str, str], FlagTables] = ctx.catalog.__dict__.setdefault("_flag_tables", {})
    if key not in store:
        store[key] = FlagTables(ctx.catalog.root)
    return store[key]


def _table(ctx: AppContext) -> tuple[FlagTable | None, str | None]:
    """The stack's table, or why there is none (cached per app)."""
    if ctx.cache.flag_table is None:
        stack = ctx.resolved.stack
        table, problem = None, None
        if stack.flag_table is None:
            problem = f"stack {stack.id} names no flag_table"
        else:
            try:
                table = _tables(ctx).get(stack.flag_table)
            except CatalogError as exc:
                problem = str(exc)
        ctx.cache.flag_table = (table, problem)
    return ctx.cache.flag_table


def _issues(ctx: AppContext) -> list[Issue]:
    if ctx.cache.flag_issues is None:
        table, _ = _table(ctx)
        issues: list[Issue] = []
        if table is not None:
            path = display_path(_tables(ctx).path(table.id))
            issues = ArgvChecker(table, path).check(tokens(ctx.engine))
        ctx.cache.flag_issues = issues
    return ctx.cache.flag_issues


def _field(origin: str) -> str:
    """The app field an argument or env var comes from (`app.extra_args` -> extra_args, `stack x` -> stack)."""
    if origin.startswith("app."):
        return origin[4:].split(" ", 1)[0].split(".", 1)[0]
    if origin.startswith("genesis"):
        return "genesis_patches"
    return "stack"


def _line(ctx: AppContext, token: Token) -> int:
    """The catalog line the token comes from: the item of extra_args, else the app field of its origin."""
    if token.origin == "app.extra_args":
        return ctx.resolved.line("extra_args", token.offset)
    return ctx.resolved.line(_field(token.origin))


def _findings(ctx: AppContext, rule_id: str) -> Iterable[Finding]:
    for issue in _issues(ctx):
        if issue.rule == rule_id:
            yield Finding(rule=rule_id, severity=issue.severity, app=ctx.app.name, message=issue.message,
                          fix=issue.fix, file=ctx.resolved.file, line=_line(ctx, issue.token))
    table, _ = _table(ctx)
    if table is not None:
        for rule_, severity, message, fix, origin in check_env(table, ctx.engine):
            if rule_ == rule_id:
                yield ctx.finding(rule_id, severity, message, fix, _field(origin))


@rule("FLAG000", "error", "the stack has a readable flag table",
      "without the pinned image's flag list nothing stops a flag the image does not know from reaching the GPU",
      SOURCE)
def has_table(ctx: AppContext) -> Iterable[Finding]:
    table, problem = _table(ctx)
    if table is None:
        stack = ctx.resolved.stack
        fix = ("add `flag_table: <id>` to the stack and catalog/flags/<id>.yaml (scripts/flags/, docs/flags.md)"
               if stack.flag_table is None else
               f"create or fix catalog/flags/{stack.flag_table}.yaml (scripts/flags/, docs/flags.md)")
        yield ctx.finding("FLAG000", "error", f"no usable flag table for stack {stack.id}: {problem}", fix, "stack")
        return
    if table.engine != ctx.resolved.stack.engine:
        yield ctx.finding("FLAG000", "error", f"flag table {table.id} describes a {table.engine} engine, stack "
                          f"{ctx.resolved.stack.id} runs {ctx.resolved.stack.engine}",
                          "point the stack's flag_table at a table of its engine", "stack")


@rule("FLAG001", "error", "every flag is known to the pinned image",
      "an unknown flag makes vLLM and llama-server exit at start-up (argparse / 'invalid argument')", SOURCE)
def unknown_flag(ctx: AppContext) -> Iterable[Finding]:
    return _findings(ctx, "FLAG001")


@rule("FLAG002", "error", "flag and env values are among the engine's choices",
      "a value outside an engine's choice set (e.g. a KV cache type the image lacks) fails at start-up", SOURCE)
def bad_value(ctx: AppContext) -> Iterable[Finding]:
    return _findings(ctx, "FLAG002")


@rule("FLAG003", "error", "no removed or renamed flag or value",
      "llama.cpp #22397 removed --draft-max/--draft-min (the server refuses them); #22964 renamed --spec-type mtp "
      "to draft-mtp ('unknown speculative type: mtp')", "docs/domain.md; " + SOURCE)
def removed_flag(ctx: AppContext) -> Iterable[Finding]:
    return _findings(ctx, "FLAG003")


@rule("FLAG004", "error", "value-taking flags have a value, switches have none",
      "a switch given a value or a flag missing its value shifts every later argument; the parser exits", SOURCE)
def arity(ctx: AppContext) -> Iterable[Finding]:
    return _findings(ctx, "FLAG004")


@rule("FLAG005", "error", "JSON flags parse and use keys and values the image knows",
      "vLLM validates --speculative-config / --compilation-config with pydantic: bad JSON, an unknown key, a "
      "method or cudagraph_mode the image lacks stops the engine", "docs/domain.md; " + SOURCE)
def json_flag(ctx: AppContext) -> Iterable[Finding]:
    return _findings(ctx, "FLAG005")
