"""Fixtures of the adversarial tests: `small_catalog` (tests/support/adversarial.py), found by pytest here."""

from support.adversarial import small_catalog

__all__ = ["small_catalog"]
