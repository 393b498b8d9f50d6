"""Values made on first use and kept: the market server's chart packages and plots.

`catalog serve` once made every Helm package and every plot before it answered anything (about 30 s for 34
apps on a loaded 2-core machine); a device downloads one package and a person opens one page, so each is made
when first asked for and kept for the life of the snapshot. `catalog site` and `publish --to market` read every
value, which makes them all, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping

Maker = Callable[[], bytes]


class Lazy(Mapping[str, bytes]):
    """A read-only mapping whose values are made by their maker on first read, once (a lock: two requests for
    the same value make it once), and kept. Its keys are known up front, so `in`, `len` and iteration make
    nothing."""

    def __init__(self, makers: Mapping[str, Maker] | None = None, made: Mapping[str, bytes] | None = None):
        self._makers: dict[str, Maker] = dict(makers or {})
        self._made: dict[str, bytes] = dict(made or {})
        self._lock = threading.Lock()

    def __getitem__(self, key: str) -> bytes:
        got = self._made.get(key)
        if got is not None:
            return got
        maker = self._makers[key]  # KeyError for an unknown key, as a dict
        with self._lock:
            got = self._made.get(key)
            if got is None:
                got = self._made[key] = maker()
        return got

    def __contains__(self, key: object) -> bool:
        return key in self._made or key in self._makers

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._made.keys() | self._makers.keys()))

    def __len__(self) -> int:
        return len(self._made.keys() | self._makers.keys())

    def ready(self, key: str) -> bool:
        """Made already (reading it costs nothing)."""
        return key in self._made


__all__ = ["Lazy", "Maker"]
