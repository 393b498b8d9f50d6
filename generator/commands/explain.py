"""`catalog explain` (not implemented yet)."""
