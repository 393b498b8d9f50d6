"""Which catalog a command uses (generator/core/locate.py decides), said on stderr; writes into the
embedded catalog refused."""


import sys
from pathlib import Path

from generator.core import UsageError
from generator.core import CatalogChoice, choose_catalog


class _State:
    """What the running command may write; `main` resets it, the error branch reads it. `lock`: the catalog-wide
    writer lock the command holds (core/lock.py), released when `main` ends."""

    writes = False
    lock: int | None = None


STATE = _State()


def reset() -> None:
    STATE.writes = False
    release()


def release() -> None:
    """Give back the catalog lock of the command that ended (if it took one)."""
    from generator.core import lock

    held, STATE.lock = STATE.lock, None
    lock.release(held)


def writing() -> bool:
    """True when the running command writes files (only then does an input error say nothing was written)."""
    return STATE.writes


def use_catalog(option: Path | None, *, command: str, writes: bool, into_catalog: bool = True,
                quiet: bool = False) -> Path:
    """The catalog folder for `command`; one stderr line says which (none with --json, `quiet`).

    `writes`: the command writes files this run; `into_catalog`: those files are the catalog's or beside it
    (charts/, CHANGELOG.md), so the read-only embedded catalog is refused."""
    STATE.writes = writes
    choice: CatalogChoice = choose_catalog(option)
    if writes and into_catalog and choice.read_only:
        raise UsageError(
            f"`catalog {command}` would write into {choice.root}, the catalog installed with the tool, which is "
            "read-only. Start a store of your own with `catalog init DIR` and run the command inside DIR "
            "(or pass --catalog DIR, or set CATALOG_DIR)")
    if not quiet:
        print(f"catalog: {choice.describe()}", file=sys.stderr)
    if writes and into_catalog and STATE.lock is None:
        from generator.core import lock

        if command in lock.WRITERS:  # before anything is read: a second writer starts from what the first left
            STATE.lock = lock.hold(choice.root, command, on_wait=lambda line: print(line, file=sys.stderr))
    return choice.root
