"""Values made on first use and kept: the market server's chart packages and plots.

`catalog serve` once made every Helm package and every plot before it answered anything (about 30 s for 34
apps on a loaded 2-core machine); a device downloads one package and a person opens one page, so each is made
when first asked for and kept for the life of the snapshot. `catalog site` and `publish --to market` read every
value, which makes them all, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar, cast

Maker = Callable[[], bytes]
T = TypeVar("T")


class Once(Generic[T]):
    """One value made by its maker on first call, once (a lock: two threads asking at once make it once), and
    kept: the market server's store page, which the first answers to devices do not wait for."""

    def __init__(self, make: Callable[[], T]):
        self._make: Callable[[], T] | None = make
        self._value: T | None = None
        self._lock = threading.Lock()

    def ready(self) -> bool:
        """Made already (calling costs nothing)."""
        return self._make is None

    def __call__(self) -> T:
        if self._make is not None:
            with self._lock:
                if self._make is not None:
                    self._value = self._make()
                    self._make = None  # the maker (and what it holds) is released once the value is kept
        return cast(T, self._value)  # _make is None only once _value is made


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


__all__ = ["Lazy", "Maker", "Once"]
