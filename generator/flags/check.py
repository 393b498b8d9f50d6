"""Walk a rendered argv against a flag table and report every problem (used by generator/rules/flags.py).

Each token keeps the origin of the argument it came from (app.extra_args, stack <id>, app.speculative ...)
so a message can say where to fix it. The walk follows the engine's own parser: argparse for vLLM
(`--flag=value`, `--flag_name`, dotted JSON `--compilation-config.mode 3`), llama.cpp's parser (no `=`,
underscores read as dashes), one positional model for `vllm serve` and `dflash_server`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from generator.core import Severity
from generator.engines import EngineSpec
from generator.engines import parser_of
from generator.flags.tables import Flag, FlagTable, JsonKey

INT = re.compile(r"^[+-]?\d")


@dataclass(frozen=True)
class Token:
    text: str
    origin: str  # Arg.origin
    offset: int  # index of the token inside its Arg (for app.extra_args line lookup)


@dataclass(frozen=True)
class Issue:
    rule: str  # FLAG001..FLAG005
    severity: Severity
    message: str
    fix: str
    token: Token


def tokens(engine: EngineSpec) -> list[Token]:
    return [Token(text, arg.origin, i) for arg in engine.args for i, text in enumerate(arg.tokens)]


def where(token: Token) -> str:
    return f"from {token.origin}"


def closest(word: str, options: list[str]) -> str | None:
    found = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return found[0] if found else None


def listing(values: tuple[str, ...] | list[str], limit: int = 14) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f", ... ({len(values) - limit} more)" if len(values) > limit else "")


class ArgvChecker:
    """One pass over the argv; `issues` holds every finding in argv order."""

    def __init__(self, table: FlagTable, table_file: str):
        self.table = table
        self.parser = parser_of(table.engine, table.fork)  # what the table cannot say about the engine's parser
        self.table_file = table_file
        self.issues: list[Issue] = []

    def check(self, toks: list[Token]) -> list[Issue]:
        positionals = 0
        i = 0
        while i < len(toks):
            tok = toks[i]
            if self._is_flag_like(tok.text):
                i = self._flag(toks, i)
                continue
            positionals += 1
            if positionals > self.table.syntax.positionals:
                self._stray(toks, i)
            i += 1
        return self.issues

    # -- flags -------------------------------------------------------------------------------------

    def _is_flag_like(self, text: str) -> bool:
        if text.startswith("--"):
            return len(text) > 2
        return text.startswith("-") and len(text) > 1 and not INT.match(text)

    def _split(self, text: str) -> tuple[str, str | None, str | None]:
        """(flag spelling, inline value, dotted JSON key path)."""
        syntax = self.table.syntax
        for short in syntax.attached_values:
            if text.startswith(short) and len(text) > len(short) and not text.startswith("--"):
                return short, text[len(short):].removeprefix("="), None
        value = None
        if syntax.equals_values and "=" in text:
            text, value = text.split("=", 1)
        keypath = None
        if syntax.dotted_json and "." in text:
            text, keypath = text.split(".", 1)
        if syntax.underscores and text.startswith("--"):
            text = text.replace("_", "-")
        return text, value, keypath

    def _flag(self, toks: list[Token], i: int) -> int:
        tok = toks[i]
        spelling, inline, keypath = self._split(tok.text)
        flag = self.table.lookup(spelling)
        if flag is None:
            self._unknown(tok, spelling)
            return i + 2 if i + 1 < len(toks) and not self._is_flag_like(toks[i + 1].text) else i + 1
        if flag.removed is not None:
            self._removed(tok, flag, toks[i + 1].text if flag.takes_value and i + 1 < len(toks) else None)
        values, nxt = self._values(toks, i, flag, inline, keypath is not None)
        if values is None:
            return nxt
        if keypath is not None:
            self._dotted(tok, flag, keypath, values)
        else:
            for value in values:
                self._value(tok, flag, value)
        return nxt

    def _values(self, toks: list[Token], i: int, flag: Flag, inline: str | None,
                dotted: bool) -> tuple[list[str] | None, int]:
        tok = toks[i]
        if flag.nargs == "0" and not dotted:
            if inline is not None:
                self._add("FLAG004", "error", f"`{flag.name}` is a switch and takes no value, but got `={inline}` "
                          f"({where(tok)})", f"write `{tok.text.split('=', 1)[0]}` without `={inline}`", tok)
            return [], i + 1
        if inline is not None:
            return [inline], i + 1
        want = {"0": 1, "1": 1, "2": 2, "?": 0, "+": 1, "*": 0}[flag.nargs] if not dotted else 1
        taken: list[str] = []
        j = i + 1
        limit = {"1": 1, "2": 2, "?": 1}.get(flag.nargs, 10_000) if not dotted else 1
        while j < len(toks) and len(taken) < limit and (dotted or not self._is_flag_like(toks[j].text)):
            taken.append(toks[j].text)
            j += 1
        if len(taken) < want:
            got = "nothing" if j >= len(toks) else f"the flag `{toks[j].text}`"
            need = "a value" if want == 1 else f"{want} values"
            example = f" {flag.choices[0]}" if flag.choices else " <value>"
            self._add("FLAG004", "error", f"`{flag.name}` needs {need} but is followed by {got} ({where(tok)})",
                      f"write `{flag.name}{example}`" + (f" (one of: {listing(flag.choices)})" if flag.choices else ""),
                      tok)
            return None, j
        return taken, j

    # -- values ------------------------------------------------------------------------------------

    def _value(self, tok: Token, flag: Flag, value: str) -> None:
        if flag.type == "json":
            self._json(tok, flag, value)
            return
        if flag.choices or flag.renamed_choices:
            parts = value.split(flag.list_separator) if flag.list_separator else [value]
            for part in parts:
                self._choice(tok, flag, part.strip())
            return
        if flag.type == "int" and self.parser.strict_ints and not INT.match(value):
            self._add("FLAG002", "error", f"`{flag.name} {value}`: {flag.name} takes an integer ({where(tok)})",
                      f"give {flag.name} a number", tok)

    def _choice(self, tok: Token, flag: Flag, value: str) -> None:
        if value in flag.renamed_choices:
            gone = flag.renamed_choices[value]
            self._add("FLAG003", "error",
                      f"`{flag.name} {value}` ({where(tok)}): the value `{value}` was renamed in {gone.since}; "
                      f"{self.table.id} rejects it", f"write `{flag.name} {gone.replacement}`", tok)
            return
        if not flag.choices or _member(value, flag.choices, flag.case_insensitive):
            return
        near = closest(value, list(flag.choices))
        hint = f"; did you mean `{near}`?" if near else ""
        if flag.choices_strict:
            self._add("FLAG002", "error", f"`{flag.name} {value}` ({where(tok)}): `{value}` is not a value "
                      f"{self.table.id} accepts{hint}", f"use one of: {listing(flag.choices)}", tok)
        else:
            self._add("FLAG002", "warning", f"`{flag.name} {value}` ({where(tok)}): `{value}` is not a built-in "
                      f"value of {self.table.id}; it works only if a plugin or the checkpoint supplies it{hint}",
                      f"prefer one of: {listing(flag.choices)}", tok)

    def _json(self, tok: Token, flag: Flag, text: str) -> None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if text.lstrip().startswith(("{", "[")) or flag.json_keys is not None:
                self._add("FLAG005", "error", f"`{flag.name}` ({where(tok)}) is not valid JSON: {exc.msg} at "
                          f"character {exc.pos} of {text!r}", f"write {flag.name} as a JSON object, e.g. "
                          f"'{{\"key\": \"value\"}}'", tok)
            return
        if isinstance(data, dict) and flag.json_keys is not None:
            for key, value in data.items():
                self._json_key(tok, flag, str(key), value)

    def _dotted(self, tok: Token, flag: Flag, keypath: str, values: list[str]) -> None:
        if flag.type != "json":
            self._unknown(tok, tok.text.split("=", 1)[0])
            return
        key = keypath.split(".", 1)[0].rstrip("+")
        raw = values[0] if values else ""
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if flag.json_keys is not None:
            self._json_key(tok, flag, key, value if "." not in keypath else None)

    def _json_key(self, tok: Token, flag: Flag, key: str, value: object) -> None:
        spec = flag.json_key(key)
        if spec is None:
            names = [k.name for k in flag.json_keys or ()]
            near = closest(key, names)
            self._add("FLAG005", "error", f"`{flag.name}` ({where(tok)}) has the key `{key}`, which "
                      f"{self.table.id} does not know" + (f"; did you mean `{near}`?" if near else ""),
                      f"remove `{key}`" + (f" or rename it to `{near}`" if near else "")
                      + f" (known keys: {listing(names, 20)})", tok)
            return
        if value is None or isinstance(value, (dict, list, bool)):
            return
        self._json_value(tok, flag, spec, str(value))

    def _json_value(self, tok: Token, flag: Flag, spec: JsonKey, value: str) -> None:
        if value in spec.renamed:
            self._add("FLAG005", "warning", f"`{flag.name}` ({where(tok)}): {spec.name} `{value}` is deprecated in "
                      f"{self.table.id} and rewritten to `{spec.renamed[value]}`",
                      f"set {spec.name} to `{spec.renamed[value]}`", tok)
            return
        if spec.choices and not _member(value, spec.choices, spec.case_insensitive):
            near = closest(value, list(spec.choices))
            self._add("FLAG005", "error", f"`{flag.name}` ({where(tok)}): {spec.name} `{value}` is not allowed by "
                      f"{self.table.id}" + (f"; did you mean `{near}`?" if near else ""),
                      f"set {spec.name} to one of: {listing(spec.choices)}", tok)

    # -- unknown, removed, stray -------------------------------------------------------------------

    def _unknown(self, tok: Token, spelling: str) -> None:
        candidates = self.table.all_spellings()
        near = closest(spelling, candidates)
        if not self.table.syntax.equals_values and "=" in tok.text:
            name, value = tok.text.split("=", 1)
            if self.table.lookup(name.replace("_", "-") if self.table.syntax.underscores else name):
                self._add("FLAG001", "error", f"`{tok.text}` ({where(tok)}): {self.table.id} does not read "
                          f"`--flag=value`; it sees an unknown flag", f"write `{name} {value}` (two arguments)", tok)
                return
        prefixed = [c for c in candidates if c.startswith(spelling) and c.startswith("--")]
        if self.parser.abbreviations and len(prefixed) == 1:
            self._add("FLAG001", "error", f"`{spelling}` ({where(tok)}) is an abbreviation of `{prefixed[0]}`",
                      f"write the full flag `{prefixed[0]}`", tok)
            return
        self._add("FLAG001", "error", f"`{spelling}` ({where(tok)}) is not a flag of {self.table.id} "
                  f"({self.table.image})" + (f"; did you mean `{near}`?" if near else ""),
                  f"replace `{spelling}` with `{near}`" if near else f"remove `{spelling}`; "
                  f"catalog/flags/{self.table.id}.yaml lists what this image accepts", tok)

    def _removed(self, tok: Token, flag: Flag, value: str | None) -> None:
        gone = flag.removed
        assert gone is not None
        shown = tok.text if value is None else f"{tok.text} {value}"
        fix = (f"replace `{shown}` with `{gone.replacement}" + (f" {value}`" if value is not None
               and " " not in gone.replacement else "`")) if gone.replacement else f"remove `{tok.text}`"
        self._add("FLAG003", "error", f"`{tok.text}` ({where(tok)}) was removed from {self.table.id} in {gone.since}; "
                  f"the engine refuses to start with it", fix, tok)

    def _stray(self, toks: list[Token], i: int) -> None:
        tok = toks[i]
        prev = toks[i - 1].text if i else None
        flag = self.table.lookup(self._split(prev)[0]) if prev and self._is_flag_like(prev) else None
        if flag is not None and flag.nargs == "0":
            self._add("FLAG004", "error", f"`{flag.name}` is a switch and takes no value, but `{tok.text}` follows "
                      f"it ({where(tok)})", f"remove `{tok.text}` after `{prev}`", tok)
            return
        self._add("FLAG001", "error", f"stray argument `{tok.text}` ({where(tok)}): {self.table.id} takes "
                  f"{self.table.syntax.positionals or 'no'} positional argument(s)",
                  f"remove `{tok.text}` or put the flag it belongs to before it", tok)

    def _add(self, rule: str, severity: Severity, message: str, fix: str, tok: Token) -> None:
        self.issues.append(Issue(rule, severity, message, fix, tok))


def _member(value: str, choices: tuple[str, ...], case_insensitive: bool) -> bool:
    if case_insensitive:
        return value.lower() in {c.lower() for c in choices}
    return value in choices


def check_env(table: FlagTable, engine: EngineSpec) -> list[tuple[str, Severity, str, str, str]]:
    """(rule, severity, message, fix, origin) for env vars the table knows something about."""
    out: list[tuple[str, Severity, str, str, str]] = []
    known = table.env_names
    for var in engine.env:
        spec = known.get(var.name)
        if spec is not None and spec.choices and not _member(var.value, spec.choices, True):
            out.append(("FLAG002", "error", f"env {var.name}={var.value} (from {var.origin}) is not a value "
                        f"{table.id} accepts", f"use one of: {listing(spec.choices)}", var.origin))
        elif var.name not in known and var.name.startswith(table.env_prefixes) and table.env_prefixes:
            near = closest(var.name, list(known))
            out.append(("FLAG001", "warning", f"env {var.name} (from {var.origin}) is not read by {table.id}: the "
                        f"engine ignores it" + (f"; did you mean {near}?" if near else ""),
                        f"rename it to {near}" if near else f"remove {var.name}", var.origin))
    return out
