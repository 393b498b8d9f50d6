"""Entry point: the single place where errors become messages and exit codes.

Exit codes: 0 success; 1 findings (invalid catalog, failed rules, stale charts, regressions);
2 usage or internal error.
"""

from __future__ import annotations

import sys

from .cli_app import app
from .errors import CatalogError, UsageError

# Each module registers its commands on `app`; heavy libraries are imported inside the commands.
from .commands import bump, check, explain, listing, prune, publish, render, smoke  # noqa: F401,E402


def main(argv: list[str] | None = None) -> int:
    try:
        code = app(args=argv, standalone_mode=False)  # returns typer.Exit's code in this mode
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CatalogError as exc:
        print(str(exc), file=sys.stderr)
        print(f"{len(exc.problems)} problem(s); nothing was written.", file=sys.stderr)
        return 1
    except SystemExit as exc:  # typer.Exit inside commands
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # click's own usage errors and anything unexpected
        import typer  # typer >= 0.20 vendors click (typer._click): there is no `click` module to import

        if isinstance(exc, typer.Exit):
            return exc.exit_code
        if isinstance(exc, typer.Abort):
            return 1
        if isinstance(exc, typer.TyperException) and hasattr(exc, "show"):  # click's UsageError & co.
            exc.show()
            return 2
        import traceback

        traceback.print_exc(file=sys.stderr)
        print(f"internal error: {type(exc).__name__}: {exc} (a bug in catalog: please report it)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
