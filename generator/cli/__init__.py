"""Entry point: the single place where errors become messages and exit codes.

Exit codes: 0 success; 1 findings (invalid catalog, failed rules, stale charts, regressions);
2 usage or internal error.
"""

import sys

from generator.cli import process  # noqa: F401  (first: process settings before pydantic is imported)
from generator.cli import discovery
from generator.cli.app import app
from generator.core import CatalogError, FindingsError, InputError, UsageError, translate_os_error
from generator.core import journal
from generator.core.redact import redact
from generator.core import printable

# Each module registers its commands on `app`; heavy libraries are imported inside the commands.
from generator.cli import bump
from generator.cli import calibrate
from generator.cli import check
from generator.cli import doctor
from generator.cli import explain
from generator.cli import import_
from generator.cli import init
from generator.cli import listing
from generator.cli import new
from generator.cli import preset
from generator.cli import prune
from generator.cli import publish
from generator.cli import render
from generator.cli import serve
from generator.cli import site
from generator.cli import smoke
from generator.cli import sync

# The command modules, imported for their registration on `app` (the package's public names are its face, below).
COMMANDS = (bump, calibrate, check, doctor, explain, import_, init, listing, new, preset, prune, publish, render, serve,
            site, smoke, sync)


def main(argv: list[str] | None = None) -> int:
    discovery.reset()
    try:
        return _dispatch(argv)
    finally:
        discovery.release()  # the catalog-wide writer lock, if the command took one (core/lock.py)


def _dispatch(argv: list[str] | None) -> int:
    import typer

    try:
        # a command that fails (an exception other than its exit or its findings) leaves every file it wrote as it
        # was (core/fileio.py `journal`)
        with journal(keep=(SystemExit, typer.Exit, FindingsError)):
            code = app(args=argv, prog_name="catalog", standalone_mode=False)  # typer.Exit's code in this mode
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    except UsageError as exc:
        _say(f"error: {exc}")
        return exc.exit_code
    except InputError as exc:
        _say(str(exc))
        written = "; nothing was written" if discovery.writing() else ""
        causes = sum(1 for p in exc.problems if not p.follows)  # a follow-on line is no problem of its own
        print(f"{causes} problem(s){written}.", file=sys.stderr)
        return exc.exit_code
    except CatalogError as exc:  # findings, and the environment failing (a path, a tool, a module, a server)
        _say(f"error: {exc}")
        return exc.exit_code
    except OSError as exc:  # an OS error no adapter translated: still a plain message naming the path
        _say(_os_error(exc))
        return 2
    except SystemExit as exc:  # typer.Exit inside commands
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # click's own usage errors and anything unexpected
        if isinstance(exc, typer.Exit):
            return exc.exit_code
        if isinstance(exc, typer.Abort):
            return 1
        if isinstance(exc, typer.TyperException) and hasattr(exc, "show"):  # click's UsageError & co.
            exc.show()
            return 2
        import traceback

        _say(traceback.format_exc().rstrip("\n"))
        _say(f"internal error: {type(exc).__name__}: {exc} (a bug in catalog: please report it)")
        return 2
    return 0


def entry() -> int:
    """The `catalog` process (the console script, `python -m generator.cli`): `main` with the process's exit
    settings (generator/cli/process.py)."""
    code = main()
    process.before_exit()
    return code


def _os_error(exc: OSError) -> str:
    if exc.filename is None:  # a failed write() names no file (`error: : File too large` said nothing)
        return (f"error: {exc.strerror or type(exc).__name__}; the file was not named (a bug in catalog: please "
                "report it); nothing of this command was kept")
    return f"error: {translate_os_error(exc)}"


def _say(message: str) -> None:
    """Every error message leaves through here: credentials masked (core/redact.py), control characters
    and escape sequences shown as text (core/terminal.py); one line per problem."""
    print(printable(redact(message), newlines=True), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(entry())


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["entry", "main"]
