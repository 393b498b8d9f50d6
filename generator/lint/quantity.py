"""Kubernetes resource quantities (`500m`, `24Gi`, `1e3`, `24300`) as exact Decimals.

The grammar is apimachinery's `resource.ParseQuantity`: a signed decimal number, then one suffix,
binary (Ki..Ei), decimal SI (n, u, m, k, M, G, T, P, E) or an exponent (e3, E-2).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE]?)$")
MIB = Decimal(2**20)


def parse_quantity(value: str | int | float) -> Decimal:
    """The quantity's value in base units (cores, bytes); raises ValueError when it is not a quantity."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a quantity")
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    match = _QUANTITY.match(str(value).strip())
    if not match:
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    number, suffix = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise ValueError(f"{value!r} is not a Kubernetes quantity") from exc
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return base * (Decimal(10) ** int(suffix[1:]))
    return base * _DECIMAL[suffix]


def is_auto(value: object) -> bool:
    """Olares' `"-1"` sentinel: computed by app-service at install time, skipped by lint."""
    return str(value).strip() == "-1"


def to_mib(value: str | int) -> Decimal:
    return parse_quantity(value) / MIB
