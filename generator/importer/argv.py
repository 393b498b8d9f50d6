"""An engine's argv back into catalog fields: the inverse of the engine modules' argv builders.

Each family reads its own argv (its `Launcher.read`, generator/engines/<family>.py, with the helpers of
generator/engines/readback.py); this module picks the family's reader and its spelling (the stack's flag table when
the catalog has one, else the family's `Syntax`).
"""

from __future__ import annotations

from generator.engines import Family
from generator.engines.family import family
from generator.engines import Mapped, Spelling, Syntax, Token, is_flag
from generator.flags import FlagTable
from generator.schema import Stack


def spelling_of(name: str, table: FlagTable | None) -> Spelling:
    """Family `name`'s flag spellings: the stack's flag table where there is one, else the family's `Syntax`."""
    launcher = family(Family(name)).launcher
    return Spelling(launcher.syntax if launcher is not None else Syntax(), table)


def map_argv(name: str, tokens: list[Token], table: FlagTable | None, stack: Stack | None) -> Mapped:
    launcher = family(Family(name)).launcher
    assert launcher is not None, f"family {name} has no Launcher: import never recognises its container"
    return launcher.read(tokens, spelling_of(name, table), stack)


__all__ = ["Mapped", "Spelling", "is_flag", "map_argv", "spelling_of"]
